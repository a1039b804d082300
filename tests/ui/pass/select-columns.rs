//! A generated row: field types follow the snapshot, Option exactly where nullable.
use qail::__private::Decoder;

fn row<D: Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

fn main() {
    let country = "GR";
    let q = qail::qail!("SELECT id, name, code, latitude FROM harbors WHERE country = $1", country);
    if false {
        let r = row(&q);
        let _: qail::uuid::Uuid = r.id;
        let _: String = r.name;
        let _: Option<String> = r.code;
        let _: Option<f64> = r.latitude;
    }
}
