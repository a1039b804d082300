//! A field whose type does not fit its column.
use qail::QailRow;

#[derive(QailRow)]
#[qail(table = "harbors")]
struct Harbor {
    id: qail::uuid::Uuid,
    name: i64,
}

fn main() {}
