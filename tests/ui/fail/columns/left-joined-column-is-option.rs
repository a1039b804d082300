//! A LEFT JOINed column is nullable even when NOT NULL in its table.
use qail::qail;

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

fn main() {
    let q = qail!("SELECT c.name, o.name AS operator FROM odyssey_connections c LEFT JOIN operators o ON o.id = c.operator_id");
    if false {
        let r = row(&q);
        let _: String = r.operator;
    }
}
