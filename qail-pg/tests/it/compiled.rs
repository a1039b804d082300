//! Compiled queries (templates): first use and cached use, row decoding, schema drift,
//! stale statements, the statement cache bound.

use futures_util::StreamExt;
use qail_pg::template::{ExpectedColumn, Params};
use qail_pg::{Connection, Encode, Error, FromRow, NoRows, Oid, Query, RawRow, Template};

/// A template built at run time the way `qail!` builds it at compile time.
pub(crate) fn template(
    sql: &'static str,
    oids: &[Oid],
    columns: &[ExpectedColumn],
) -> &'static Template {
    let columns: Vec<(&str, Oid, &str)> = columns
        .iter()
        .map(|c| (c.name, c.type_oid, c.type_name))
        .collect();
    Template::leak(sql, oids, &columns).unwrap()
}

pub(crate) const fn col(
    name: &'static str,
    type_oid: Oid,
    type_name: &'static str,
) -> ExpectedColumn {
    ExpectedColumn {
        name,
        type_oid,
        type_name,
    }
}

/// A compiled query with parameters.
pub(crate) fn query<'a, D>(
    t: &'static Template,
    params: &[&'a (dyn Encode + Sync)],
) -> Query<'a, D> {
    let params = match params {
        [] => Params::new([]),
        [a] => Params::new([*a]),
        [a, b] => Params::new([*a, *b]),
        _ => panic!("tests use at most two parameters"),
    };
    Query::new(t, params)
}

#[derive(Debug, PartialEq)]
pub(crate) struct Pair {
    pub(crate) id: i64,
    pub(crate) name: String,
}

impl FromRow for Pair {
    fn from_row(row: &mut RawRow<'_>, columns: &[Oid]) -> Result<Self, Error> {
        Ok(Pair {
            id: row.get_next(columns)?,
            name: row.get_next(columns)?,
        })
    }
}

/// One int8 column.
#[derive(Debug, PartialEq)]
pub(crate) struct Int8(pub(crate) i64);

impl FromRow for Int8 {
    fn from_row(row: &mut RawRow<'_>, columns: &[Oid]) -> Result<Self, Error> {
        Ok(Int8(row.get_next(columns)?))
    }
}

/// How many statements the server holds for the session.
pub(crate) async fn prepared(conn: &mut Connection) -> i64 {
    conn.query_one("SELECT count(*) FROM pg_prepared_statements", &[])
        .await
        .unwrap()
        .get(0)
}

async fn is_prepared(conn: &mut Connection, name: &str) -> bool {
    conn.query_one(
        "SELECT count(*) FROM pg_prepared_statements WHERE name = $1",
        &[&name],
    )
    .await
    .unwrap()
    .get::<i64>(0)
        == 1
}

fn series() -> &'static Template {
    template(
        "SELECT g::int8 AS id, 'n' || g AS name FROM generate_series(1, $1::int4) g",
        &[23],
        &[col("id", 20, "int8"), col("name", 25, "text")],
    )
}

#[tokio::test]
async fn an_encoded_bind_prefix_that_does_not_match_the_name_is_refused_before_sending() {
    let mut conn = super::connect().await;
    let good = series();
    let bad: &'static Template = Box::leak(Box::new(Template {
        name: "q_other",
        ..*good
    }));
    let err = query::<Pair>(bad, &[&3i32])
        .fetch_all(&mut conn)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("Bind prefix"), "{err}");
    assert!(!is_prepared(&mut conn, bad.name).await);
    // The connection is fine, and the template as `qail!` builds it runs.
    let rows = query::<Pair>(good, &[&2i32])
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
}

#[tokio::test]
async fn first_use_prepares_later_uses_bind_only() {
    let mut conn = super::connect().await;
    let t = series();
    let rows: Vec<Pair> = query::<Pair>(t, &[&3i32])
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(
        rows[2],
        Pair {
            id: 3,
            name: "n3".into()
        }
    );
    assert!(is_prepared(&mut conn, t.name).await);
    let rows = query::<Pair>(t, &[&5i32])
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows.len(), 5);
    let one = query::<Pair>(t, &[&1i32])
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(one.id, 1);
    assert!(
        query::<Pair>(t, &[&0i32])
            .fetch_optional(&mut conn)
            .await
            .unwrap()
            .is_none()
    );
    let err = query::<Pair>(t, &[&2i32])
        .fetch_one(&mut conn)
        .await
        .unwrap_err();
    assert!(err.is_row_count(), "{err}");
    let err = query::<Pair>(t, &[&0i32])
        .fetch_one(&mut conn)
        .await
        .unwrap_err();
    assert!(err.is_row_count(), "{err}");
}

