//! Behind pgbouncer in transaction pooling mode (`scripts/pgbouncer`, `QAIL_PGBOUNCER_URL`):
//! with `pooler=transaction` a mixed workload of compiled queries, run-time SQL, transactions
//! and pipelines runs without a single named-statement error and with correct results, and
//! a drifted column is still schema drift; without the setting the same workload fails
//! (through a pgbouncer pool of its own, `qail_it_unsafe`).
//!
//! Each test keeps its tables in a schema of its own (`qail_it_pgb_<name>`), set up through
//! the direct connection (`DATABASE_URL`).

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;

use qail_pg::{Config, Connection, Error, FromRow, NoRows, Oid, Pool, Pooler, RawRow, Template};

use super::compiled::{Int8, Pair, col, query, template};

const WORKERS: i64 = 10;
const OPERATIONS: i64 = 1_000;

/// How long an operation without the pooler setting may wait before it counts as stuck.
const STUCK: std::time::Duration = std::time::Duration::from_secs(2);

/// The SQLSTATEs of a named statement that is missing, already there, or confused on the
/// server session a transaction-mode pooler handed out.
const NAMED_STATEMENT_ERRORS: &[&str] = &["42P05", "26000", "08P01"];

fn pgbouncer_url() -> String {
    std::env::var("QAIL_PGBOUNCER_URL").unwrap_or_else(|_| {
        panic!(
            "QAIL_PGBOUNCER_URL is not set: run the tests with scripts/test, which starts \
             pgbouncer in transaction mode (scripts/pgbouncer) and exports its URL"
        )
    })
}

fn pgbouncer_config(pooler: Pooler) -> Config {
    Config::parse(&pgbouncer_url())
        .expect("QAIL_PGBOUNCER_URL is a valid connection string")
        .pooler(pooler)
}

/// One text column.
#[derive(Debug, PartialEq)]
struct Text(String);

impl FromRow for Text {
    fn from_row(row: &mut RawRow<'_>, columns: &[Oid]) -> Result<Self, Error> {
        Ok(Text(row.get_next(columns)?))
    }
}

fn leak(sql: String) -> &'static str {
    Box::leak(sql.into_boxed_str())
}

/// The compiled queries of the workload, on the tables of schema `schema`.
struct Templates {
    pair: &'static Template,
    twice: &'static Template,
    insert: &'static Template,
    count: &'static Template,
    /// A parameter of a user type (an enum): OID 0 in the template.
    mood: &'static Template,
}

impl Templates {
    fn new(schema: &str) -> Templates {
        Templates {
            pair: template(
                "SELECT $1::int8 AS id, 'n' || $1::int8 AS name",
                &[20],
                &[col("id", 20, "int8"), col("name", 25, "text")],
            ),
            twice: template(
                "SELECT $1::int8 * 2 AS id, 'twice' AS name",
                &[20],
                &[col("id", 20, "int8"), col("name", 25, "text")],
            ),
            insert: template(
                leak(format!("INSERT INTO {schema}.t (w, i) VALUES ($1, $2)")),
                &[20, 20],
                &[],
            ),
            count: template(
                leak(format!("SELECT count(*) AS n FROM {schema}.t WHERE w = $1")),
                &[20],
                &[col("n", 20, "int8")],
            ),
            mood: template(
                leak(format!("SELECT ($1::{schema}.mood)::text AS m")),
                &[0],
                &[col("m", 25, "text")],
            ),
        }
    }
}

/// A fresh schema `qail_it_pgb_<name>` with table `t (w int8, i int8)` and enum `mood`,
/// created through the direct connection.
async fn schema(name: &str) -> String {
    let schema = format!("qail_it_pgb_{name}");
    let mut conn = super::connect().await;
    conn.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};
         CREATE TABLE {schema}.t (w int8 NOT NULL, i int8 NOT NULL);
         CREATE TYPE {schema}.mood AS ENUM ('happy', 'sad')"
    ))
    .await
    .unwrap();
    schema
}

