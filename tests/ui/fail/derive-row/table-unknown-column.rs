//! A field that is no column of the table.
use qail::QailRow;

#[derive(QailRow)]
#[qail(table = "harbors")]
struct Harbor {
    id: qail::uuid::Uuid,
    nme: String,
}

fn main() {}
