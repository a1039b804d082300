//! Arrays of rows, nullable aggregates, nullable elements and records inside records.
use qail::qail;

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

fn main() {
    let q = qail!(
        "SELECT h.id,
                COALESCE(array_agg(ROW(c.id, c.name) ORDER BY c.name), '{}') AS all_lines,
                array_agg(ROW(c.id)) FILTER (WHERE c.is_enabled) AS enabled,
                array_agg(o) AS operators,
                ARRAY(SELECT x FROM (SELECT k.id, k.address FROM harbor_contacts k
                       WHERE k.harbor_id = h.id) x) AS contacts
         FROM harbors h JOIN odyssey_connections c ON c.origin_harbor_id = h.id
         LEFT JOIN operators o ON o.id = c.operator_id
         GROUP BY h.id"
    );
    if false {
        let r = row(&q);
        let _: &Vec<_> = &r.all_lines;
        let _: &String = &r.all_lines[0].name;
        let _: &Option<Vec<_>> = &r.enabled;
        let first = r.operators[0].as_ref().map(|o| &o.name);
        let _: Option<&String> = first;
        let _: Option<&String> = r.contacts[0].address.as_ref().and_then(|a| a.city.as_ref());
    }
}
