//! Nested results: arrays of rows, whole rows and composite values decoded into the structs
//! `qail!` generates, in binary, field by field.

use qail::qail;
use qail::uuid::Uuid;

use crate::{FERRY_DDL, connect_in};

const CONTACTS_DDL: &str = "
    CREATE DOMAIN email_address AS text CHECK (VALUE LIKE '%@%');
    CREATE DOMAIN positive_count AS int4 NOT NULL CHECK (VALUE > 0);
    CREATE TYPE postal_address AS (street text, city text, zip varchar(10));
    CREATE TABLE harbor_contacts (
        id int4 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        harbor_id uuid NOT NULL REFERENCES harbors (id),
        email email_address, berths positive_count, address postal_address,
        previous_addresses postal_address[],
        kinds text[] NOT NULL DEFAULT '{}', scores int4[], opening tstzrange);
";

/// Two harbors, one with `n` connections (every third without a duration, every fifth
/// without an operator), the other with none; one operator.
pub(crate) async fn seed(conn: &mut qail::Connection, n: usize) -> (Uuid, Uuid) {
    let (full, empty) = (Uuid::from_u128(1), Uuid::from_u128(2));
    conn.batch_execute(&format!(
        "INSERT INTO harbors (id, name, country) VALUES ('{full}', 'Piraeus', 'GR'), ('{empty}', 'Naxos', 'GR');
         INSERT INTO operators (id, name) VALUES ('{op}', 'Blue Star');
         INSERT INTO odyssey_connections (id, name, origin_harbor_id, destination_harbor_id,
                 operator_id, is_enabled, duration_minutes)
         SELECT ('00000000-0000-0000-0000-' || lpad(to_hex(100 + i), 12, '0'))::uuid,
                'line ' || lpad(i::text, 5, '0'), '{full}', '{empty}',
                CASE WHEN i % 5 = 0 THEN NULL ELSE '{op}'::uuid END, i % 2 = 0,
                CASE WHEN i % 3 = 0 THEN NULL ELSE i END
         FROM generate_series(1, {n}) i;",
        op = Uuid::from_u128(3)
    ))
    .await
    .unwrap();
    (full, empty)
}

#[tokio::test]
async fn array_agg_of_rows_with_empty_children_and_null_fields() {
    let mut conn = connect_in("nested_agg", FERRY_DDL).await;
    let (full, empty) = seed(&mut conn, 30).await;
    let rows = qail!(
        "SELECT h.id, h.name,
                COALESCE(array_agg(ROW(c.id, c.name, c.duration_minutes) ORDER BY c.name)
                         FILTER (WHERE c.id IS NOT NULL), '{}') AS connections
         FROM harbors h LEFT JOIN odyssey_connections c ON c.origin_harbor_id = h.id
         GROUP BY h.id ORDER BY h.name DESC"
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].id, full);
    let connections: &Vec<_> = &rows[0].connections;
    assert_eq!(connections.len(), 30);
    // Note: the LEFT JOIN makes every field of `c` nullable, FILTER or not.
    assert_eq!(connections[0].name.as_deref(), Some("line 00001"));
    assert_eq!(connections[0].duration_minutes, Some(1));
    assert_eq!(
        connections[2].duration_minutes, None,
        "a NULL field inside a child"
    );
    assert_eq!(rows[1].id, empty);
    assert!(rows[1].connections.is_empty(), "no children: an empty Vec");
}

