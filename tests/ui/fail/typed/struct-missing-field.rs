//! The struct has no field for a selected column.
use qail::qail;

fn main() {
    struct Harbor { id: qail::uuid::Uuid }
    let _q = qail!(Harbor => "SELECT id, name FROM harbors");
}
