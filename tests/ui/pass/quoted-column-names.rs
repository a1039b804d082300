//! Quoted mixed-case names become snake_case fields.
use qail::qail;

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

fn main() {
    let q = qail!(r#"SELECT "Id", "Event", "At" FROM "Audit Log""#);
    if false {
        let r = row(&q);
        let _: i64 = r.id;
        let _: String = r.event;
        let _: qail::chrono::DateTime<qail::chrono::Utc> = r.at;
    }
}
