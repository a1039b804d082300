//! Nested results built as JSON by the server (`json_agg`, `jsonb_agg`,
//! `json_build_object`, `to_jsonb`, `row_to_json`) decoded with serde into the structs
//! `qail!` generates, and whole rows aggregated in binary (`array_agg(t)`).

use qail::qail;
use qail::uuid::Uuid;

use crate::nested::seed;
use crate::{FERRY_DDL, connect_in};

#[tokio::test]
async fn json_agg_of_derived_rows_null_and_coalesced_empty_children() {
    let mut conn = connect_in("json_agg", FERRY_DDL).await;
    let (full, empty) = seed(&mut conn, 30).await;
    let rows = qail!(
        "SELECT h.id,
                (SELECT json_agg(x ORDER BY x.name) FROM (SELECT c.id, c.name, c.duration_minutes,
                        c.is_enabled FROM odyssey_connections c WHERE c.origin_harbor_id = h.id) x)
                    AS connections,
                (SELECT COALESCE(jsonb_agg(x.name), '[]') FROM odyssey_connections x
                        WHERE x.origin_harbor_id = h.id) AS names
         FROM harbors h ORDER BY h.name DESC"
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(rows[0].id, full);
    let connections: &Vec<_> = rows[0].connections.as_ref().expect("30 children");
    assert_eq!(connections.len(), 30);
    assert_eq!(connections[0].id, Uuid::from_u128(101));
    assert_eq!(connections[0].name, "line 00001");
    assert_eq!(connections[0].duration_minutes, Some(1));
    assert_eq!(
        connections[2].duration_minutes, None,
        "a NULL field inside a child"
    );
    assert!(connections[1].is_enabled && !connections[0].is_enabled);
    assert_eq!(rows[1].id, empty);
    assert!(
        rows[1].connections.is_none(),
        "json_agg over no rows is NULL"
    );
    // An array of scalars has no shape: it stays a JSON value.
    assert_eq!(rows[1].names, qail::serde_json::json!([]));
}

#[tokio::test]
async fn json_build_object_aggregated_with_filter_and_coalesce() {
    let mut conn = connect_in("json_object", FERRY_DDL).await;
    let (full, empty) = seed(&mut conn, 12).await;
    let rows = qail!(
        "SELECT h.id,
                COALESCE(json_agg(json_build_object('id', c.id, 'name', c.name,
                        'minutes', c.duration_minutes) ORDER BY c.name)
                    FILTER (WHERE c.id IS NOT NULL), '[]') AS connections,
                jsonb_agg(jsonb_build_object('name', c.name)) FILTER (WHERE c.is_enabled) AS enabled
         FROM harbors h LEFT JOIN odyssey_connections c ON c.origin_harbor_id = h.id
         GROUP BY h.id ORDER BY h.name DESC"
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(rows[0].id, full);
    let c: &Vec<_> = &rows[0].connections;
    assert_eq!(c.len(), 12);
    // Note: the LEFT JOIN makes every value of `c` nullable.
    assert_eq!(c[3].name.as_deref(), Some("line 00004"));
    assert_eq!(c[3].minutes, Some(4));
    assert_eq!(c[5].minutes, None, "a JSON null inside a child");
    let enabled = rows[0].enabled.as_ref().expect("six enabled lines");
    assert_eq!(enabled.len(), 6);
    assert_eq!(rows[1].id, empty);
    assert!(rows[1].connections.is_empty(), "COALESCE(…, '[]'): empty");
    assert!(rows[1].enabled.is_none(), "FILTER left no input: NULL");
}

#[tokio::test]
async fn json_two_levels_deep() {
    let mut conn = connect_in("json_two", FERRY_DDL).await;
    seed(&mut conn, 20).await;
    let rows = qail!(
        "SELECT h.name,
                (SELECT jsonb_agg(jsonb_build_object('operator', o.name, 'lines',
                        (SELECT json_agg(json_build_object('name', c.name,
                                'minutes', c.duration_minutes) ORDER BY c.name)
                         FROM odyssey_connections c
                         WHERE c.operator_id = o.id AND c.origin_harbor_id = h.id)))
                 FROM operators o) AS operators
         FROM harbors h ORDER BY h.name"
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    let naxos = rows[0].operators.as_ref().expect("one operator");
    assert_eq!(naxos[0].operator, "Blue Star");
    assert!(naxos[0].lines.is_none(), "Naxos: an operator without lines");
    let piraeus = rows[1].operators.as_ref().expect("one operator");
    let lines = piraeus[0].lines.as_ref().expect("lines");
    assert_eq!(lines.len(), 16, "20 lines, every fifth without an operator");
    assert_eq!(lines[0].name, "line 00001");
    assert_eq!(lines[2].minutes, None);
    assert_eq!(lines[3].minutes, Some(4));
}

#[tokio::test]
async fn json_ten_thousand_children() {
    let mut conn = connect_in("json_many", FERRY_DDL).await;
    let (full, _) = seed(&mut conn, 10_000).await;
    let row = qail!(
        "SELECT h.id, json_agg(json_build_object('id', c.id, 'name', c.name,
                'enabled', c.is_enabled) ORDER BY c.name) AS connections
         FROM harbors h JOIN odyssey_connections c ON c.origin_harbor_id = h.id
         WHERE h.id = $1 GROUP BY h.id",
        full
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(row.connections.len(), 10_000);
    assert_eq!(row.connections[9_999].name, "line 10000");
    assert_eq!(row.connections[9_999].id, Uuid::from_u128(10_100));
    assert_eq!(row.connections.iter().filter(|c| c.enabled).count(), 5_000);
}

#[tokio::test]
async fn single_objects_anonymous_rows_and_float_edge_values() {
    let mut conn = connect_in("json_single", FERRY_DDL).await;
    let (full, _) = seed(&mut conn, 2).await;
    conn.batch_execute(&format!(
        "UPDATE harbors SET latitude = 'NaN', longitude = '-Infinity', code = 'PIR'
         WHERE id = '{full}'"
    ))
    .await
    .unwrap();
    let rows = qail!(
        "SELECT row_to_json(ROW(h.id, h.code)) AS pair,
                to_jsonb(x) AS place,
                jsonb_build_object('lat', h.latitude, 'lon', h.longitude,
                        'where', json_build_object('country', h.country)) AS position
         FROM harbors h, LATERAL (SELECT h.name, h.timezone) x ORDER BY h.name DESC"
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    // Note: PostgreSQL names the fields of ROW(…) f1, f2, … in JSON.
    assert_eq!(rows[0].pair.f1, full);
    assert_eq!(rows[0].pair.f2.as_deref(), Some("PIR"));
    assert_eq!(rows[1].pair.f2, None);
    assert_eq!(rows[0].place.name, "Piraeus");
    assert_eq!(rows[0].place.timezone, None);
    let p = &rows[0].position;
    assert!(
        p.lat.expect("NaN is not NULL").is_nan(),
        "\"NaN\" read back"
    );
    assert_eq!(p.lon, Some(f64::NEG_INFINITY));
    assert_eq!(p.r#where.country, "GR");
    assert_eq!(rows[1].position.lat, None);
}

#[tokio::test]
async fn whole_rows_aggregated_in_binary() {
    let mut conn = connect_in("whole_rows", FERRY_DDL).await;
    let (full, _) = seed(&mut conn, 7).await;
    conn.batch_execute(
        "UPDATE odyssey_connections SET distance_km = 12.50, tags = '{night,cars}'
         WHERE name = 'line 00002'",
    )
    .await
    .unwrap();
    let row = qail!(
        "SELECT h.id, array_agg(c ORDER BY c.name) AS connections
         FROM harbors h JOIN odyssey_connections c ON c.origin_harbor_id = h.id
         WHERE h.id = $1 GROUP BY h.id",
        full
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    let c: &Vec<_> = &row.connections;
    assert_eq!(c.len(), 7);
    assert_eq!(c[1].name, "line 00002");
    assert_eq!(c[1].origin_harbor_id, full);
    assert_eq!(
        c[1].distance_km,
        Some(qail::rust_decimal::Decimal::new(1250, 2))
    );
    assert_eq!(c[1].tags, ["night", "cars"]);
    assert_eq!(c[2].duration_minutes, None);
    assert!(c[0].updated_at.is_none() && c[0].created_at.timestamp() > 0);
}

#[tokio::test]
async fn json_elements_of_an_outer_join_are_options() {
    let mut conn = connect_in("json_outer", FERRY_DDL).await;
    let (full, _) = seed(&mut conn, 10).await;
    let row = qail!(
        "SELECT h.id, json_agg(x ORDER BY c.name) AS operators
         FROM harbors h JOIN odyssey_connections c ON c.origin_harbor_id = h.id
         LEFT JOIN LATERAL (SELECT o.name, o.website FROM operators o
                            WHERE o.id = c.operator_id) x ON true
         WHERE h.id = $1 GROUP BY h.id",
        full
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    let operators: &Vec<Option<_>> = &row.operators;
    assert_eq!(operators.len(), 10);
    let first = operators[0].as_ref().expect("line 1 has an operator");
    assert_eq!(first.name, "Blue Star");
    assert_eq!(first.website, None);
    assert!(
        operators[4].is_none(),
        "line 5 has no operator: a JSON null element"
    );
}

#[tokio::test]
async fn numerics_in_json_keep_every_digit() {
    let mut conn = connect_in("json_numeric", FERRY_DDL).await;
    let (full, _) = seed(&mut conn, 3).await;
    conn.batch_execute(
        "UPDATE odyssey_connections SET distance_km = 123456.78 WHERE name = 'line 00001';
         UPDATE odyssey_connections SET distance_km = 0.10 WHERE name = 'line 00002'",
    )
    .await
    .unwrap();
    let row = qail!(
        "SELECT json_agg(json_build_object('name', c.name, 'km', c.distance_km,
                        'exact', 1234567890123456789.123456789::numeric) ORDER BY c.name) AS lines
         FROM odyssey_connections c WHERE c.origin_harbor_id = $1",
        full
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    let lines = row.lines.expect("three lines");
    use qail::rust_decimal::Decimal;
    assert_eq!(lines[0].km, Some(Decimal::new(12_345_678, 2)));
    assert_eq!(
        lines[1].km.map(|d| d.to_string()).as_deref(),
        Some("0.10"),
        "the scale as PostgreSQL wrote it"
    );
    assert_eq!(lines[2].km, None);
    assert_eq!(
        lines[0].exact.to_string(),
        "1234567890123456789.123456789",
        "28 digits: more than an f64 holds"
    );
    let e = qail!("SELECT json_build_object('v', 'NaN'::numeric) AS v")
        .fetch_one(&mut conn)
        .await
        .expect_err("NaN has no Decimal");
    assert!(
        e.to_string()
            .contains("numeric \"NaN\" has no rust_decimal::Decimal value"),
        "{e}"
    );
}
