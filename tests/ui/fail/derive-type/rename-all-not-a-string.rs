//! A rename_all rule written without quotes.
use qail::QailType;

#[derive(QailType)]
#[qail(type_name = "vessel_kind", rename_all = lowercase)]
enum VesselKind {
    Ferry,
    Catamaran,
    Hydrofoil,
}

fn main() {}
