//! A column that two joined tables both have.
use qail::qail;

fn main() {
    let _q = qail!("SELECT name FROM harbors h JOIN operators o ON o.id = h.id");
}
