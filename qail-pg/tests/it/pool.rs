//! The pool against a real server: limits under cancellation, session state reset between
//! users, dead and old connections replaced, time-outs, closing.

mod fake;
mod lifecycle;
mod queries;
mod replicas;
mod reset;
mod stats;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use qail_pg::{Config, Connection, Pool, TransactionStatus};
use tokio::time::timeout;

/// An application_name no other test (or concurrent run) uses, to count our backends.
fn app_name(test: &str) -> String {
    format!("qail_it_pool_{test}_{}", std::process::id())
}

fn config(app: &str) -> Config {
    super::config().application_name(app)
}

/// How many server backends carry `app` as their application_name.
async fn backends(monitor: &mut Connection, app: &str) -> i64 {
    monitor
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
            &[&app],
        )
        .await
        .unwrap()
        .get(0)
}

/// Waits (bounded) until `done` holds; a condition that never comes true fails the test.
async fn eventually<F, Fut>(what: &str, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..1000 {
        if done().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what} did not happen within 10 s");
}

/// Terminates a backend from another session and waits until it is gone.
async fn terminate(monitor: &mut Connection, pid: i32) {
    let row = monitor
        .query_one("SELECT pg_terminate_backend($1)", &[&pid])
        .await
        .unwrap();
    assert!(row.get::<bool>(0), "backend {pid} was not running");
    for _ in 0..1000 {
        let alive: i64 = monitor
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = $1",
                &[&pid],
            )
            .await
            .unwrap()
            .get(0);
        if alive == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("backend {pid} did not exit within 10 s of pg_terminate_backend");
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Completed,
    CancelledAcquire,
    CancelledQuery,
}

