//! The PostgreSQL enum has a label the Rust enum lacks.
use qail::QailType;

#[derive(QailType)]
#[qail(type_name = "vessel_kind", rename_all = "snake_case")]
enum VesselKind {
    Ferry,
    Catamaran,
}

fn main() {}
