//! The field of the fourth column has a type its column does not decode to.
use qail::qail;

fn main() {
    struct Sailing {
        id: i64,
        seats_left: i32,
        notes: Option<String>,
        departs_at: String,
    }
    let _q = qail!(Sailing => "SELECT id, seats_left, notes, departs_at FROM sailings");
}
