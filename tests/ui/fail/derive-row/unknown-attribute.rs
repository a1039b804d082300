//! A misspelled attribute.
use qail::QailRow;

#[derive(QailRow)]
struct Harbor {
    #[qail(renam = "Name")]
    name: String,
}

fn main() {}
