//! A keyword where an expression belongs.
use qail::qail;

fn main() {
    let _q = qail!("SELECT id FROM WHERE name = 1");
}
