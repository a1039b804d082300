//! A table that is not in the snapshot.
use qail::QailRow;

#[derive(QailRow)]
#[qail(table = "harbours")]
struct Harbor {
    id: qail::uuid::Uuid,
}

fn main() {}
