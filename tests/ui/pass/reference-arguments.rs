//! Arguments passed by reference are not mistaken for an `Option` where NULL is refused.
use qail::{QailType, qail};

#[derive(QailType)]
#[qail(type_name = "booking_status", rename_all = "snake_case")]
pub enum BookingStatus {
    Pending,
    Confirmed,
    Cancelled,
}

fn main() {
    let country = String::from("GR");
    let _a = qail!("SELECT id FROM harbors WHERE country = $1", &country);
    let _b = qail!("SELECT id FROM harbors WHERE country = $1", &&country);
    let _c = qail!("SELECT id FROM harbors WHERE country = $1", country.as_str());
    let _d = qail!("SELECT id FROM harbors WHERE country = $1", &"GR");
    let ids: Vec<qail::uuid::Uuid> = vec![];
    let _e = qail!("SELECT name FROM harbors WHERE id = ANY($1)", &ids);
    let _f = qail!("SELECT name FROM harbors WHERE id = ANY($1)", ids.as_slice());
    let status = BookingStatus::Confirmed;
    let _g = qail!("SELECT id FROM bookings WHERE status = $1", &status);
    let by_ref = &status;
    let _h = qail!("SELECT id FROM bookings WHERE status = {by_ref}");
    let _i = qail!("SELECT id FROM customers WHERE id = $1", &7);
    let bytes: &[u8] = b"raw";
    let _j = qail!("SELECT $1::bytea AS raw", &bytes);
    let owned_bytes: Vec<u8> = bytes.to_vec();
    let _k = qail!("SELECT $1::bytea AS raw", &owned_bytes);
}
