//! Atomic pipelines: one Sync per batch, all or nothing.

use qail_pg::{Connection, NoRows, TransactionStatus};

use super::compiled::{Int8, Pair, col, query, template};

/// A fresh table `qail_it_<name>.t (v int8)`.
async fn table(conn: &mut Connection, name: &str) {
    conn.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS qail_it_{name} CASCADE; CREATE SCHEMA qail_it_{name};
         CREATE TABLE qail_it_{name}.t (v int8)"
    ))
    .await
    .unwrap();
}

async fn count(conn: &mut Connection, name: &str) -> i64 {
    conn.query_one(&format!("SELECT count(*) FROM qail_it_{name}.t"), &[])
        .await
        .unwrap()
        .get(0)
}

/// `INSERT INTO qail_it_<name>.t VALUES (1000 / $1)`: fails with 22012 when `$1` is 0.
fn insert_div(name: &str) -> &'static qail_pg::Template {
    let sql: &'static str = Box::leak(
        format!("INSERT INTO qail_it_{name}.t VALUES (1000 / $1::int8)").into_boxed_str(),
    );
    template(sql, &[20], &[])
}

#[tokio::test]
async fn ten_thousand_queries_in_one_atomic_batch() {
    let mut conn = super::connect().await;
    let t = template(
        "SELECT $1::int8 AS id, 'n' || $1::int8 AS name",
        &[20],
        &[col("id", 20, "int8"), col("name", 25, "text")],
    );
    let ids: Vec<i64> = (0..10_000).collect();
    let results = conn
        .pipeline_atomic(ids.iter().map(|id| query::<Pair>(t, &[id])))
        .await
        .unwrap();
    assert_eq!(results.len(), 10_000);
    for (id, rows) in ids.iter().zip(&results) {
        assert_eq!(
            rows,
            &[Pair {
                id: *id,
                name: format!("n{id}")
            }]
        );
    }
    let counts = conn
        .pipeline_builder()
        .atomic()
        .queries(ids.iter().map(|id| query::<Pair>(t, &[id])))
        .count()
        .await
        .unwrap();
    assert_eq!(counts, vec![1; 10_000]);
    let none = conn
        .pipeline_atomic(std::iter::empty::<qail_pg::Query<'_, Pair>>())
        .await
        .unwrap();
    assert!(none.is_empty());
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
}

#[tokio::test]
async fn an_error_in_query_500_of_1000_rolls_back_the_whole_batch() {
    let mut conn = super::connect().await;
    table(&mut conn, "atomic_err").await;
    let t = insert_div("atomic_err");
    let divisors: Vec<i64> = (0..1000).map(|i| if i == 499 { 0 } else { 1 }).collect();
    let err = conn
        .pipeline_builder()
        .atomic()
        .queries(divisors.iter().map(|d| query::<NoRows>(t, &[d])))
        .count()
        .await
        .unwrap_err();
    assert_eq!(err.pipeline_index(), Some(499), "{err}");
    assert_eq!(err.code(), Some("22012"));
    let message = err.to_string();
    assert!(message.contains("query 500 (index 499)"), "{message}");
    assert!(message.contains("rolled back every query"), "{message}");
    // The 499 INSERTs before the failing one were undone with it.
    assert_eq!(count(&mut conn, "atomic_err").await, 0);
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    // The statement prepared inside the failed batch is still usable.
    let ok = conn
        .pipeline_builder()
        .atomic()
        .queries((0..1000).map(|_| query::<NoRows>(t, &[&2i64])))
        .count()
        .await
        .unwrap();
    assert_eq!(ok, vec![1; 1000]);
    assert_eq!(count(&mut conn, "atomic_err").await, 1000);
}

#[tokio::test]
async fn an_error_the_client_finds_before_the_sync_rolls_back_too() {
    let mut conn = super::connect().await;
    table(&mut conn, "atomic_client").await;
    let t = insert_div("atomic_client");
    // Query 3 has no value for its parameter: it cannot be sent.
    let one = 1i64;
    let queries = (0..5).map(|i| {
        if i == 3 {
            query::<NoRows>(t, &[])
        } else {
            query::<NoRows>(t, &[&one])
        }
    });
    let err = conn
        .pipeline_builder()
        .atomic()
        .queries(queries)
        .count()
        .await
        .unwrap_err();
    assert_eq!(err.pipeline_index(), Some(3), "{err}");
    assert!(err.to_string().contains("one value per $n"), "{err}");
    assert_eq!(count(&mut conn, "atomic_client").await, 0);
}

#[tokio::test]
async fn a_failed_commit_has_no_query_index() {
    let mut conn = super::connect().await;
    conn.batch_execute(
        "DROP SCHEMA IF EXISTS qail_it_atomic_commit CASCADE; CREATE SCHEMA qail_it_atomic_commit;
         CREATE TABLE qail_it_atomic_commit.t (v int8 UNIQUE DEFERRABLE INITIALLY DEFERRED)",
    )
    .await
    .unwrap();
    let t = insert_div("atomic_commit");
    // Both insert 1000 / 1: the unique check fails only when the batch commits.
    let err = conn
        .pipeline_builder()
        .atomic()
        .queries([1i64, 1].iter().map(|d| query::<NoRows>(t, &[d])))
        .count()
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("23505"), "{err}");
    assert_eq!(err.pipeline_index(), None);
    assert!(err.to_string().contains("as it committed"), "{err}");
    assert_eq!(count(&mut conn, "atomic_commit").await, 0);
}

