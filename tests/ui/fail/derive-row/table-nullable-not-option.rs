//! A nullable column into a non-Option field.
use qail::QailRow;

#[derive(QailRow)]
#[qail(table = "harbors")]
struct Harbor {
    id: qail::uuid::Uuid,
    code: String,
}

fn main() {}
