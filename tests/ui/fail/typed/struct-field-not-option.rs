//! A nullable column into a non-Option field.
use qail::qail;

fn main() {
    struct Harbor { id: qail::uuid::Uuid, code: String }
    let _q = qail!(Harbor => "SELECT id, code FROM harbors");
}
