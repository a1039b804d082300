//! A row type for an UPDATE without RETURNING.
use qail::qail;

fn main() {
    struct Harbor { id: qail::uuid::Uuid }
    let _q = qail!(Harbor => "UPDATE harbors SET name = 'x'");
}
