//! A field of the wrong type for its column.
use qail::qail;

fn main() {
    struct Harbor { id: qail::uuid::Uuid, name: i32 }
    let _q = qail!(Harbor => "SELECT id, name FROM harbors");
}
