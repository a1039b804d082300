//! No SQL at all.
use qail::qail;

fn main() {
    let _q = qail!("");
}