#[tokio::test]
async fn inside_a_transaction_the_batch_joins_it_and_an_error_aborts_it() {
    let mut conn = super::connect().await;
    table(&mut conn, "atomic_tx").await;
    let t = insert_div("atomic_tx");
    let mut tx = conn.begin().await.unwrap();
    let counts = tx
        .pipeline_builder()
        .atomic()
        .queries([1i64, 2].iter().map(|d| query::<NoRows>(t, &[d])))
        .count()
        .await
        .unwrap();
    assert_eq!(counts, [1, 1]);
    assert_eq!(tx.transaction_status(), TransactionStatus::InTransaction);
    let err = tx
        .pipeline_builder()
        .atomic()
        .queries([1i64, 0, 2].iter().map(|d| query::<NoRows>(t, &[d])))
        .count()
        .await
        .unwrap_err();
    assert_eq!(err.pipeline_index(), Some(1));
    assert!(err.to_string().contains("transaction block"), "{err}");
    assert_eq!(tx.transaction_status(), TransactionStatus::Failed);
    let refused = tx.execute("SELECT 1", &[]).await.unwrap_err();
    assert_eq!(refused.code(), Some("25P02"));
    tx.rollback().await.unwrap();
    // The successful batch was part of the rolled-back block.
    assert_eq!(count(&mut conn, "atomic_tx").await, 0);

    let mut tx = conn.begin().await.unwrap();
    tx.pipeline_builder()
        .atomic()
        .queries([4i64, 5].iter().map(|d| query::<NoRows>(t, &[d])))
        .count()
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(count(&mut conn, "atomic_tx").await, 2);
}

#[tokio::test]
async fn the_builder_runs_mixed_queries_atomically() {
    let mut conn = super::connect().await;
    table(&mut conn, "atomic_build").await;
    let t = insert_div("atomic_build");
    let read = template(
        "SELECT (sum(v))::int8 AS v FROM qail_it_atomic_build.t",
        &[],
        &[col("v", 20, "int8")],
    );
    let mut p = conn.pipeline_builder().atomic();
    let a = p.add_count(query::<NoRows>(t, &[&10i64]));
    let b = p.add(query::<Int8>(read, &[]));
    let c = p.add_sql("SELECT $1::text || 'b'", &[&"a"]);
    let mut results = p.run().await.unwrap();
    assert_eq!(results.get(a).unwrap(), 1);
    assert_eq!(results.get(b).unwrap(), [Int8(100)]);
    assert_eq!(results.get(c).unwrap()[0].get::<&str>(0), "ab");

    let mut p = conn.pipeline_builder().atomic();
    p.add_count(query::<NoRows>(t, &[&10i64]));
    p.add_sql("SELECT 1 / $1::int4", &[&0i32]);
    let err = p.run().await.unwrap_err();
    assert_eq!(err.pipeline_index(), Some(1));
    assert_eq!(err.code(), Some("22012"));
    assert_eq!(count(&mut conn, "atomic_build").await, 1);
}

