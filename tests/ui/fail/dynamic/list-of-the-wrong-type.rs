//! `IN {list}` binds an array of the column's type.
use qail::qail;

fn main() {
    let ids: Vec<i64> = vec![1, 2];
    let _q = qail!("SELECT name FROM harbors WHERE id IN {ids}");
}