#[tokio::test]
async fn an_aggregate_that_can_be_null_is_an_option() {
    let mut conn = connect_in("nested_option", FERRY_DDL).await;
    let (_, empty) = seed(&mut conn, 3).await;
    let row = qail!(
        "SELECT h.id, array_agg(ROW(c.id, c.name)) FILTER (WHERE c.is_enabled) AS enabled
         FROM harbors h LEFT JOIN odyssey_connections c ON c.origin_harbor_id = h.id
         WHERE h.id = $1 GROUP BY h.id",
        empty
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    let enabled: Option<Vec<_>> = row.enabled;
    assert!(enabled.is_none(), "FILTER left no input: NULL");
}

#[tokio::test]
async fn array_subquery_of_aliased_rows_and_outer_join_elements() {
    let mut conn = connect_in("nested_subquery", FERRY_DDL).await;
    let (full, _) = seed(&mut conn, 10).await;
    let rows = qail!(
        "SELECT h.name, ARRAY(SELECT x FROM (SELECT c.id, upper(c.name) AS label, o AS operator
                FROM odyssey_connections c LEFT JOIN operators o ON o.id = c.operator_id
                WHERE c.origin_harbor_id = h.id ORDER BY c.name) x) AS connections
         FROM harbors h ORDER BY h.name"
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(rows[0].name, "Naxos");
    assert!(rows[0].connections.is_empty());
    let c = &rows[1].connections;
    assert_eq!(c.len(), 10);
    assert_eq!(c[0].label, "LINE 00001");
    assert_eq!(c[0].id, Uuid::from_u128(101));
    // Two levels: the operator is a record inside the record, NULL where the LEFT JOIN
    // found none.
    let op = c[0]
        .operator
        .as_ref()
        .expect("connection 1 has an operator");
    assert_eq!(op.name, "Blue Star");
    assert_eq!(op.website, None);
    assert!(c[4].operator.is_none(), "connection 5 has no operator");
    let _ = full;
}

#[tokio::test]
async fn two_levels_of_arrays() {
    let mut conn = connect_in("nested_two", FERRY_DDL).await;
    seed(&mut conn, 20).await;
    let rows = qail!(
        "SELECT h.name, ARRAY(SELECT x FROM (
                SELECT o.name, ARRAY(SELECT ROW(c.name, c.duration_minutes)
                        FROM odyssey_connections c
                        WHERE c.operator_id = o.id AND c.origin_harbor_id = h.id
                        ORDER BY c.name) AS lines
                FROM operators o ORDER BY o.name) x) AS operators
         FROM harbors h ORDER BY h.name"
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(rows[0].operators.len(), 1);
    assert!(
        rows[0].operators[0].lines.is_empty(),
        "Naxos: an operator without lines"
    );
    let lines = &rows[1].operators[0].lines;
    assert_eq!(lines.len(), 16, "20 lines, every fifth without an operator");
    assert_eq!(lines[0].name, "line 00001");
    assert_eq!(lines[2].duration_minutes, None);
}

