//! Two statements in one query.
use qail::qail;

fn main() {
    let _q = qail!("DELETE FROM harbors; DELETE FROM operators");
}
