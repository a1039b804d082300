//! A key read from a JSON object that the object does not have.
use qail::qail;

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

fn main() {
    let q = qail!(
        "SELECT h.id, (SELECT json_agg(json_build_object('id', c.id, 'name', c.name))
                FROM odyssey_connections c WHERE c.origin_harbor_id = h.id) AS connections
         FROM harbors h"
    );
    if false {
        let r = row(&q);
        let _ = &r.connections.unwrap()[0].duration_minutes;
    }
}
