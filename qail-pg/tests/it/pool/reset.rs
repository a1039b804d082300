//! The pool's choice of reset: the whole session (the default, also tested by
//! `session_state_never_reaches_the_next_user`) or only the transaction.

use std::time::Duration;

use qail_pg::{Connection, Pool, PoolReset, TransactionStatus};

use super::{app_name, config};

/// What a previous user's transaction could have left behind: its advisory lock, its local
/// setting.
async fn transaction_state(conn: &mut Connection) -> (i64, String) {
    let row = conn
        .query_one(
            "SELECT (SELECT count(*) FROM pg_locks
                      WHERE locktype = 'advisory' AND pid = pg_backend_pid()),
                    current_setting('app.local', true)",
            &[],
        )
        .await
        .unwrap();
    (row.get(0), row.get::<Option<String>>(1).unwrap_or_default())
}

#[tokio::test]
async fn a_transaction_reset_rolls_back_and_keeps_the_session() {
    let pool = Pool::builder()
        .max_size(1)
        .reset(PoolReset::Transaction)
        .connect_with(config(&app_name("reset_transaction")))
        .await
        .unwrap();
    let mut conn = pool.acquire().await.unwrap();
    let pid = conn.process_id();
    conn.batch_execute("SET app.tenant = 'acme'").await.unwrap();
    conn.batch_execute("BEGIN; SELECT pg_advisory_xact_lock(4714); SET LOCAL app.local = 'x'")
        .await
        .unwrap();
    assert_eq!(conn.transaction_status(), TransactionStatus::InTransaction);
    drop(conn);

    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(conn.process_id(), pid, "the same connection is reused");
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    assert_eq!(transaction_state(&mut conn).await, (0, String::new()));
    // Note: session state is the application's to manage under this choice.
    let tenant: Option<String> = conn
        .query_one("SELECT current_setting('app.tenant', true)", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(tenant.as_deref(), Some("acme"), "the session is kept");

    conn.batch_execute("BEGIN").await.unwrap();
    assert!(conn.batch_execute("SELECT 1 / 0").await.is_err());
    assert_eq!(conn.transaction_status(), TransactionStatus::Failed);
    drop(conn);
    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(conn.process_id(), pid);
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    let row = conn.query_one("SELECT 7::int4", &[]).await.unwrap();
    assert_eq!(row.get::<i32>(0), 7);
    assert_eq!(pool.stats().destroyed, 0);
}

/// A previous user's time-outs apply to the reset's own statements until its `RESET ALL`:
/// the reset either runs or fails and the connection is closed — the next user never sees
/// the time-outs.
#[tokio::test]
async fn time_outs_the_previous_user_set_never_reach_the_next() {
    let pool = Pool::builder()
        .max_size(1)
        .health_check_after(Some(Duration::ZERO))
        .connect_with(config(&app_name("reset_timeouts")))
        .await
        .unwrap();
    for _ in 0..5 {
        let mut conn = pool.acquire().await.unwrap();
        let row = conn
            .query_one(
                "SELECT current_setting('statement_timeout'), current_setting('lock_timeout')",
                &[],
            )
            .await
            .unwrap();
        assert_eq!((row.get::<&str>(0), row.get::<&str>(1)), ("0", "0"));
        conn.batch_execute("SET statement_timeout = 1; SET lock_timeout = 1; BEGIN")
            .await
            .unwrap();
    }
    let stats = pool.stats();
    assert_eq!(stats.created - stats.destroyed, 1, "{stats:?}");
}