async fn task(pool: Pool, i: i32) -> Outcome {
    match i % 6 {
        0 => match timeout(Duration::from_millis(1), pool.acquire()).await {
            Err(_) => Outcome::CancelledAcquire,
            Ok(conn) => {
                drop(conn.unwrap());
                Outcome::Completed
            }
        },
        3 => {
            let mut conn = pool.acquire().await.unwrap();
            let sleep = conn.query("SELECT pg_sleep(0.05)", &[]);
            match timeout(Duration::from_millis(10), sleep).await {
                Err(_) => Outcome::CancelledQuery,
                Ok(rows) => {
                    rows.unwrap();
                    Outcome::Completed
                }
            }
        }
        _ => {
            let mut conn = pool.acquire().await.unwrap();
            assert!(pool.stats().size <= 2, "{:?}", pool.stats());
            let row = conn
                .query_one("SELECT $1::int4 FROM pg_sleep(0.05)", &[&i])
                .await
                .unwrap();
            assert_eq!(row.get::<i32>(0), i);
            assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
            Outcome::Completed
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_tasks_share_two_connections_through_cancellations() {
    let app = app_name("stress");
    let pool = Pool::builder()
        .max_size(2)
        .connect_with(config(&app))
        .await
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let monitor = tokio::spawn({
        let (app, pool, stop) = (app.clone(), pool.clone(), Arc::clone(&stop));
        async move {
            let mut monitor = super::connect().await;
            let (mut max_backends, mut max_size) = (0, 0);
            while !stop.load(Ordering::Acquire) {
                max_backends = max_backends.max(backends(&mut monitor, &app).await);
                max_size = max_size.max(pool.stats().size);
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            (max_backends, max_size)
        }
    });
    let tasks: Vec<_> = (0..50)
        .map(|i| tokio::spawn(task(pool.clone(), i)))
        .collect();
    let mut outcomes = Vec::new();
    for t in tasks {
        outcomes.push(
            t.await
                .expect("every task that was not cancelled completes"),
        );
    }
    stop.store(true, Ordering::Release);
    let (max_backends, max_size) = monitor.await.unwrap();

    let count = |o: Outcome| outcomes.iter().filter(|&&x| x == o).count();
    assert_eq!(count(Outcome::CancelledQuery), 8, "{outcomes:?}");
    assert!(count(Outcome::CancelledAcquire) >= 1, "{outcomes:?}");
    assert_eq!(
        count(Outcome::Completed) + count(Outcome::CancelledAcquire),
        42
    );
    assert!((1..=2).contains(&max_backends), "{max_backends} backends");
    assert!((1..=2).contains(&max_size), "pool size {max_size}");

    // Both connections still work, and nobody is left waiting.
    let (mut a, mut b) = (pool.acquire().await.unwrap(), pool.acquire().await.unwrap());
    assert_ne!(a.process_id(), b.process_id());
    a.batch_execute("SELECT 1").await.unwrap();
    b.batch_execute("SELECT 1").await.unwrap();
    let stats = pool.stats();
    assert_eq!((stats.size, stats.in_use, stats.waiters), (2, 2, 0));
    assert_eq!(stats.created, 2, "{stats:?}");
}

/// Creates the role the session-state test switches to (once; reruns find it).
async fn ensure_role(conn: &mut Connection) {
    conn.batch_execute(
        "DO $$ BEGIN CREATE ROLE qail_it_pool_role; \
         EXCEPTION WHEN duplicate_object THEN NULL; END $$",
    )
    .await
    .unwrap();
}

/// Everything a previous user could have left behind, seen from the next user.
async fn assert_clean(conn: &mut Connection, user: &str) {
    let row = conn
        .query_one(
            "SELECT current_setting('app.tenant', true), current_user::text, session_user::text,
                    (SELECT count(*) FROM pg_listening_channels()),
                    (SELECT count(*) FROM pg_locks
                      WHERE locktype = 'advisory' AND pid = pg_backend_pid()),
                    to_regclass('pg_temp.qail_it_pool_temp') IS NULL,
                    (SELECT count(*) FROM pg_cursors WHERE name = 'qail_it_pool_cursor'),
                    current_setting('default_transaction_read_only')",
            &[],
        )
        .await
        .unwrap();
    let tenant = row.get::<Option<String>>(0).unwrap_or_default();
    assert_eq!(tenant, "", "a setting leaked");
    assert_eq!(row.get::<&str>(1), user, "the role leaked");
    assert_eq!(row.get::<&str>(2), user, "the session authorization leaked");
    assert_eq!(row.get::<i64>(3), 0, "a LISTEN leaked");
    assert_eq!(row.get::<i64>(4), 0, "an advisory lock leaked");
    assert!(row.get::<bool>(5), "a temporary table leaked");
    assert_eq!(row.get::<i64>(6), 0, "a cursor leaked");
    assert_eq!(row.get::<&str>(7), "off", "a read-only default leaked");
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
}

#[tokio::test]
async fn session_state_never_reaches_the_next_user() {
    let pool = Pool::builder()
        .max_size(1)
        .connect_with(config(&app_name("state")))
        .await
        .unwrap();
    let mut conn = pool.acquire().await.unwrap();
    ensure_role(&mut conn).await;
    let pid = conn.process_id();
    let user: String = conn
        .query_one("SELECT current_user::text", &[])
        .await
        .unwrap()
        .get(0);
    conn.prepare("SELECT 4711 AS qail_it_pool_prepared")
        .await
        .unwrap();
    conn.batch_execute(
        "SET app.tenant = 'acme';
         LISTEN qail_it_pool_channel;
         SELECT pg_advisory_lock(4711);
         CREATE TEMP TABLE qail_it_pool_temp (x int4);
         DECLARE qail_it_pool_cursor CURSOR WITH HOLD FOR SELECT 1;
         SET ROLE qail_it_pool_role;
         SET default_transaction_read_only = on;",
    )
    .await
    .unwrap();
    // Note: in one Query with the statements above, BEGIN would take them into the
    // transaction, and the ROLLBACK alone would undo them.
    conn.batch_execute("BEGIN; SELECT 1").await.unwrap();
    assert_eq!(conn.transaction_status(), TransactionStatus::InTransaction);
    drop(conn);

    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(conn.process_id(), pid, "the same connection is reused");
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    assert_clean(&mut conn, &user).await;
    // The statement cache survives the reset: the statement is still prepared.
    let prepared: i64 = conn
        .query_one(
            "SELECT count(*) FROM pg_prepared_statements
              WHERE statement = 'SELECT 4711 AS qail_it_pool_prepared'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(prepared, 1);

    // SET SESSION AUTHORIZATION and a failed transaction.
    conn.batch_execute("SET SESSION AUTHORIZATION qail_it_pool_role; BEGIN")
        .await
        .unwrap();
    assert!(conn.batch_execute("SELECT 1 / 0").await.is_err());
    assert_eq!(conn.transaction_status(), TransactionStatus::Failed);
    drop(conn);
    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(conn.process_id(), pid);
    assert_clean(&mut conn, &user).await;
    assert_eq!(pool.stats().destroyed, 0);
}

#[tokio::test]
async fn a_cancelled_query_is_drained_and_the_connection_reused() {
    let pool = Pool::builder()
        .max_size(1)
        .connect_with(config(&app_name("drain")))
        .await
        .unwrap();
    let mut conn = pool.acquire().await.unwrap();
    let pid = conn.process_id();
    conn.batch_execute("BEGIN").await.unwrap();
    let sleep = conn.query("SELECT pg_sleep(0.2)", &[]);
    assert!(timeout(Duration::from_millis(20), sleep).await.is_err());
    drop(conn);

    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(conn.process_id(), pid, "drained, not replaced");
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    let row = conn.query_one("SELECT 7::int4", &[]).await.unwrap();
    assert_eq!(row.get::<i32>(0), 7);
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    assert_eq!(pool.stats().destroyed, 0);
}

#[tokio::test]
async fn a_returned_connection_holds_no_lock_or_transaction_while_idle() {
    let pool = Pool::builder()
        .max_size(1)
        .connect_with(config(&app_name("idle_locks")))
        .await
        .unwrap();
    let mut monitor = super::connect().await;
    let mut conn = pool.acquire().await.unwrap();
    let pid = conn.process_id();
    conn.batch_execute("SELECT pg_advisory_lock(4712)")
        .await
        .unwrap();
    conn.batch_execute("BEGIN; SELECT pg_advisory_xact_lock(4713)")
        .await
        .unwrap();
    drop(conn);
    // Nobody acquires: the reset must have run on the server all the same.
    let mut state = (String::new(), -1);
    for _ in 0..1000 {
        let row = monitor
            .query_one(
                "SELECT state, (SELECT count(*) FROM pg_locks
                                 WHERE locktype = 'advisory' AND pid = $1)
                   FROM pg_stat_activity WHERE pid = $1",
                &[&pid],
            )
            .await
            .unwrap();
        state = (row.get::<String>(0), row.get::<i64>(1));
        if state == ("idle".to_owned(), 0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        state,
        ("idle".to_owned(), 0),
        "state and advisory locks of {pid}"
    );
    assert_eq!(pool.stats().idle, 1);
}

/// A pipeline on a reused connection reads only its own replies, not those of the session
/// reset the pool queued when the connection came back.
#[tokio::test]
async fn pipeline_on_a_reused_connection_reads_its_own_replies() {
    let pool = Pool::builder()
        .max_size(1)
        .connect_with(config(&app_name("pipeline_reuse")))
        .await
        .unwrap();
    for round in 0..3i32 {
        let mut conn = pool.acquire().await.unwrap();
        let (a, b) = (round, round + 10);
        let results = conn
            .pipeline_builder()
            .sql(&[
                ("SELECT $1::int4, 'a'::text", &[&a]),
                ("SELECT $1::int4, 'b'::text", &[&b]),
            ])
            .rows()
            .await
            .unwrap();
        let got: Vec<(i32, String)> = results
            .into_iter()
            .map(|rows| {
                let rows = rows.unwrap();
                (rows[0].get(0), rows[0].get(1))
            })
            .collect();
        assert_eq!(got, vec![(a, "a".to_owned()), (b, "b".to_owned())]);
    }
    pool.close().await;
}
