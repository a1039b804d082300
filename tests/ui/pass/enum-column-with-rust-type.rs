//! An enum column read into a derived enum named in the alias.
use qail::{QailType, qail};

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

#[derive(Debug, QailType)]
#[qail(type_name = "vessel_kind", rename_all = "snake_case")]
pub enum VesselKind {
    Ferry,
    Catamaran,
    Hydrofoil,
}

fn main() {
    let kind = VesselKind::Ferry;
    let q = qail!(r#"SELECT name, kind AS "kind: VesselKind" FROM vessels WHERE kind = $1"#, kind);
    if false {
        let r = row(&q);
        let _: VesselKind = r.kind;
        let _: String = r.name;
    }
}
