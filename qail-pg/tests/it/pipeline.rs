//! Pipelines: many queries in one round trip, errors per query, very large batches.

use qail_pg::NoRows;

use super::compiled::{Int8, Pair, col, query, template};

fn div() -> &'static qail_pg::Template {
    template(
        "SELECT (1000 / $1::int8)::int8 AS v",
        &[20],
        &[col("v", 20, "int8")],
    )
}

#[tokio::test]
async fn an_error_in_query_500_of_1000_affects_only_that_query() {
    let mut conn = super::connect().await;
    let t = div();
    let divisors: Vec<i64> = (0..1000)
        .map(|i| if i == 499 { 0 } else { 1 + i % 7 })
        .collect();
    let results = conn
        .pipeline(divisors.iter().map(|d| query::<Int8>(t, &[d])))
        .await
        .unwrap();
    assert_eq!(results.len(), 1000);
    for (i, (result, d)) in results.iter().zip(&divisors).enumerate() {
        match result {
            Ok(rows) => {
                assert_ne!(i, 499);
                assert_eq!(rows, &[Int8(1000 / d)]);
            }
            Err(e) => {
                assert_eq!(i, 499, "{e}");
                assert_eq!(e.code(), Some("22012"));
            }
        }
    }
    assert!(results[499].is_err());
    let v: i64 = conn
        .query_one("SELECT $1::int8", &[&5i64])
        .await
        .unwrap()
        .get(0);
    assert_eq!(v, 5);
    // The template prepared inside the pipeline is cached: a second pipeline is Bind-only.
    let again = conn.pipeline([query::<Int8>(t, &[&10i64])]).await.unwrap();
    assert_eq!(again[0].as_ref().unwrap(), &[Int8(100)]);
}

/// A per-query pipeline waits for replies a batch at a time (the least the queries still owe):
/// queries that fail in the client (a wrong parameter count: only their Sync goes out, and
/// the server answers it with ReadyForQuery alone), in the server (division by zero) and
/// that succeed, interleaved, each get their own result, and the connection answers the
/// next query.
#[tokio::test]
async fn client_and_server_failures_interleaved_in_a_large_pipeline_each_get_their_result() {
    let mut conn = super::connect().await;
    let t = div();
    let divisors: Vec<i64> = (0..3000).map(|i| i % 3).collect();
    let queries = divisors.iter().enumerate().map(|(i, d)| {
        if i % 5 == 4 {
            query::<Int8>(t, &[])
        } else {
            query::<Int8>(t, &[d])
        }
    });
    let results = tokio::time::timeout(std::time::Duration::from_secs(120), conn.pipeline(queries))
        .await
        .expect("the pipeline ends")
        .unwrap();
    assert_eq!(results.len(), 3000);
    for (i, (result, d)) in results.iter().zip(&divisors).enumerate() {
        match result {
            Ok(rows) => assert_eq!(rows, &[Int8(1000 / d)], "query {i}"),
            Err(e) if i % 5 == 4 => assert!(e.to_string().contains("parameter"), "{i}: {e}"),
            Err(e) => {
                assert_eq!(*d, 0, "query {i}: {e}");
                assert_eq!(e.code(), Some("22012"), "query {i}");
            }
        }
    }
    assert!(
        results
            .iter()
            .enumerate()
            .all(|(i, r)| r.is_ok() == (i % 5 != 4 && i % 3 != 0))
    );
    let v: i64 = conn.query_one("SELECT 7::int8", &[]).await.unwrap().get(0);
    assert_eq!(v, 7);
}

#[tokio::test]
async fn a_hundred_thousand_queries_in_one_call() {
    let mut conn = super::connect().await;
    let t = template(
        "SELECT $1::int8 AS id, repeat('x', 40) AS name",
        &[20],
        &[col("id", 20, "int8"), col("name", 25, "text")],
    );
    let ids: Vec<i64> = (0..100_000).collect();
    let results = conn
        .pipeline(ids.iter().map(|id| query::<Pair>(t, &[id])))
        .await
        .unwrap();
    assert_eq!(results.len(), 100_000);
    for (id, rows) in ids.iter().zip(&results) {
        assert_eq!(rows.as_ref().unwrap()[0].id, *id);
    }
    let counts = conn
        .pipeline_builder()
        .queries(ids.iter().map(|id| query::<Pair>(t, &[id])))
        .count()
        .await
        .unwrap();
    assert!(counts.iter().all(|c| matches!(c, Ok(1))));
}