#[tokio::test]
async fn ten_thousand_children() {
    let mut conn = connect_in("nested_many", FERRY_DDL).await;
    let (full, _) = seed(&mut conn, 10_000).await;
    let row = qail!(
        "SELECT h.id, array_agg(ROW(c.id, c.name, c.is_enabled, c.created_at) ORDER BY c.name)
                AS connections
         FROM harbors h JOIN odyssey_connections c ON c.origin_harbor_id = h.id
         WHERE h.id = $1 GROUP BY h.id",
        full
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(row.connections.len(), 10_000);
    assert_eq!(row.connections[9_999].name, "line 10000");
    assert!(row.connections[9_999].is_enabled);
    assert_eq!(
        row.connections.iter().filter(|c| c.is_enabled).count(),
        5_000
    );
}

#[tokio::test]
async fn a_row_a_whole_row_and_composite_columns() {
    let mut conn = connect_in("nested_composite", &format!("{FERRY_DDL}{CONTACTS_DDL}")).await;
    let (full, _) = seed(&mut conn, 1).await;
    conn.batch_execute(&format!(
        "INSERT INTO harbor_contacts (harbor_id, email, berths, address, previous_addresses) VALUES
             ('{full}', 'port@example.gr', 12, ROW('1 Quay', 'Piraeus', NULL),
              ARRAY[ROW('2 Pier', NULL, '185')::postal_address, NULL]),
             ('{full}', NULL, 3, NULL, NULL)"
    ))
    .await
    .unwrap();
    let rows = qail!(
        "SELECT ROW(k.id, h.name) AS pair, h AS harbor, k.address, k.previous_addresses,
                ROW(k.email, k.berths) AS reach
         FROM harbor_contacts k JOIN harbors h ON h.id = k.harbor_id ORDER BY k.id"
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(rows[0].pair.id, 1);
    assert_eq!(rows[0].pair.name, "Piraeus");
    assert_eq!(rows[0].harbor.id, full);
    assert_eq!(rows[0].harbor.code, None);
    let address = rows[0].address.as_ref().expect("an address");
    assert_eq!(address.street.as_deref(), Some("1 Quay"));
    assert_eq!(address.zip, None);
    let previous = rows[0].previous_addresses.as_ref().expect("an array");
    assert_eq!(previous.len(), 2);
    let first = previous[0].as_ref().expect("an element");
    assert_eq!(first.city, None);
    assert_eq!(first.zip.as_deref(), Some("185"));
    assert!(previous[1].is_none(), "a NULL element");
    assert!(rows[1].address.is_none() && rows[1].previous_addresses.is_none());
    // Domain fields carry the domain's OID in the record; they are read as the base type.
    assert_eq!(rows[0].reach.email.as_deref(), Some("port@example.gr"));
    assert_eq!(rows[0].reach.berths, 12);
    assert_eq!(rows[1].reach.email, None);
}

/// A child type of the user's own: `#[derive(QailRow)]` also reads a struct from a record.
#[derive(qail::QailRow, Debug, PartialEq)]
struct Line {
    name: String,
    minutes: Option<i32>,
}

#[derive(qail::QailRow)]
struct Harbor {
    name: String,
    lines: Vec<Line>,
}

#[tokio::test]
async fn named_child_types_with_derive_and_the_typed_form() {
    let mut conn = connect_in("nested_named", FERRY_DDL).await;
    seed(&mut conn, 4).await;
    let harbors: Vec<Harbor> = qail!(
        Harbor => "SELECT h.name, ARRAY(SELECT x FROM (SELECT c.name, c.duration_minutes AS minutes
                FROM odyssey_connections c WHERE c.origin_harbor_id = h.id ORDER BY c.name) x) AS lines
         FROM harbors h ORDER BY h.name DESC"
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(harbors[0].name, "Piraeus");
    assert_eq!(harbors[0].lines.len(), 4);
    assert_eq!(
        harbors[0].lines[2],
        Line {
            name: "line 00003".into(),
            minutes: None
        }
    );
    assert!(harbors[1].lines.is_empty());
    // The same child type named in an alias of the generated row.
    let rows = qail!(
        "SELECT ARRAY(SELECT ROW(c.name, c.duration_minutes) FROM odyssey_connections c
                ORDER BY c.name) AS \"lines: Vec<Line>\""
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(rows.lines.len(), 4);
    assert_eq!(rows.lines[0].minutes, Some(1));
}

/// An implicit row `(a, b)` decodes like `ROW(a, b)`: into a generated struct with its
/// fields' names and nullability, or into the user's type named in its label.
#[tokio::test]
async fn implicit_row_constructors_decode_like_row() {
    let mut conn = connect_in("nested_implicit_row", FERRY_DDL).await;
    seed(&mut conn, 3).await;
    let rows = qail!(
        "SELECT (c.name, c.duration_minutes) AS \"line: Line\", (c.name, c.is_enabled) AS pair
         FROM odyssey_connections c ORDER BY c.name"
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(
        rows[0].line,
        Line {
            name: "line 00001".into(),
            minutes: Some(1)
        }
    );
    assert_eq!(rows[2].line.minutes, None);
    assert_eq!(rows[1].pair.name, "line 00002");
    assert!(rows[1].pair.is_enabled);
    assert!(!rows[2].pair.is_enabled);
}