#[tokio::test]
async fn visitors_and_streams_do_not_collect() {
    let mut conn = super::connect().await;
    let t = series();
    let mut sum = 0i64;
    let n = query::<Pair>(t, &[&100i32])
        .for_each(&mut conn, |row, columns| {
            sum += row.get_next::<i64>(columns)?;
            let _name: &str = row.get_next(columns)?;
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!((n, sum), (100, 5050));
    let mut longest = 0;
    query::<Pair>(t, &[&10i32])
        .for_each_row(&mut conn, |p| {
            longest = longest.max(p.name.len());
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!(longest, 3);
    // A callback stops the query with its own error; the connection goes on.
    #[derive(Debug)]
    struct TooBig(i64);
    impl std::fmt::Display for TooBig {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{} is too big", self.0)
        }
    }
    impl std::error::Error for TooBig {}
    let mut seen = 0;
    let err = query::<Pair>(t, &[&100i32])
        .for_each(&mut conn, |row, columns| {
            let id: i64 = row.get_next(columns)?;
            seen += 1;
            if id == 3 {
                return Err(qail_pg::Error::caller(TooBig(id)));
            }
            Ok(())
        })
        .await
        .unwrap_err();
    assert!(err.is_caller(), "{err}");
    assert_eq!(seen, 3, "no row is handed over after the error");
    let too_big = std::error::Error::source(&err).and_then(|s| s.downcast_ref::<TooBig>());
    assert_eq!(too_big.map(|e| e.0), Some(3));
    assert!(err.to_string().contains("3 is too big"), "{err}");
    assert_eq!(
        query::<Pair>(t, &[&2i32])
            .fetch_all(&mut conn)
            .await
            .unwrap()
            .len(),
        2
    );
    {
        let mut stream = std::pin::pin!(query::<Pair>(t, &[&200_000i32]).fetch(&mut conn));
        let mut count = 0;
        while let Some(row) = stream.next().await {
            count += 1;
            assert_eq!(row.unwrap().id, count);
        }
        assert_eq!(count, 200_000);
    }
    // Dropped after a few rows: the rest is drained before the next use.
    {
        let mut stream = std::pin::pin!(query::<Pair>(t, &[&100_000i32]).fetch(&mut conn));
        for _ in 0..3 {
            stream.next().await.unwrap().unwrap();
        }
    }
    let v: i64 = conn
        .query_one("SELECT $1::int8", &[&42i64])
        .await
        .unwrap()
        .get(0);
    assert_eq!(v, 42);
}

#[tokio::test]
async fn execute_returns_rows_affected() {
    let mut conn = super::connect().await;
    conn.batch_execute(
        "DROP SCHEMA IF EXISTS qail_it_cexec CASCADE; CREATE SCHEMA qail_it_cexec;
         CREATE TABLE qail_it_cexec.t (id int8)",
    )
    .await
    .unwrap();
    let t = template(
        "INSERT INTO qail_it_cexec.t SELECT generate_series(1, $1::int4)",
        &[23],
        &[],
    );
    assert_eq!(
        query::<NoRows>(t, &[&7i32])
            .execute(&mut conn)
            .await
            .unwrap(),
        7
    );
    assert_eq!(
        query::<NoRows>(t, &[&2i32])
            .execute(&mut conn)
            .await
            .unwrap(),
        2
    );
}

#[tokio::test]
async fn a_type_mismatch_on_first_use_is_schema_drift() {
    let mut conn = super::connect().await;
    let t = template(
        "SELECT 1::int8 AS id, 'x'::text AS name",
        &[],
        &[col("id", 23, "int4"), col("name", 25, "text")],
    );
    let err = query::<Pair>(t, &[])
        .fetch_all(&mut conn)
        .await
        .unwrap_err();
    assert!(err.is_schema_drift(), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("\"id\"") && msg.contains("int8") && msg.contains("int4"),
        "{msg}"
    );
    assert!(
        !is_prepared(&mut conn, t.name).await,
        "a drifted statement is closed"
    );
    let t = template(
        "SELECT 1::int8 AS id",
        &[],
        &[col("id", 20, "int8"), col("x", 25, "text")],
    );
    let err = query::<Pair>(t, &[])
        .fetch_all(&mut conn)
        .await
        .unwrap_err();
    assert!(
        err.is_schema_drift() && err.to_string().contains("1 columns"),
        "{err}"
    );
    assert_eq!(conn.query("SELECT 1", &[]).await.unwrap().len(), 1);
}

#[tokio::test]
async fn server_errors_keep_the_connection_and_the_cache() {
    let mut conn = super::connect().await;
    let t = template(
        "SELECT (10 / $1::int4)::int8 AS id, 'x'::text AS name",
        &[23],
        &[col("id", 20, "int8"), col("name", 25, "text")],
    );
    let err = query::<Pair>(t, &[&0i32])
        .fetch_all(&mut conn)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("22012"));
    let rows = query::<Pair>(t, &[&5i32])
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows[0].id, 2);
    let bad = template("SELECT nope FROM nowhere_at_all", &[], &[]);
    let err = query::<NoRows>(bad, &[])
        .execute(&mut conn)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("42P01"));
    assert!(!is_prepared(&mut conn, bad.name).await);
    let err = query::<NoRows>(bad, &[])
        .execute(&mut conn)
        .await
        .unwrap_err();
    assert_eq!(
        err.code(),
        Some("42P01"),
        "the failed Parse left nothing behind"
    );
}

