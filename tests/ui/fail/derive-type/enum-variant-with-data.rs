//! A variant carrying data.
use qail::QailType;

#[derive(QailType)]
#[qail(type_name = "booking_status", rename_all = "snake_case")]
enum Status {
    Pending,
    Confirmed(u32),
    Cancelled,
}

fn main() {}
