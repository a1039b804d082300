//! An `Option` captured as the new value of a NOT NULL column in UPDATE … SET.
use qail::qail;

fn main() {
    let seats: Option<i32> = None;
    let _q = qail!("UPDATE sailings SET seats_left = {seats} WHERE id = 1");
}
