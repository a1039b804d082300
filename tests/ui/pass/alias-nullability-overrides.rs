//! AS "x!" and AS "x?" override nullability.
use qail::qail;

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

fn main() {
    let q = qail!(r#"SELECT o.name AS "origin!", c.name AS "name?" FROM odyssey_connections c LEFT JOIN harbors o ON o.id = c.origin_harbor_id"#);
    if false {
        let r = row(&q);
        let _: String = r.origin;
        let _: Option<String> = r.name;
    }
}
