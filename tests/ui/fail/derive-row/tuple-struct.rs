//! QailRow needs named fields.
use qail::QailRow;

#[derive(QailRow)]
struct Harbor(i64, String);

fn main() {}
