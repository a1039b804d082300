//! An expression without an alias.
use qail::qail;

fn main() {
    let _q = qail!("SELECT 1 + 1");
}
