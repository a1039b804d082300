//! transparent needs exactly one field.
use qail::QailType;

#[derive(QailType)]
#[qail(transparent)]
struct Point(f64, f64);

fn main() {}
