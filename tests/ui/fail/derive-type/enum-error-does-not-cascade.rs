//! A derive with a wrong label reports that label only: the query that reads the enum
//! still compiles against a stand-in implementation, so no second error follows.
use qail::{QailType, qail};

#[derive(QailType)]
#[qail(type_name = "vessel_kind", rename_all = "snake_case")]
enum VesselKind {
    Ferry,
    Catamaran,
    Hydrofoil,
    Submarine,
}

fn main() {
    let kind = VesselKind::Ferry;
    let _q = qail!(r#"SELECT kind AS "kind: VesselKind" FROM vessels WHERE kind = $1"#, kind);
}
