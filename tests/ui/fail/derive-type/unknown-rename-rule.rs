//! A rename_all rule that does not exist.
use qail::QailType;

#[derive(QailType)]
#[qail(type_name = "booking_status", rename_all = "snakecase")]
enum Status {
    Pending,
    Confirmed,
    Cancelled,
}

fn main() {}
