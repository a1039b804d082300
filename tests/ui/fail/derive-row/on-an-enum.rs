//! QailRow on an enum.
use qail::QailRow;

#[derive(QailRow)]
enum Mood {
    Happy,
}

fn main() {}
