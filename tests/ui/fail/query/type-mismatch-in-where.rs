//! Comparing a text column with a number.
use qail::qail;

fn main() {
    let _q = qail!("SELECT id FROM harbors WHERE name = 42");
}
