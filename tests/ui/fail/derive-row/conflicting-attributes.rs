//! default and flatten on one field.
use qail::QailRow;

#[derive(QailRow)]
struct Harbor {
    #[qail(default, flatten)]
    name: String,
}

fn main() {}
