//! Braces around something that is not a variable name.
use qail::qail;

fn main() {
    let _q = qail!("SELECT name FROM harbors WHERE id = {a + b}");
}
