//! Dynamic queries: owned arguments, lists, optional clauses, sort choices, pagination and
//! bulk inserts, each checked at compile time and run against the server.

use qail::qail;

use crate::connect_in;

/// `sailings` as the snapshot has it (without its foreign keys).
const SAILINGS_DDL: &str = "
    CREATE TABLE sailings (
        id int8 PRIMARY KEY, connection_id uuid NOT NULL, vessel_id int8,
        departs_at timestamptz NOT NULL, arrives_at timestamptz, sail_date date NOT NULL,
        seats_left int4 NOT NULL, price numeric(10, 2) NOT NULL, notes text);
    INSERT INTO sailings
    SELECT i, '00000000-0000-0000-0000-000000000001', CASE WHEN i % 3 = 0 THEN NULL ELSE i % 7 END,
           timestamptz '2026-01-01 00:00Z' + i * interval '1 hour', NULL,
           date '2026-01-01' + (i / 24)::int, (i * 37) % 500, 10 + i % 90,
           CASE WHEN i % 2 = 0 THEN 'even' END
    FROM generate_series(1, 1000) AS i;
";

#[tokio::test]
async fn a_pipeline_is_built_from_computed_values() {
    let mut conn = connect_in("owned_args", SAILINGS_DDL).await;
    // Each query owns its computed `i64`: the iterator needs no vector of arguments.
    let results = conn
        .pipeline(
            (1..=100_i64)
                .map(|i| qail!("SELECT id, seats_left FROM sailings WHERE id = $1", i * 7)),
        )
        .await
        .unwrap();
    let got: Vec<(i64, i32)> = results
        .into_iter()
        .map(|rows| {
            let rows = rows.unwrap();
            assert!(rows.len() <= 1);
            rows.first().map_or((0, 0), |r| (r.id, r.seats_left))
        })
        .collect();
    let expected: Vec<(i64, i32)> = (1..=100_i64)
        .map(|i| i * 7)
        .map(|id| {
            if id <= 1000 {
                (id, i32::try_from(id * 37 % 500).unwrap())
            } else {
                (0, 0)
            }
        })
        .collect();
    assert_eq!(got, expected);

    // Text keeps its own lifetime: a query built from a `&str` outlives the variable holding it.
    let notes = ["even", "odd"];
    let queries: Vec<_> = notes
        .iter()
        .map(|&note| {
            let local = note;
            qail!("SELECT count(*) AS n FROM sailings WHERE notes = $1", local)
        })
        .collect();
    let counts: Vec<i64> = conn
        .pipeline(queries)
        .await
        .unwrap()
        .into_iter()
        .map(|rows| rows.unwrap()[0].n)
        .collect();
    assert_eq!(counts, [500, 0]);
}

#[tokio::test]
async fn lists_bind_one_array() {
    let mut conn = connect_in("lists", SAILINGS_DDL).await;
    let ids: Vec<i64> = vec![5, 3, 2000, 7];
    let rows = qail!("SELECT id FROM sailings WHERE id IN {ids} ORDER BY id")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), [3, 5, 7]);

    let none: &[i64] = &[];
    let rows = qail!("SELECT id FROM sailings WHERE id IN {none}")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert!(rows.is_empty(), "an empty list matches no row");

    // Every length runs as the same statement.
    let many: Vec<i64> = (1..=10_000).map(|i| i * 2).collect();
    let n = qail!("SELECT count(*) AS n FROM sailings WHERE id IN {many}")
        .fetch_one(&mut conn)
        .await
        .unwrap()
        .n;
    assert_eq!(n, 500);

    let excluded = vec![1_i64, 2, 3];
    let notes: &[&str] = &["even"];
    let n =
        qail!("SELECT count(*) AS n FROM sailings WHERE id NOT IN {excluded} AND notes IN {notes}")
            .fetch_one(&mut conn)
            .await
            .unwrap()
            .n;
    assert_eq!(n, 499);
}