#[tokio::test]
async fn large_results_and_large_batches_do_not_deadlock() {
    let mut conn = super::connect().await;
    let t = template(
        "SELECT g::int8 AS id, repeat('y', 200) AS name FROM generate_series(1, $1::int4) g",
        &[23],
        &[col("id", 20, "int8"), col("name", 25, "text")],
    );
    let n = 5000i32;
    let results = conn
        .pipeline_builder()
        .queries((0..200).map(|_| query::<Pair>(t, &[&n])))
        .count()
        .await
        .unwrap();
    assert!(results.iter().all(|c| matches!(c, Ok(5000))));
}

#[tokio::test]
async fn builder_mixes_row_types_counts_and_run_time_sql() {
    let mut conn = super::connect().await;
    conn.batch_execute(
        "DROP SCHEMA IF EXISTS qail_it_pbuild CASCADE; CREATE SCHEMA qail_it_pbuild;
         CREATE TABLE qail_it_pbuild.t (id int8)",
    )
    .await
    .unwrap();
    let insert = template(
        "INSERT INTO qail_it_pbuild.t SELECT generate_series(1, $1::int4)",
        &[23],
        &[],
    );
    let pairs = template(
        "SELECT id, 'p' || id AS name FROM qail_it_pbuild.t ORDER BY id",
        &[],
        &[col("id", 20, "int8"), col("name", 25, "text")],
    );
    let mut p = conn.pipeline_builder();
    let h1 = p.add_count(query::<NoRows>(insert, &[&3i32]));
    let h2 = p.add(query::<Pair>(pairs, &[]));
    let h3 = p.add_sql("SELECT $1::text || 'b'", &[&"a"]);
    let h4 = p.add_sql("SELECT 1/0", &[]);
    let mut res = p.run().await.unwrap();
    assert_eq!(res.get(h1).unwrap(), 3);
    let rows = res.get(h2).unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(
        rows[2],
        Pair {
            id: 3,
            name: "p3".into()
        }
    );
    assert_eq!(res.get(h3).unwrap()[0].get::<&str>(0), "ab");
    assert_eq!(res.get(h4).unwrap_err().code(), Some("22012"));
}

#[tokio::test]
async fn run_time_sql_pipelines() {
    let mut conn = super::connect().await;
    let a = 1i32;
    let b = 2i32;
    let results = conn
        .pipeline_builder()
        .sql(&[
            ("SELECT $1::int4 + 1", &[&a]),
            ("SELECT $1::int4 * 10", &[&b]),
            ("SELECT $1::int4 + 1", &[&b]),
        ])
        .rows()
        .await
        .unwrap();
    let values: Vec<i32> = results
        .iter()
        .map(|r| r.as_ref().unwrap()[0].get::<i32>(0))
        .collect();
    assert_eq!(values, [2, 20, 3]);
    conn.set_statement_cache_size(1);
    let err = conn
        .pipeline_builder()
        .sql(&[("SELECT 1", &[]), ("SELECT 2", &[])])
        .rows()
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("set_statement_cache_size"),
        "{err}"
    );
    assert_eq!(conn.query("SELECT 3", &[]).await.unwrap().len(), 1);
}

