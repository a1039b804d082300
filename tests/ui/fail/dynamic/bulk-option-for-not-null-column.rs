//! A bulk insert sends an `Option` field to a NOT NULL column.
use qail::qail;

fn main() {
    let rows: Vec<(i64, Option<i32>)> = vec![(1, None)];
    let _q = qail!("INSERT INTO sailings (id, seats_left) VALUES {rows}");
}
