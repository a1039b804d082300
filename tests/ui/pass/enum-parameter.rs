//! A derived enum is sent as its PostgreSQL enum.
use qail::{QailType, qail};

#[derive(QailType)]
#[qail(type_name = "booking_status", rename_all = "snake_case")]
pub enum BookingStatus {
    Pending,
    Confirmed,
    Cancelled,
}

fn main() {
    let status = BookingStatus::Confirmed;
    let _q = qail!("SELECT id FROM bookings WHERE status = {status}");
}
