//! A JSON value that can be null read as if it could not.
use qail::qail;

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

fn main() {
    let q = qail!(
        "SELECT h.id, COALESCE((SELECT json_agg(json_build_object('minutes', c.duration_minutes))
                FROM odyssey_connections c WHERE c.origin_harbor_id = h.id), '[]') AS connections
         FROM harbors h"
    );
    if false {
        let r = row(&q);
        let _: i32 = r.connections[0].minutes;
    }
}