#[tokio::test]
async fn deallocated_statements_are_prepared_again() {
    let mut conn = super::connect().await;
    let t = series();
    query::<Pair>(t, &[&1i32])
        .fetch_all(&mut conn)
        .await
        .unwrap();
    conn.batch_execute("DEALLOCATE ALL").await.unwrap();
    let rows = query::<Pair>(t, &[&2i32])
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
}

#[tokio::test]
async fn without_a_cache_templates_run_unnamed() {
    let mut conn = super::connect().await;
    conn.set_statement_cache_size(0);
    let t = series();
    for n in 1..4 {
        let rows = query::<Pair>(t, &[&n]).fetch_all(&mut conn).await.unwrap();
        assert_eq!(rows.len(), usize::try_from(n).unwrap());
    }
    assert_eq!(prepared(&mut conn).await, 0);
}

/// ALTER TABLE … ALTER COLUMN TYPE from another connection between two executions.
#[tokio::test]
async fn alter_column_type_between_executions() {
    let mut conn = super::connect().await;
    let mut admin = super::connect().await;
    let setup = |ty: &str| {
        format!(
            "DROP SCHEMA IF EXISTS qail_it_alter CASCADE; CREATE SCHEMA qail_it_alter;
             CREATE TABLE qail_it_alter.t (id {ty}, name text);
             INSERT INTO qail_it_alter.t VALUES (1, 'a')"
        )
    };
    let alter = "ALTER TABLE qail_it_alter.t ALTER COLUMN id TYPE int8";
    admin.batch_execute(&setup("int4")).await.unwrap();
    let sql = "SELECT id, name FROM qail_it_alter.t";
    // Run-time query outside a transaction: re-prepared, the new type is returned.
    assert_eq!(conn.query_one(sql, &[]).await.unwrap().get::<i32>(0), 1);
    admin.batch_execute(alter).await.unwrap();
    assert_eq!(conn.query_one(sql, &[]).await.unwrap().get::<i64>(0), 1);
    // Typed template expecting int4: schema drift, never a wrong value.
    admin.batch_execute(&setup("int4")).await.unwrap();
    let typed = template(
        "SELECT id, name FROM qail_it_alter.t",
        &[],
        &[col("id", 23, "int4"), col("name", 25, "text")],
    );
    let n = query::<NoRows>(typed, &[])
        .execute(&mut conn)
        .await
        .unwrap();
    assert_eq!(n, 1);
    admin.batch_execute(alter).await.unwrap();
    let err = query::<NoRows>(typed, &[])
        .execute(&mut conn)
        .await
        .unwrap_err();
    assert!(err.is_schema_drift(), "{err}");
    assert!(
        err.to_string().contains("int8") && err.to_string().contains("int4"),
        "{err}"
    );
    // Inside a transaction: a clear error; the next transaction succeeds.
    admin.batch_execute(&setup("int4")).await.unwrap();
    assert_eq!(conn.query_one(sql, &[]).await.unwrap().get::<i32>(0), 1);
    let mut tx = conn.begin().await.unwrap();
    admin.batch_execute(alter).await.unwrap();
    let err = tx.query_one(sql, &[]).await.unwrap_err();
    assert_eq!(err.code(), Some("0A000"));
    assert!(err.to_string().contains("roll it back"), "{err}");
    tx.rollback().await.unwrap();
    let mut tx = conn.begin().await.unwrap();
    assert_eq!(tx.query_one(sql, &[]).await.unwrap().get::<i64>(0), 1);
    tx.commit().await.unwrap();
}

#[tokio::test]
async fn the_cache_bounds_prepared_statements() {
    let mut conn = super::connect().await;
    conn.set_statement_cache_size(8);
    let t = series();
    for i in 0..10_000i32 {
        let sql = format!("SELECT {i}::int4 + $1::int4");
        let v: i32 = conn.query_one(&sql, &[&1i32]).await.unwrap().get(0);
        assert_eq!(v, i + 1);
        if i % 1000 == 0 {
            query::<Pair>(t, &[&1i32])
                .fetch_all(&mut conn)
                .await
                .unwrap();
        }
        if i % 50 == 0 {
            let n = prepared(&mut conn).await;
            assert!(n <= 8, "{n} statements on the server after {i} queries");
        }
    }
    assert!(prepared(&mut conn).await <= 8);
}

