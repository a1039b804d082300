//! An array of the wrong element type for = ANY($1).
use qail::qail;

fn main() {
    let ids: Vec<i64> = vec![1, 2];
    let _q = qail!("SELECT name FROM harbors WHERE id = ANY($1)", ids);
}
