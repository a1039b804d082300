//! The pool's choice of reset: the whole session (the default, also tested by
//! `session_state_never_reaches_the_next_user`) or only the transaction; the session's reset
//! skipped when the session did not change.

use std::time::Duration;

use qail_pg::{
    Connection, Error, FromRow, Oid, Pool, PoolReset, RawRow, Template, TransactionStatus,
};

use super::{app_name, config};
use crate::compiled::{col, query, template};

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

/// A text result, NULL or not.
struct Text(Option<String>);

impl FromRow for Text {
    fn from_row(row: &mut RawRow<'_>, columns: &[Oid]) -> Result<Self, Error> {
        Ok(Text(row.get_next(columns)?))
    }
}

/// A compiled statement of one text column `s`, marked as changing the session or not, as
/// `qail!` marks it from the analysis.
fn compiled(sql: &'static str, changes_session: bool) -> &'static Template {
    let built = template(sql, &[], &[col("s", 25, "text")]);
    Box::leak(Box::new(Template {
        changes_session,
        ..*built
    }))
}

async fn text(conn: &mut Connection, t: &'static Template) -> Option<String> {
    query::<Text>(t, &[]).fetch_one(conn).await.unwrap().0
}

/// The setting `app.unseen`, read by a compiled statement that leaves the session alone.
fn unseen() -> &'static Template {
    compiled("SELECT current_setting('app.unseen', true) AS s", false)
}

/// A connection that ran only statements not marked as changing the session goes back to
/// the pool with nothing sent: a change the marks did not announce (here `set_config` in an
/// unmarked statement, as a function the marks cannot see, one a domain's CHECK calls, would
/// make it) is still there for the next user, which it would not be had the session's reset
/// run. Run-time SQL, or a marked statement, brings the reset back.
#[tokio::test]
async fn a_session_that_ran_only_unmarked_statements_is_not_reset() {
    let pool = Pool::builder()
        .max_size(1)
        .connect_with(config(&app_name("reset_skipped")))
        .await
        .unwrap();
    let set = "SELECT set_config('app.unseen', 'left', false) AS s";
    let mut conn = pool.acquire().await.unwrap();
    let pid = conn.process_id();
    assert_eq!(
        text(&mut conn, compiled(set, false)).await.as_deref(),
        Some("left")
    );
    drop(conn);

    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(conn.process_id(), pid, "the same connection is reused");
    assert_eq!(
        text(&mut conn, unseen()).await.as_deref(),
        Some("left"),
        "no reset ran"
    );
    // The same statement marked: the session is reset.
    assert_eq!(
        text(&mut conn, compiled(set, true)).await.as_deref(),
        Some("left")
    );
    drop(conn);
    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(conn.process_id(), pid);
    assert_eq!(text(&mut conn, unseen()).await.unwrap_or_default(), "");

    // Run-time SQL after a clean start: reset.
    assert_eq!(
        text(&mut conn, compiled(set, false)).await.as_deref(),
        Some("left")
    );
    conn.batch_execute("CREATE TEMP TABLE qail_it_pool_unseen (x int4)")
        .await
        .unwrap();
    drop(conn);
    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(conn.process_id(), pid);
    assert_eq!(text(&mut conn, unseen()).await.unwrap_or_default(), "");
    let temp = compiled(
        "SELECT to_regclass('pg_temp.qail_it_pool_unseen')::text AS s",
        false,
    );
    assert_eq!(
        text(&mut conn, temp).await,
        None,
        "the temporary table is gone"
    );

    // A setting the server reports (application_name) changed by an unmarked statement: the
    // report counts as a change, and the session is reset.
    let renamed = compiled(
        "SELECT set_config('application_name', 'qail_it_pool_renamed', false) AS s",
        false,
    );
    text(&mut conn, renamed).await;
    assert_eq!(
        conn.parameter_status("application_name"),
        Some("qail_it_pool_renamed")
    );
    drop(conn);
    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(conn.process_id(), pid);
    let name = compiled("SELECT current_setting('application_name') AS s", false);
    assert_eq!(
        text(&mut conn, name).await.as_deref(),
        Some(app_name("reset_skipped").as_str())
    );
    assert_eq!(pool.stats().destroyed, 0);
}
