//! RETURNING gives rows.
use qail::qail;

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

fn main() {
    let id = qail::uuid::Uuid::nil();
    let q = qail!("UPDATE harbors SET name = $1 WHERE id = $2 RETURNING id, name, timezone", "Pireas", id);
    if false {
        let r = row(&q);
        let _: qail::uuid::Uuid = r.id;
        let _: String = r.name;
        let _: Option<String> = r.timezone;
    }
}
