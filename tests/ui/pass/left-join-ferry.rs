//! The ferry query: Option exactly on the LEFT JOINed columns.
use qail::qail;

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

fn main() {
    let q = qail!(
        "SELECT c.id, c.name, o.name AS origin, d.name AS destination, op.name AS operator, op.rating
         FROM odyssey_connections c
         LEFT JOIN harbors o ON o.id = c.origin_harbor_id
         LEFT JOIN harbors d ON d.id = c.destination_harbor_id
         LEFT JOIN operators op ON op.id = c.operator_id
         WHERE c.is_enabled"
    );
    if false {
        let r = row(&q);
        let _: qail::uuid::Uuid = r.id;
        let _: String = r.name;
        let _: Option<String> = r.origin;
        let _: Option<String> = r.destination;
        let _: Option<String> = r.operator;
        let _: Option<qail::rust_decimal::Decimal> = r.rating;
    }
}
