//! JSON documents built from rows, read into generated structs.
use qail::qail;

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

fn main() {
    let q = qail!(
        "SELECT h.id,
                COALESCE(json_agg(json_build_object('id', c.id, 'name', c.name,
                        'minutes', c.duration_minutes) ORDER BY c.name), '[]') AS lines,
                jsonb_agg(jsonb_build_object('name', c.name)) FILTER (WHERE c.is_enabled) AS enabled,
                row_to_json(ROW(h.id, h.latitude)) AS pair,
                (SELECT json_agg(x) FROM (SELECT o.id, o.name, o.website FROM operators o) x) AS ops
         FROM harbors h JOIN odyssey_connections c ON c.origin_harbor_id = h.id
         GROUP BY h.id"
    );
    if false {
        let r = row(&q);
        let _: &Vec<_> = &r.lines;
        let _: &String = &r.lines[0].name;
        let _: Option<i32> = r.lines[0].minutes;
        let _: &Option<Vec<_>> = &r.enabled;
        let _: qail::uuid::Uuid = r.pair.f1;
        let _: Option<f64> = r.pair.f2;
        let ops = r.ops.as_ref().expect("an Option: json_agg over no rows is NULL");
        let _: Option<&String> = ops[0].website.as_ref();
    }
}
