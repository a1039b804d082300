//! The struct has a field the query does not select.
use qail::qail;

fn main() {
    struct Harbor { id: qail::uuid::Uuid, name: String }
    let _q = qail!(Harbor => "SELECT id FROM harbors");
}
