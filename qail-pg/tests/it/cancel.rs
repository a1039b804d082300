//! Cancelling queries, query time-outs, a terminated backend.

use std::time::Duration;

use qail_pg::{CancelToken, Connection};

use super::compiled::{Int8, col, query, template};

fn assert_send_clone<T: Send + Sync + Clone + 'static>() {}

/// Cancels a `pg_sleep(30)` from another task and checks the connection goes on.
pub(crate) async fn cancel_sleep(conn: &mut Connection) {
    let token = conn.cancel_token();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        token.cancel().await.unwrap();
    });
    let err = conn.query("SELECT pg_sleep(30)", &[]).await.unwrap_err();
    assert_eq!(err.code(), Some("57014"), "{err}");
    assert!(!err.is_closed());
    canceller.await.unwrap();
    let v: i64 = conn
        .query_one("SELECT $1::int8", &[&3i64])
        .await
        .unwrap()
        .get(0);
    assert_eq!(v, 3);
}

#[tokio::test]
async fn a_cancel_token_stops_a_running_query() {
    assert_send_clone::<CancelToken>();
    let mut conn = super::connect().await;
    cancel_sleep(&mut conn).await;
    // Cancelling an idle session does nothing.
    conn.cancel_token().cancel().await.unwrap();
    assert_eq!(conn.query("SELECT 1", &[]).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_cancel_reaches_a_tls_session_over_tls() {
    let env = |name: &str| {
        std::env::var(name).unwrap_or_else(|_| {
            panic!("{name} is not set: source scripts/auth-env (scripts/test does)")
        })
    };
    let url = format!(
        "host={} port={} user={} password='{}' dbname=postgres sslmode=require",
        env("QAIL_AUTH_HOST"),
        env("QAIL_AUTH_PORT"),
        env("QAIL_SSL_USER"),
        env("QAIL_SSL_PASSWORD"),
    );
    let mut conn = Connection::connect(&url).await.unwrap();
    cancel_sleep(&mut conn).await;
}

#[tokio::test]
async fn a_query_timeout_cancels_and_keeps_the_connection() {
    let mut conn = super::connect().await;
    conn.set_query_timeout(Some(Duration::from_millis(200)));
    let err = conn.query("SELECT pg_sleep(30)", &[]).await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(!conn.is_closed());
    let v: i64 = conn
        .query_one("SELECT $1::int8", &[&4i64])
        .await
        .unwrap()
        .get(0);
    assert_eq!(v, 4);
    let slow = template(
        "SELECT pg_sleep(30)::text::int8 AS v",
        &[],
        &[col("v", 20, "int8")],
    );
    let err = query::<Int8>(slow, &[])
        .fetch_all(&mut conn)
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    conn.set_query_timeout(None);
    assert_eq!(conn.query_timeout(), None);
    let v: i64 = conn
        .query_one("SELECT $1::int8", &[&5i64])
        .await
        .unwrap()
        .get(0);
    assert_eq!(v, 5);
    // Inside a transaction the time-out aborts it; rolling back recovers.
    conn.set_query_timeout(Some(Duration::from_millis(200)));
    let mut tx = conn.begin().await.unwrap();
    assert!(
        tx.query("SELECT pg_sleep(30)", &[])
            .await
            .unwrap_err()
            .is_timeout()
    );
    tx.rollback().await.unwrap();
    assert_eq!(conn.query("SELECT 1", &[]).await.unwrap().len(), 1);
}

#[tokio::test]
async fn the_time_out_covers_batch_execute_and_pipelines() {
    let mut conn = super::connect().await;
    conn.batch_execute(
        "DROP SCHEMA IF EXISTS qail_it_timeout CASCADE; CREATE SCHEMA qail_it_timeout;
         CREATE TABLE qail_it_timeout.t (v int8)",
    )
    .await
    .unwrap();
    conn.set_query_timeout(Some(Duration::from_millis(300)));
    let err = conn
        .batch_execute("INSERT INTO qail_it_timeout.t VALUES (1); SELECT pg_sleep(30)")
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(!conn.is_closed());

    // An atomic batch whose last query sleeps: cancelled, and nothing of it committed.
    let insert = template(
        "INSERT INTO qail_it_timeout.t VALUES ($1::int8) RETURNING v",
        &[20],
        &[col("v", 20, "int8")],
    );
    let slow = template(
        "SELECT pg_sleep(30)::text::int8 AS v",
        &[],
        &[col("v", 20, "int8")],
    );
    let (a, b) = (2i64, 3i64);
    let mut p = conn.pipeline_builder().atomic();
    p.add(query::<Int8>(insert, &[&a]));
    p.add(query::<Int8>(insert, &[&b]));
    p.add(query::<Int8>(slow, &[]));
    let err = p.run().await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(!conn.is_closed());
    // A per-query pipeline times out too.
    let err = conn.pipeline([query::<Int8>(slow, &[])]).await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    conn.set_query_timeout(None);
    let n: i64 = conn
        .query_one("SELECT count(*) FROM qail_it_timeout.t", &[])
        .await
        .unwrap()
        .get(0);
    // Note: the statements of one batch_execute are one implicit transaction, cancelled whole.
    assert_eq!(
        n, 0,
        "neither the batch_execute INSERT nor the atomic batch committed"
    );
    let rows = conn
        .pipeline_atomic([query::<Int8>(insert, &[&a])])
        .await
        .unwrap();
    assert_eq!(rows, [[Int8(2)]]);
}

#[tokio::test]
async fn a_terminated_backend_is_a_closed_error() {
    let mut conn = super::connect().await;
    let mut admin = super::connect().await;
    admin
        .query("SELECT pg_terminate_backend($1)", &[&conn.process_id()])
        .await
        .unwrap();
    let err = conn.query("SELECT 1", &[]).await.unwrap_err();
    assert!(err.is_closed(), "{err}");
    assert!(conn.is_closed());
    let err = conn.query("SELECT 1", &[]).await.unwrap_err();
    assert!(
        err.is_closed() && err.to_string().contains("open a new connection"),
        "{err}"
    );
}

#[tokio::test]
async fn a_late_cancel_never_hits_the_next_query() {
    // Note: a time-out close to the query's own duration races the cancel against the
    // query's end; a cancel that lands late must not fail the next query (lib/pq #1000).
    let tasks: Vec<_> = (0..4u64)
        .map(|task| {
            tokio::spawn(async move {
                let mut conn = super::connect().await;
                let (mut timed_out, mut finished, mut closed) = (0, 0, 0);
                for i in 0..500u64 {
                    let limit = Duration::from_micros(5_000 + (i * 7 + task * 3) % 16 * 1_000);
                    conn.set_query_timeout(Some(limit));
                    match conn.query("SELECT pg_sleep(0.01)", &[]).await {
                        Ok(_) => finished += 1,
                        Err(e) if e.is_timeout() => timed_out += 1,
                        Err(e) => panic!("loop {i}, time-out {limit:?}: {e}"),
                    }
                    if conn.is_closed() {
                        // Note: the cancel and drain did not finish within their grace (a
                        // busy machine); the connection was discarded, as documented.
                        closed += 1;
                        conn = super::connect().await;
                    }
                    conn.set_query_timeout(None);
                    let next = conn.query("SELECT 1", &[]).await;
                    if let Err(e) = next {
                        panic!("loop {i}, time-out {limit:?}: the next query failed: {e}");
                    }
                }
                (timed_out, finished, closed)
            })
        })
        .collect();
    let (mut timed_out, mut finished, mut closed) = (0, 0, 0);
    for task in tasks {
        let (t, f, c) = task.await.unwrap();
        timed_out += t;
        finished += f;
        closed += c;
    }
    eprintln!("late cancel race: {timed_out} timed out ({closed} closed), {finished} finished");
    // Both sides of the race happened, and few cancels took longer than their grace.
    assert!(timed_out > 0 && finished > 0, "{timed_out} {finished}");
    assert!(closed * 10 <= timed_out, "{closed} of {timed_out} closed");
}

#[tokio::test]
async fn statement_timeout_is_a_typed_error_and_the_connection_stays() {
    let mut conn = super::connect().await;
    conn.batch_execute("SET statement_timeout = '50ms'")
        .await
        .unwrap();
    let err = conn.query("SELECT pg_sleep(1)", &[]).await.unwrap_err();
    assert_eq!(err.code(), Some("57014"), "{err}");
    assert!(!err.is_timeout() && !err.is_closed(), "{err}");
    let err = conn.batch_execute("SELECT pg_sleep(1)").await.unwrap_err();
    assert_eq!(err.code(), Some("57014"), "{err}");
    let v: i64 = conn
        .query_one("SELECT $1::int8", &[&6i64])
        .await
        .unwrap()
        .get(0);
    assert_eq!(v, 6);
    assert!(!conn.is_closed());
}
