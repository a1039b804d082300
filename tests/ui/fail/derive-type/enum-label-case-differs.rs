//! Labels are case-sensitive: Ferry is not ferry.
use qail::QailType;

#[derive(QailType)]
#[qail(type_name = "vessel_kind")]
enum VesselKind {
    Ferry,
    Catamaran,
    Hydrofoil,
}

fn main() {}
