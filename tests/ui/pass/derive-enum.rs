//! QailType enums: rename_all, per-variant rename, a schema-qualified type.
use qail::QailType;

#[derive(QailType)]
#[qail(type_name = "booking_status", rename_all = "lowercase")]
pub enum Status {
    Pending,
    Confirmed,
    #[qail(rename = "cancelled")]
    Canceled,
}

#[derive(QailType)]
#[qail(type_name = "billing.currency", rename_all = "UPPERCASE")]
pub enum Currency {
    Eur,
    Usd,
    Gbp,
}

fn sendable<T: qail::Encode + for<'r> qail::Decode<'r>>() {}

fn main() {
    sendable::<Status>();
    sendable::<Currency>();
}
