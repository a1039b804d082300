//! A type name that is not in the snapshot.
use qail::QailType;

#[derive(QailType)]
#[qail(type_name = "vessel_kinds")]
enum VesselKind {
    Ferry,
}

fn main() {}