#[tokio::test]
async fn run_time_sql_counts_and_borrowed_rows_in_either_mode() {
    let mut conn = super::connect().await;
    let (three, zero) = (3i64, 0i64);
    let sql: [(&str, &[&(dyn qail_pg::Encode + Sync)]); 3] = [
        ("SELECT generate_series(1, $1::int8)", &[&three]),
        ("SELECT 1 / $1::int8", &[&zero]),
        ("SELECT 'x'::text WHERE false", &[]),
    ];
    let counts = conn.pipeline_builder().sql(&sql).count().await.unwrap();
    assert_eq!(counts[0].as_ref().unwrap(), &3);
    assert_eq!(counts[1].as_ref().unwrap_err().code(), Some("22012"));
    assert_eq!(counts[2].as_ref().unwrap(), &0);

    let mut seen = Vec::new();
    let rows = conn
        .pipeline_builder()
        .sql(&sql[..1])
        .for_each(|query, row, columns| {
            seen.push((query, row.get_next::<i64>(columns)?));
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(*rows[0].as_ref().unwrap(), 3);
    assert_eq!(seen, [(0, 1), (0, 2), (0, 3)]);

    let err = conn
        .pipeline_builder()
        .atomic()
        .sql(&sql)
        .count()
        .await
        .unwrap_err();
    assert_eq!(err.pipeline_index(), Some(1), "{err}");
    let mut total = 0;
    let counts = conn
        .pipeline_builder()
        .atomic()
        .sql(&[sql[0], sql[2]])
        .for_each(|_, row, columns| {
            total += row.get_next::<i64>(columns)?;
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!((counts, total), (vec![3, 0], 6));
}

#[tokio::test]
async fn a_batch_refuses_queries_added_one_by_one() {
    let mut conn = super::connect().await;
    let t = div();
    let one = 1i64;
    let mut p = conn.pipeline_builder();
    let _ = p.add_count(query::<NoRows>(t, &[&one]));
    let err = p
        .queries([query::<Int8>(t, &[&one])])
        .rows()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("one or the other"), "{err}");
    // Nothing was sent: the connection runs the next pipeline.
    let rows = conn.pipeline([query::<Int8>(t, &[&one])]).await.unwrap();
    assert_eq!(rows.len(), 1);
}

#[tokio::test]
async fn a_drifted_template_fails_every_query_that_uses_it() {
    let mut conn = super::connect().await;
    let t = template("SELECT $1::int4 AS v", &[23], &[col("v", 20, "int8")]);
    let results = conn
        .pipeline([1i32, 2, 3].iter().map(|i| query::<Int8>(t, &[i])))
        .await
        .unwrap();
    assert!(
        results
            .iter()
            .all(|r| r.as_ref().is_err_and(qail_pg::Error::is_schema_drift))
    );
    let n: i64 = conn
        .query_one(
            "SELECT count(*) FROM pg_prepared_statements WHERE name = $1",
            &[&t.name],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 0, "the drifted statement is closed");
}

#[tokio::test]
async fn inside_a_transaction_an_error_aborts_the_rest() {
    let mut conn = super::connect().await;
    let t = div();
    let mut tx = conn.begin().await.unwrap();
    let ds = [1i64, 0, 2];
    let results = tx
        .pipeline(ds.iter().map(|d| query::<Int8>(t, &[d])))
        .await
        .unwrap();
    assert!(results[0].is_ok());
    assert_eq!(results[1].as_ref().unwrap_err().code(), Some("22012"));
    assert_eq!(results[2].as_ref().unwrap_err().code(), Some("25P02"));
    tx.rollback().await.unwrap();
    assert_eq!(conn.transaction_status(), qail_pg::TransactionStatus::Idle);
}

/// A fresh table `qail_it_<name>.t (v int8)`, an INSERT of it whose compiled expectation
/// holds, and one whose RETURNING column the compiled query expects as int4 (drifted).
async fn drift_table(
    conn: &mut qail_pg::Connection,
    name: &str,
) -> (&'static qail_pg::Template, &'static qail_pg::Template) {
    conn.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS qail_it_{name} CASCADE; CREATE SCHEMA qail_it_{name};
         CREATE TABLE qail_it_{name}.t (v int8)"
    ))
    .await
    .unwrap();
    let leak = |sql: String| -> &'static str { Box::leak(sql.into_boxed_str()) };
    let fine = template(
        leak(format!("INSERT INTO qail_it_{name}.t VALUES ($1::int8)")),
        &[20],
        &[],
    );
    let drifted = template(
        leak(format!(
            "INSERT INTO qail_it_{name}.t VALUES ($1::int8) RETURNING v"
        )),
        &[20],
        &[col("v", 23, "int4")],
    );
    (fine, drifted)
}

async fn rows_of(conn: &mut qail_pg::Connection, name: &str) -> Vec<i64> {
    conn.query(&format!("SELECT v FROM qail_it_{name}.t ORDER BY v"), &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

#[tokio::test]
async fn a_drifted_write_in_a_pipeline_never_runs() {
    let mut conn = super::connect().await;
    let (fine, drifted) = drift_table(&mut conn, "pipe_drift").await;
    let (a, b, c, d) = (1i64, 2i64, 3i64, 4i64);
    let mut p = conn.pipeline_builder();
    let first = p.add_count(query::<NoRows>(fine, &[&a]));
    let bad = p.add(query::<Int8>(drifted, &[&b]));
    let bad_again = p.add(query::<Int8>(drifted, &[&c]));
    let last = p.add_count(query::<NoRows>(fine, &[&d]));
    let mut results = p.run().await.unwrap();
    assert_eq!(results.get(first).unwrap(), 1);
    let e = results.get(bad).unwrap_err();
    assert!(e.is_schema_drift(), "{e}");
    let e = results.get(bad_again).unwrap_err();
    assert!(e.is_schema_drift(), "{e}");
    assert_eq!(results.get(last).unwrap(), 1);
    assert_eq!(
        rows_of(&mut conn, "pipe_drift").await,
        [1, 4],
        "the drifted INSERTs never ran"
    );
}

#[tokio::test]
async fn a_drifted_write_rolls_an_atomic_batch_back_even_when_it_is_small() {
    let mut conn = super::connect().await;
    let (fine, drifted) = drift_table(&mut conn, "atomic_drift").await;
    let (a, b, c) = (1i64, 2i64, 3i64);
    let mut p = conn.pipeline_builder().atomic();
    p.add_count(query::<NoRows>(fine, &[&a]));
    p.add(query::<Int8>(drifted, &[&b]));
    p.add_count(query::<NoRows>(fine, &[&c]));
    let err = p.run().await.unwrap_err();
    assert!(err.is_schema_drift(), "{err}");
    assert_eq!(err.pipeline_index(), Some(1), "{err}");
    assert!(err.to_string().contains("rolled back"), "{err}");
    assert!(
        rows_of(&mut conn, "atomic_drift").await.is_empty(),
        "nothing committed"
    );
    assert_eq!(conn.transaction_status(), qail_pg::TransactionStatus::Idle);
    // A template first described inside a batch, and fine, runs in the same call.
    let (fresh, _) = drift_table(&mut conn, "atomic_fresh").await;
    let values: Vec<i64> = (0..100).collect();
    let counts = conn
        .pipeline_builder()
        .atomic()
        .queries(values.iter().map(|v| query::<NoRows>(fresh, &[v])))
        .count()
        .await
        .unwrap();
    assert_eq!(counts, vec![1; 100]);
    assert_eq!(rows_of(&mut conn, "atomic_fresh").await.len(), 100);
}

/// Every kind of pipeline is `Send`: it runs on a task of a multi-threaded runtime.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_pipeline_runs_on_a_spawned_task() {
    let conn = super::connect().await;
    let handle = tokio::spawn(async move {
        let mut conn = conn;
        let t = div();
        let divisors = [1i64, 0, 4];
        // Note: collected first; a lazy `map` whose closure borrows into its item is not
        // `Send` across an await to the compiler (its higher-ranked lifetime is not inferred).
        let queries: Vec<_> = divisors.iter().map(|d| query::<Int8>(t, &[d])).collect();
        let per_query = conn.pipeline(queries).await.unwrap();
        assert_eq!(per_query[0].as_ref().unwrap(), &[Int8(1000)]);
        assert_eq!(per_query[1].as_ref().unwrap_err().code(), Some("22012"));
        assert_eq!(per_query[2].as_ref().unwrap(), &[Int8(250)]);
        let queries: Vec<_> = [1i64, 2].iter().map(|d| query::<Int8>(t, &[d])).collect();
        let atomic = conn.pipeline_atomic(queries).await.unwrap();
        assert_eq!(atomic, [vec![Int8(1000)], vec![Int8(500)]]);
        let two = 2i64;
        let sql: [(&str, &[&(dyn qail_pg::Encode + Sync)]); 1] =
            [("SELECT generate_series(1, $1::int8)", &[&two])];
        let counts = conn.pipeline_builder().sql(&sql).count().await.unwrap();
        assert_eq!(counts[0].as_ref().unwrap(), &2);
        let mut p = conn.pipeline_builder();
        let handle = p.add(query::<Int8>(t, &[&8i64]));
        let mut results = p.run().await.unwrap();
        assert_eq!(results.get(handle).unwrap(), [Int8(125)]);
        conn
    });
    handle.await.unwrap().close().await;
}