#[tokio::test]
async fn run_time_sql_batches_are_atomic_too() {
    let mut conn = super::connect().await;
    table(&mut conn, "atomic_sql").await;
    let (one, zero) = (1i64, 0i64);
    let err = conn
        .pipeline_builder()
        .atomic()
        .sql(&[
            ("INSERT INTO qail_it_atomic_sql.t VALUES ($1)", &[&one]),
            ("SELECT 1 / $1::int8", &[&zero]),
        ])
        .rows()
        .await
        .unwrap_err();
    assert_eq!(err.pipeline_index(), Some(1));
    assert_eq!(count(&mut conn, "atomic_sql").await, 0);
    let rows = conn
        .pipeline_builder()
        .atomic()
        .sql(&[
            ("INSERT INTO qail_it_atomic_sql.t VALUES ($1)", &[&one]),
            ("SELECT count(*) FROM qail_it_atomic_sql.t", &[]),
        ])
        .rows()
        .await
        .unwrap();
    assert_eq!(rows[1][0].get::<i64>(0), 1);
}

#[tokio::test]
async fn a_drifted_template_fails_the_batch_and_names_the_first_query_using_it() {
    let mut conn = super::connect().await;
    let fine = template("SELECT $1::int8 AS v", &[20], &[col("v", 20, "int8")]);
    // The server says int4 where the compiled query expects int8.
    let drifted = template("SELECT $1::int4 + 0 AS v", &[23], &[col("v", 20, "int8")]);
    let (a, b) = (7i64, 7i32);
    let mut p = conn.pipeline_builder().atomic();
    p.add(query::<Int8>(fine, &[&a]));
    p.add(query::<Int8>(drifted, &[&b]));
    let err = p.run().await.unwrap_err();
    assert!(err.is_schema_drift(), "{err}");
    assert_eq!(err.pipeline_index(), Some(1));
    assert!(err.to_string().contains("column \"v\""), "{err}");
    let rows = conn
        .pipeline_atomic([query::<Int8>(fine, &[&a])])
        .await
        .unwrap();
    assert_eq!(rows, [[Int8(7)]]);
}

