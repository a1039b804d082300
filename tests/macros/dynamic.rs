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

#[tokio::test]
async fn optional_clauses_apply_when_their_arguments_are_some() {
    let mut conn = connect_in("clauses", SAILINGS_DDL).await;
    async fn search(
        conn: &mut qail::Connection,
        vessel: Option<i64>,
        max_price: Option<qail::rust_decimal::Decimal>,
        note: Option<&str>,
        limit: Option<i64>,
    ) -> Vec<i64> {
        qail!(
            "SELECT id, vessel_id FROM sailings WHERE seats_left > 0
             {? AND vessel_id = {vessel} }
             {? AND price <= {max_price} }
             {? AND notes = {note} }
             ORDER BY id
             {? LIMIT {limit} }"
        )
        .fetch_all(conn)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect()
    }
    let all = search(&mut conn, None, None, None, None).await;
    let expected: Vec<i64> = (1..=1000).filter(|i| i * 37 % 500 > 0).collect();
    assert_eq!(all, expected);
    let some = search(&mut conn, Some(3), None, Some("even"), Some(5)).await;
    let expected: Vec<i64> = (1..=1000)
        .filter(|i| i * 37 % 500 > 0 && i % 3 != 0 && i % 7 == 3 && i % 2 == 0)
        .take(5)
        .collect();
    assert_eq!(some, expected);
    // A list inside an optional clause: an `Option` of the list.
    let only: Option<Vec<i64>> = Some(vec![4, 8, 15]);
    let picked: Vec<i64> =
        qail!("SELECT id FROM sailings WHERE true {? AND id IN {only} } ORDER BY id")
            .fetch_all(&mut conn)
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect();
    assert_eq!(picked, [4, 8, 15]);
    let cheap = search(&mut conn, None, Some(12.into()), None, None).await;
    let expected: Vec<i64> = (1..=1000)
        .filter(|i| i * 37 % 500 > 0 && 10 + i % 90 <= 12)
        .collect();
    assert_eq!(cheap, expected);
}

#[tokio::test]
async fn sixteen_optional_clauses() {
    let mut conn = connect_in("sixteen", SAILINGS_DDL).await;
    let bounds: [Option<i64>; 16] =
        std::array::from_fn(|i| (i % 3 == 0).then(|| i64::try_from(i * 10).unwrap()));
    let [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p] = bounds;
    let ids: Vec<i64> = qail!(
        "SELECT id FROM sailings WHERE true
         {? AND id > {a} } {? AND id > {b} } {? AND id > {c} } {? AND id > {d} }
         {? AND id > {e} } {? AND id > {f} } {? AND id > {g} } {? AND id > {h} }
         {? AND id > {i} } {? AND id > {j} } {? AND id > {k} } {? AND id > {l} }
         {? AND id > {m} } {? AND id > {n} } {? AND id > {o} } {? AND id <= {p} }
         ORDER BY id"
    )
    .fetch_all(&mut conn)
    .await
    .unwrap()
    .into_iter()
    .map(|r| r.id)
    .collect();
    // Clauses 0, 3, 6, 9, 12 and 15 apply: id > 120 and id <= 150.
    assert_eq!(ids, (121..=150).collect::<Vec<_>>());
}

#[derive(Clone, Copy)]
enum Order {
    Soonest,
    Cheapest,
    MostSeats,
}

#[tokio::test]
async fn sort_choices_and_keyset_pages() {
    let mut conn = connect_in("sort", SAILINGS_DDL).await;
    // The first row of each order, from the data's formulas (price 10 + i % 90, seats
    // i * 37 % 500).
    let first_by = |key: &dyn Fn(i64) -> (i64, i64)| (1..=1000).min_by_key(|&i| key(i)).unwrap();
    let cheapest = first_by(&|i| (10 + i % 90, -i));
    let most_seats = first_by(&|i| (-(i * 37 % 500), i));
    for (order, first) in [
        (Order::Soonest, 1),
        (Order::Cheapest, cheapest),
        (Order::MostSeats, most_seats),
    ] {
        let row = qail!(
            "SELECT id, seats_left FROM sailings ORDER BY {sort} LIMIT 1",
            sort = match order {
                Order::Soonest => "departs_at, id",
                Order::Cheapest => "price, id DESC",
                Order::MostSeats => "seats_left DESC, id",
            }
        )
        .fetch_one(&mut conn)
        .await
        .unwrap();
        assert_eq!(row.id, first);
    }

    // Keyset pagination: the page after the last (departs_at, id) seen, if any.
    let mut after: Option<(qail::chrono::DateTime<qail::chrono::Utc>, i64)> = None;
    let mut seen = Vec::new();
    loop {
        let (after_t, after_id) = (after.map(|a| a.0), after.map(|a| a.1));
        let page = qail!(
            "SELECT id, departs_at FROM sailings WHERE vessel_id = 1
             {? AND (departs_at, id) > ({after_t}, {after_id}) }
             ORDER BY departs_at, id LIMIT 40"
        )
        .fetch_all(&mut conn)
        .await
        .unwrap();
        let Some(last) = page.last() else { break };
        after = Some((last.departs_at, last.id));
        seen.extend(page.iter().map(|r| r.id));
    }
    let expected: Vec<i64> = (1..=1000).filter(|i| i % 3 != 0 && i % 7 == 1).collect();
    assert_eq!(seen, expected);
}

