//! Two result columns with the same name.
use qail::qail;

fn main() {
    let _q = qail!("SELECT h.id, o.id FROM harbors h JOIN operators o ON o.name = h.name");
}
