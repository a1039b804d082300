//! A captured variable of the wrong type.
use qail::qail;

fn main() {
    let id = 7i64;
    let _q = qail!("SELECT name FROM harbors WHERE id = {id}");
}