#[tokio::test]
async fn bulk_insert_of_ten_thousand_rows_with_nulls() {
    let mut conn = connect_in("bulk", SAILINGS_DDL).await;
    let n = 10_000_i64;
    let ids: Vec<i64> = (0..n).map(|i| 100_000 + i).collect();
    let vessels: Vec<Option<i64>> = (0..n).map(|i| (i % 4 != 0).then_some(i % 9)).collect();
    let notes: Vec<Option<String>> = (0..n)
        .map(|i| (i % 5 == 0).then(|| format!("bulk {i}")))
        .collect();
    let seats: Vec<i32> = (0..n).map(|i| i32::try_from(i % 300).unwrap()).collect();
    let inserted = qail!(
        "INSERT INTO sailings (id, connection_id, vessel_id, departs_at, sail_date, seats_left, price, notes)
         SELECT id, '00000000-0000-0000-0000-000000000002', vessel_id, now(), current_date, seats_left, 20, notes
         FROM UNNEST({ids}::int8[], {vessels}::int8[], {seats}::int4[], {notes}::text[])
              AS u(id, vessel_id, seats_left, notes)"
    )
    .execute(&mut conn)
    .await
    .unwrap();
    assert_eq!(inserted, 10_000);
    let rows = qail!(
        "SELECT id, vessel_id, seats_left, notes FROM sailings WHERE id >= 100000 ORDER BY id"
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(rows.len(), 10_000);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.id, ids[i]);
        assert_eq!(row.vessel_id, vessels[i]);
        assert_eq!(row.seats_left, seats[i]);
        assert_eq!(row.notes, notes[i]);
    }
}

/// A row for a bulk insert: fields named like the columns.
struct NewSailing {
    id: i64,
    connection_id: qail::uuid::Uuid,
    vessel_id: Option<i64>,
    departs_at: qail::chrono::DateTime<qail::chrono::Utc>,
    sail_date: qail::chrono::NaiveDate,
    seats_left: i32,
    price: qail::rust_decimal::Decimal,
    notes: Option<String>,
}

#[tokio::test]
async fn bulk_insert_from_tuples_and_structs() {
    let mut conn = connect_in("bulk_rows", SAILINGS_DDL).await;
    let departs = qail::chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap();
    let connection = qail::uuid::Uuid::from_u128(7);
    let rows: Vec<NewSailing> = (0..10_000_i64)
        .map(|i| NewSailing {
            id: 200_000 + i,
            connection_id: connection,
            vessel_id: (i % 3 != 0).then_some(i % 11),
            departs_at: departs,
            sail_date: departs.date_naive(),
            seats_left: i32::try_from(i % 400).unwrap(),
            price: qail::rust_decimal::Decimal::new(i, 2),
            notes: (i % 2 == 0).then(|| format!("n{i}")),
        })
        .collect();
    let inserted = qail!(
        "INSERT INTO sailings (id, connection_id, vessel_id, departs_at, sail_date, seats_left, price, notes)
         VALUES {rows.*}"
    )
    .execute(&mut conn)
    .await
    .unwrap();
    assert_eq!(inserted, 10_000);
    let back = qail!(
        "SELECT id, vessel_id, seats_left, price, notes FROM sailings WHERE id >= 200000 ORDER BY id"
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(back.len(), rows.len());
    for (got, sent) in back.iter().zip(&rows) {
        assert_eq!(
            (got.id, got.vessel_id, got.seats_left, got.price, &got.notes),
            (
                sent.id,
                sent.vessel_id,
                sent.seats_left,
                sent.price,
                &sent.notes
            )
        );
    }

    // Tuples: their fields in the order of the columns.
    let tuples: Vec<_> = (1..=3_i64)
        .map(|i| {
            (
                500_000 + i,
                connection,
                departs,
                departs.date_naive(),
                5_i32,
                qail::rust_decimal::Decimal::ONE,
            )
        })
        .collect();
    let ids: Vec<i64> = qail!(
        "INSERT INTO sailings (id, connection_id, departs_at, sail_date, seats_left, price)
         VALUES {tuples} RETURNING id"
    )
    .fetch_all(&mut conn)
    .await
    .unwrap()
    .into_iter()
    .map(|r| r.id)
    .collect();
    assert_eq!(ids, [500_001, 500_002, 500_003]);

    // The same rows through a binary COPY, checked against the table the same way.
    let copied: Vec<NewSailing> = rows
        .iter()
        .map(|r| NewSailing {
            id: r.id + 100_000,
            notes: r.notes.clone(),
            ..*r
        })
        .collect();
    let n = qail!(
        "COPY sailings (id, connection_id, vessel_id, departs_at, sail_date, seats_left, price, notes)
         FROM {copied.*}"
    )
    .execute(&mut conn)
    .await
    .unwrap();
    assert_eq!(n, 10_000);
    let back = qail!(
        "SELECT id, vessel_id, price, notes FROM sailings WHERE id >= 300000 AND id < 310000 ORDER BY id"
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    let got: Vec<_> = back
        .iter()
        .map(|r| (r.id, r.vessel_id, r.price, r.notes.clone()))
        .collect();
    let sent: Vec<_> = copied
        .iter()
        .map(|r| (r.id, r.vessel_id, r.price, r.notes.clone()))
        .collect();
    assert_eq!(got, sent);
}
