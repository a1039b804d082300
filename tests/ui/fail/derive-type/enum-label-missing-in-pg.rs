//! The Rust enum has a variant the PostgreSQL enum lacks.
use qail::QailType;

#[derive(QailType)]
#[qail(type_name = "vessel_kind", rename_all = "snake_case")]
enum VesselKind {
    Ferry,
    Catamaran,
    Hydrofoil,
    Submarine,
}

fn main() {}