#[tokio::test]
async fn a_drifted_write_is_reported_before_it_runs() {
    let mut admin = super::connect().await;
    admin
        .batch_execute(
            "DROP SCHEMA IF EXISTS qail_it_drift_write CASCADE; CREATE SCHEMA qail_it_drift_write;
             CREATE TABLE qail_it_drift_write.t (id int4 NOT NULL, name text)",
        )
        .await
        .unwrap();
    let count = "SELECT count(*) FROM qail_it_drift_write.t";
    // Compiled while `id` was int8: the INSERT … RETURNING id no longer matches.
    let insert = template(
        "INSERT INTO qail_it_drift_write.t (id, name) VALUES (7, $1) RETURNING id",
        &[25],
        &[col("id", 20, "int8")],
    );
    let mut conn = super::connect().await;
    let err = query::<NoRows>(insert, &[&"drifted"])
        .execute(&mut conn)
        .await
        .unwrap_err();
    assert!(err.is_schema_drift(), "{err}");
    let rows = admin.query_one(count, &[]).await.unwrap().get::<i64>(0);
    assert_eq!(rows, 0, "the drifted INSERT must not have run");
    // Matching the table again, it runs; a later ALTER is caught on the re-prepare, again
    // before the statement runs.
    admin
        .batch_execute("ALTER TABLE qail_it_drift_write.t ALTER COLUMN id TYPE int8")
        .await
        .unwrap();
    let n = query::<NoRows>(insert, &[&"first"])
        .execute(&mut conn)
        .await
        .unwrap();
    assert_eq!(n, 1);
    admin
        .batch_execute("ALTER TABLE qail_it_drift_write.t ALTER COLUMN id TYPE int4")
        .await
        .unwrap();
    let err = query::<NoRows>(insert, &[&"second"])
        .execute(&mut conn)
        .await
        .unwrap_err();
    assert!(err.is_schema_drift(), "{err}");
    let rows = admin.query_one(count, &[]).await.unwrap().get::<i64>(0);
    assert_eq!(rows, 1, "only the matching INSERT ran");
    admin
        .batch_execute("DROP SCHEMA qail_it_drift_write CASCADE")
        .await
        .unwrap();
}

#[tokio::test]
async fn fetch_all_reserves_from_the_last_result_and_gives_back_what_it_did_not_use() {
    let mut conn = super::connect().await;
    let t = template(
        "SELECT g AS v FROM generate_series(1, $1::int8) g",
        &[20],
        &[col("v", 20, "int8")],
    );
    for n in [5000i64, 3, 0, 5000, 40] {
        let rows = query::<Int8>(t, &[&n]).fetch_all(&mut conn).await.unwrap();
        assert_eq!(rows.len(), usize::try_from(n).unwrap());
        assert_eq!(rows.last(), (n > 0).then_some(&Int8(n)));
        assert!(
            rows.capacity() <= 2 * rows.len().max(16),
            "{n} rows in a vector of capacity {}",
            rows.capacity()
        );
    }
}

#[tokio::test]
async fn fetch_all_alternating_row_types_sizes_and_errors_returns_each_result_whole() {
    // Each fetch_all fills the row vector the last one left for its row type: alternating
    // types, sizes, a failed query and an empty result must not mix results up.
    let mut conn = super::connect().await;
    let ints = template(
        "SELECT g AS v FROM generate_series(1, $1::int8) g",
        &[20],
        &[col("v", 20, "int8")],
    );
    let failing = template(
        "SELECT g::int8 AS id, 'n' || g AS name FROM generate_series(1, 3) g WHERE 1 / ($1::int4 - 2) > 0",
        &[23],
        &[col("id", 20, "int8"), col("name", 25, "text")],
    );
    for (pairs, int_rows) in [(50i32, 5000i64), (3, 0), (0, 7), (50, 40), (400, 1)] {
        let rows = query::<Pair>(series(), &[&pairs])
            .fetch_all(&mut conn)
            .await
            .unwrap();
        assert_eq!(rows.len(), usize::try_from(pairs).unwrap());
        if pairs > 0 {
            assert_eq!(
                rows[0],
                Pair {
                    id: 1,
                    name: "n1".into()
                }
            );
            let last = rows.last().unwrap();
            assert_eq!(
                (last.id, last.name.as_str()),
                (i64::from(pairs), &*format!("n{pairs}"))
            );
        }
        let err = query::<Pair>(failing, &[&2i32])
            .fetch_all(&mut conn)
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some("22012"), "{err}");
        let rows = query::<Int8>(ints, &[&int_rows])
            .fetch_all(&mut conn)
            .await
            .unwrap();
        assert_eq!(rows.len(), usize::try_from(int_rows).unwrap());
        assert!(rows.iter().zip(1..).all(|(r, i)| r.0 == i));
    }
}