/// Operation `i` of worker `w`; `inserted` counts the worker's committed rows. A wrong
/// result panics; an error is returned.
async fn operation(
    conn: &mut Connection,
    t: &Templates,
    schema: &str,
    w: i64,
    i: i64,
    inserted: &mut i64,
) -> Result<(), Error> {
    let id = w * 1_000_000 + i;
    match i % 6 {
        0 => {
            let rows = query::<Pair>(t.pair, &[&id]).fetch_all(&mut *conn).await?;
            assert_eq!(
                rows,
                [Pair {
                    id,
                    name: format!("n{id}")
                }]
            );
        }
        1 => {
            let row = conn
                .query_one("SELECT $1::int8 + 1, $2::text", &[&id, &"run-time"])
                .await?;
            assert_eq!(
                (row.get::<i64>(0), row.get::<String>(1)),
                (id + 1, "run-time".into())
            );
            let n = conn
                .execute(&format!("UPDATE {schema}.t SET i = i WHERE w = $1"), &[&w])
                .await?;
            assert_eq!(n, u64::try_from(*inserted).unwrap());
        }
        2 => {
            let mut tx = conn.begin().await?;
            query::<NoRows>(t.insert, &[&w, &i])
                .execute(&mut tx)
                .await?;
            let n = tx
                .execute(
                    &format!("INSERT INTO {schema}.t (w, i) VALUES ($1, $2)"),
                    &[&w, &i],
                )
                .await?;
            assert_eq!(n, 1);
            let counted = query::<Int8>(t.count, &[&w]).fetch_one(&mut tx).await?;
            assert_eq!(counted, Int8(*inserted + 2));
            tx.commit().await?;
            *inserted += 2;
        }
        3 => {
            let ids = [id, id + 1, id + 2];
            let queries = vec![
                query::<Pair>(t.pair, &[&ids[0]]),
                query::<Pair>(t.twice, &[&ids[1]]),
                query::<Pair>(t.pair, &[&ids[2]]),
            ];
            let results = conn.pipeline(queries).await?;
            let rows: Vec<Vec<Pair>> = results.into_iter().collect::<Result<_, _>>()?;
            assert_eq!(
                rows,
                [
                    vec![Pair {
                        id,
                        name: format!("n{id}")
                    }],
                    vec![Pair {
                        id: 2 * (id + 1),
                        name: "twice".into()
                    }],
                    vec![Pair {
                        id: id + 2,
                        name: format!("n{}", id + 2)
                    }],
                ]
            );
        }
        4 => {
            let rows = conn
                .pipeline_atomic([
                    query::<Pair>(t.twice, &[&id]),
                    query::<Pair>(t.pair, &[&id]),
                ])
                .await?;
            assert_eq!(
                rows,
                [
                    vec![Pair {
                        id: 2 * id,
                        name: "twice".into()
                    }],
                    vec![Pair {
                        id,
                        name: format!("n{id}")
                    }],
                ]
            );
        }
        _ => {
            let mood = if i % 4 == 1 { "happy" } else { "sad" };
            let rows = query::<Text>(t.mood, &[&mood])
                .fetch_all(&mut *conn)
                .await?;
            assert_eq!(rows, [Text(mood.into())]);
        }
    }
    Ok(())
}

/// The errors of a workload by SQLSTATE (or by kind, for errors without one).
type Errors = BTreeMap<String, usize>;

fn record(errors: &mut Errors, e: &Error) {
    let key = match e.code() {
        Some(code) => code.to_owned(),
        None if e.is_closed() => format!("closed: {e}"),
        None => format!("other: {e}"),
    };
    *errors.entry(key).or_default() += 1;
}

