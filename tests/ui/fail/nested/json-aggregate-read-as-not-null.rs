//! A JSON aggregate that can be NULL (no rows) read as if it could not.
use qail::qail;

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

fn main() {
    let q = qail!(
        "SELECT h.id, (SELECT json_agg(json_build_object('id', c.id))
                FROM odyssey_connections c WHERE c.origin_harbor_id = h.id) AS connections
         FROM harbors h"
    );
    if false {
        let r = row(&q);
        let _: Vec<_> = r.connections;
    }
}
