//! An i64 for an int2 parameter.
use qail::qail;

fn main() {
    let capacity = 300i64;
    let _q = qail!("SELECT id FROM vessels WHERE capacity > $1", capacity);
}