fn total(errors: &Errors, codes: &[&str]) -> usize {
    codes.iter().filter_map(|c| errors.get(*c)).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_workers_of_mixed_operations_through_pgbouncer_with_the_pooler_setting() {
    let schema = schema("on").await;
    let pool = Pool::builder()
        .max_size(usize::try_from(WORKERS).unwrap())
        .connect_with(pgbouncer_config(Pooler::Transaction))
        .await
        .unwrap();
    let t: &'static Templates = Box::leak(Box::new(Templates::new(&schema)));
    let workers = (0..WORKERS).map(|w| {
        let pool = pool.clone();
        let schema = schema.clone();
        tokio::spawn(async move {
            let mut errors = Errors::new();
            let mut inserted = 0;
            for i in 0..OPERATIONS {
                // Note: every operation checks out a connection, so the pool's reset runs
                // between them.
                let mut conn = pool.acquire().await.unwrap();
                if let Err(e) = operation(&mut conn, t, &schema, w, i, &mut inserted).await {
                    record(&mut errors, &e);
                }
            }
            (errors, inserted)
        })
    });
    let mut errors = Errors::new();
    let mut inserted = 0;
    for worker in workers.collect::<Vec<_>>() {
        let (worker_errors, worker_inserted) = worker.await.unwrap();
        for (key, n) in worker_errors {
            *errors.entry(key).or_default() += n;
        }
        inserted += worker_inserted;
    }
    assert_eq!(errors, Errors::new(), "no operation fails behind pgbouncer");
    let mut direct = super::connect().await;
    let rows: i64 = direct
        .query_one(&format!("SELECT count(*) FROM {schema}.t"), &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(rows, inserted);
    assert_eq!(inserted, WORKERS * 2 * (OPERATIONS / 6 + 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_pooler_setting_named_statements_break_behind_pgbouncer() {
    let schema = schema("off").await;
    let t: &'static Templates = Box::leak(Box::new(Templates::new(&schema)));
    let workers = (0..WORKERS).map(|w| {
        let schema = schema.clone();
        tokio::spawn(async move {
            // Note: a pool of its own in pgbouncer (scripts/pgbouncer): a client that gives
            // up mid-batch can leave replies on a server connection for its next user.
            let config = pgbouncer_config(Pooler::None).dbname("qail_it_unsafe");
            let mut conn = Connection::connect_with(&config).await.unwrap();
            let mut errors = Errors::new();
            let mut inserted = 0;
            for i in 0..OPERATIONS {
                // Note: a client whose named statements are confused may also wait for a
                // reply that never comes; that counts as a failure too.
                let op = operation(&mut conn, t, &schema, w, i, &mut inserted);
                match tokio::time::timeout(STUCK, AssertUnwindSafe(op).catch_unwind()).await {
                    Ok(Ok(Ok(()))) => {}
                    Ok(Ok(Err(e))) => record(&mut errors, &e),
                    Ok(Err(_)) => {
                        // A wrong result: another statement ran under a cached name.
                        *errors.entry("wrong result".to_owned()).or_default() += 1;
                        conn = Connection::connect_with(&config).await.unwrap();
                        continue;
                    }
                    Err(_) => {
                        *errors.entry("stuck".to_owned()).or_default() += 1;
                        conn = Connection::connect_with(&config).await.unwrap();
                        continue;
                    }
                }
                if conn.is_closed() {
                    conn = Connection::connect_with(&config).await.unwrap();
                }
            }
            errors
        })
    });
    let mut errors = Errors::new();
    for worker in workers.collect::<Vec<_>>() {
        for (key, n) in worker.await.unwrap() {
            *errors.entry(key).or_default() += n;
        }
    }
    eprintln!("without pooler=transaction: {errors:?}");
    assert!(
        total(&errors, NAMED_STATEMENT_ERRORS) > 0,
        "named statements meet other clients' server sessions: {errors:?}"
    );
}

#[tokio::test]
async fn a_drifted_column_through_pgbouncer_is_schema_drift() {
    let schema = schema("drift").await;
    let config = pgbouncer_config(Pooler::Transaction);
    let mut conn = Connection::connect_with(&config).await.unwrap();
    let t = template(
        leak(format!("SELECT w AS id, 'x'::text AS name FROM {schema}.t")),
        &[],
        &[col("id", 20, "int8"), col("name", 25, "text")],
    );
    conn.execute(&format!("INSERT INTO {schema}.t VALUES (7, 1)"), &[])
        .await
        .unwrap();
    let rows = query::<Pair>(t, &[]).fetch_all(&mut conn).await.unwrap();
    assert_eq!(
        rows,
        [Pair {
            id: 7,
            name: "x".into()
        }]
    );
    let mut direct = super::connect().await;
    direct
        .batch_execute(&format!("ALTER TABLE {schema}.t ALTER COLUMN w TYPE int4"))
        .await
        .unwrap();
    let err = query::<Pair>(t, &[])
        .fetch_all(&mut conn)
        .await
        .unwrap_err();
    assert!(err.is_schema_drift(), "{err}");
    assert!(err.to_string().contains("\"id\""), "{err}");
    let results = conn
        .pipeline([query::<Pair>(t, &[]), query::<Pair>(t, &[])])
        .await
        .unwrap();
    for result in results {
        let err = result.unwrap_err();
        assert!(err.is_schema_drift(), "{err}");
    }
    let err = conn
        .pipeline_atomic([query::<Pair>(t, &[])])
        .await
        .unwrap_err();
    assert!(err.is_schema_drift(), "{err}");
    // The connection is still usable.
    assert_eq!(
        conn.query_one("SELECT 1::int4", &[])
            .await
            .unwrap()
            .get::<i32>(0),
        1
    );
}

#[tokio::test]
async fn pipelines_of_run_time_sql_are_refused_with_the_pooler_setting() {
    let config = pgbouncer_config(Pooler::Transaction);
    let mut conn = Connection::connect_with(&config).await.unwrap();
    let err = conn
        .pipeline_builder()
        .sql(&[("SELECT 1", &[][..])])
        .count()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("pooler=transaction"), "{err}");
    assert!(!err.to_string().contains("  "), "one sentence: {err}");
    assert_eq!(conn.query("SELECT 1", &[]).await.unwrap().len(), 1);
}