#[tokio::test]
async fn rows_are_visited_borrowed_in_order_with_their_query_index() {
    let mut conn = super::connect().await;
    let t = template(
        "SELECT g AS id, 'n' || g AS name FROM generate_series(1, $1::int8) g",
        &[20],
        &[col("id", 20, "int8"), col("name", 25, "text")],
    );
    // Query i returns i rows: 0, 1, …, 299 (the first template use is described inside).
    let limits: Vec<i64> = (0..300).collect();
    let mut seen: Vec<(usize, i64, String)> = Vec::new();
    let counts = conn
        .pipeline_builder()
        .atomic()
        .queries(limits.iter().map(|n| query::<Pair>(t, &[n])))
        .for_each(|index, row, columns| {
            let id: i64 = row.get_next(columns)?;
            let name: &str = row.get_next(columns)?;
            seen.push((index, id, name.to_owned()));
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!(counts, (0..300).collect::<Vec<u64>>());
    let expected: Vec<(usize, i64, String)> = (0..300usize)
        .flat_map(|q| (1..=i64::try_from(q).unwrap()).map(move |g| (q, g, format!("n{g}"))))
        .collect();
    assert_eq!(seen, expected);

    // Per-query mode: the same rows, and each query's count.
    let mut names = 0;
    let results = conn
        .pipeline_builder()
        .queries(limits.iter().map(|n| query::<Pair>(t, &[n])))
        .for_each(|_, row, c| {
            row.get_next::<i64>(c)?;
            names += row.get_next::<&str>(c)?.len();
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!(results.len(), 300);
    assert!(
        results
            .iter()
            .enumerate()
            .all(|(i, r)| r.as_ref().ok() == Some(&(i as u64)))
    );
    assert_eq!(
        names,
        expected.iter().map(|(_, _, n)| n.len()).sum::<usize>()
    );
}

#[tokio::test]
async fn an_error_from_the_visitor_fails_the_batch_and_says_what_became_of_it() {
    let mut conn = super::connect().await;
    table(&mut conn, "atomic_visit").await;
    let t = template(
        "INSERT INTO qail_it_atomic_visit.t VALUES ($1::int8) RETURNING v",
        &[20],
        &[col("v", 20, "int8")],
    );
    let refuse_row_7 = |i: usize, row: &mut qail_pg::RawRow<'_>, c: &[qail_pg::Oid]| {
        let v: i64 = row.get_next(c)?;
        if i == 7 {
            return Err(qail_pg::Error::caller(format!("refusing {v}")));
        }
        Ok(())
    };
    // A large batch: the error is found while the batch is still being sent, so the client
    // ends it without committing.
    let many: Vec<i64> = (0..20_000).collect();
    let err = conn
        .pipeline_builder()
        .atomic()
        .queries(many.iter().map(|v| query::<Int8>(t, &[v])))
        .for_each(refuse_row_7)
        .await
        .unwrap_err();
    assert_eq!(err.pipeline_index(), Some(7), "{err}");
    assert!(err.is_caller(), "{err}");
    assert_eq!(
        std::error::Error::source(&err).map(ToString::to_string),
        Some("refusing 7".to_owned())
    );
    assert!(err.to_string().contains("rolled back every query"), "{err}");
    assert_eq!(
        count(&mut conn, "atomic_visit").await,
        0,
        "nothing was inserted"
    );
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    // A small batch is sent whole, Sync included, before its first row is read: the error
    // says that it committed.
    let few: Vec<i64> = (0..50).collect();
    let err = conn
        .pipeline_builder()
        .atomic()
        .queries(few.iter().map(|v| query::<Int8>(t, &[v])))
        .for_each(refuse_row_7)
        .await
        .unwrap_err();
    assert_eq!(err.pipeline_index(), Some(7), "{err}");
    assert!(err.to_string().contains("already committed"), "{err}");
    assert_eq!(count(&mut conn, "atomic_visit").await, 50);
    // The connection is usable afterwards.
    let counts = conn
        .pipeline_builder()
        .atomic()
        .queries(few.iter().map(|v| query::<Int8>(t, &[v])))
        .for_each(|_, _, _| Ok(()))
        .await
        .unwrap();
    assert_eq!(counts, vec![1; 50]);
    assert_eq!(count(&mut conn, "atomic_visit").await, 100);
}

/// Statements without rows (`NoRows`) in `pipeline_atomic` and `pipeline`: the number of rows
/// each affected, and the futures still run on a spawned task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statements_without_rows_give_their_counts() {
    let mut conn = super::connect().await;
    table(&mut conn, "atomic_norows").await;
    let t = insert_div("atomic_norows");
    let handle = tokio::spawn(async move {
        let divisors = [1i64, 2, 4];
        let inserts: Vec<_> = divisors.iter().map(|d| query::<NoRows>(t, &[d])).collect();
        let counts: Vec<u64> = conn.pipeline_atomic(inserts).await.unwrap();
        assert_eq!(counts, [1, 1, 1]);
        assert_eq!(count(&mut conn, "atomic_norows").await, 3);

        let update = template(
            "UPDATE qail_it_atomic_norows.t SET v = v + 1 WHERE v >= $1::int8",
            &[20],
            &[],
        );
        let bounds = [500i64, 0];
        let updates: Vec<_> = bounds
            .iter()
            .map(|b| query::<NoRows>(update, &[b]))
            .collect();
        assert_eq!(conn.pipeline_atomic(updates).await.unwrap(), [2, 3]);

        let zero = [1i64, 0];
        let inserts: Vec<_> = zero.iter().map(|d| query::<NoRows>(t, &[d])).collect();
        let each: Vec<Result<u64, qail_pg::Error>> = conn.pipeline(inserts).await.unwrap();
        assert_eq!(*each[0].as_ref().unwrap(), 1);
        assert_eq!(each[1].as_ref().unwrap_err().code(), Some("22012"));
        conn
    });
    let mut conn = handle.await.unwrap();
    assert_eq!(count(&mut conn, "atomic_norows").await, 4);
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
}
