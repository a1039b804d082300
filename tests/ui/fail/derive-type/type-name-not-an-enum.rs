//! type_name naming a table, not an enum.
use qail::QailType;

#[derive(QailType)]
#[qail(type_name = "harbors")]
enum Harbor {
    A,
}

fn main() {}
