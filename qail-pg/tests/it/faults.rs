//! The network failing under a connection, through the fault proxy ([`crate::proxy`]).

use std::time::{Duration, Instant};

use qail_pg::Connection;

use crate::proxy::{Direction, Fault, Proxy};

async fn through(proxy: &Proxy) -> Connection {
    Connection::connect(&proxy.url())
        .await
        .expect("the proxy relays a new connection to the test server")
}

#[tokio::test]
async fn the_proxy_relays_a_session_unchanged() {
    let proxy = Proxy::start(Proxy::test_server().await).await;
    let mut conn = through(&proxy).await;
    let rows = conn
        .query(
            "SELECT $1::text || g::text FROM generate_series(1, 3000) g",
            &[&"row "],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 3000);
    assert_eq!(rows[2999].get::<String>(0), "row 3000");
    assert_eq!(proxy.accepted(), 1);
}

#[tokio::test]
async fn a_connection_reset_mid_result_is_closed_and_the_next_connection_works() {
    let proxy = Proxy::start(Proxy::test_server().await).await;
    let mut conn = through(&proxy).await;
    proxy.set(Fault::ResetAfter {
        direction: Direction::ToClient,
        bytes: 4096,
    });
    let err = conn
        .query("SELECT g FROM generate_series(1, 100000) g", &[])
        .await
        .unwrap_err();
    assert!(err.is_closed(), "{err}");
    assert!(
        err.is_outcome_unknown(),
        "the query was sent, its result lost: {err}"
    );
    let err = conn.query("SELECT 1", &[]).await.unwrap_err();
    assert!(err.is_closed(), "a reset connection stays closed: {err}");
    assert!(!err.is_outcome_unknown(), "nothing was sent: {err}");

    proxy.set(Fault::Pass);
    let mut again = through(&proxy).await;
    assert_eq!(again.query("SELECT 1", &[]).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_black_holed_query_gives_up_within_its_time_out() {
    let proxy = Proxy::start(Proxy::test_server().await).await;
    let mut conn = through(&proxy).await;
    let limit = Duration::from_secs(1);
    conn.set_query_timeout(Some(limit));
    proxy.set(Fault::BlackHole);
    let start = Instant::now();
    let err = conn.query("SELECT 1", &[]).await.unwrap_err();
    let took = start.elapsed();
    assert!(err.is_timeout(), "{err}");
    assert!(err.is_outcome_unknown(), "sent and never answered: {err}");
    assert!(
        took < limit + Duration::from_secs(1),
        "gave up after {took:?}, the time-out is {limit:?}"
    );
    // The cancel could not reach the server, so the connection cannot be trusted again.
    assert!(err.to_string().contains("closed"), "{err}");
    assert!(conn.query("SELECT 1", &[]).await.unwrap_err().is_closed());
}

#[tokio::test]
async fn a_time_out_during_a_slow_write_never_lets_the_server_read_the_rest_as_a_message() {
    let proxy = Proxy::start(Proxy::test_server().await).await;
    let mut conn = through(&proxy).await;
    proxy.set(Fault::Throttle {
        bytes_per_sec: 64 * 1024,
    });
    conn.set_query_timeout(Some(Duration::from_millis(300)));
    // 1 MiB of bytea takes ~16 s through the throttle; the time-out stops the write midway.
    let payload = vec![b'Q'; 1 << 20];
    let err = conn
        .query("SELECT length($1::bytea)", &[&payload.as_slice()])
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    // Half a message went out: the connection cannot be used again, and says so.
    let next = conn.query("SELECT 1", &[]).await.unwrap_err();
    assert!(next.is_closed(), "{next}");
}

/// A table of writes, each with a unique key, to reconcile after a fault.
async fn ledger(name: &str) -> Connection {
    let mut conn = crate::connect().await;
    conn.batch_execute(&format!(
        "DROP TABLE IF EXISTS {name}; CREATE TABLE {name} (id int8 PRIMARY KEY, note text NOT NULL)"
    ))
    .await
    .unwrap();
    conn
}

async fn ledger_has(conn: &mut Connection, name: &str, id: i64) -> bool {
    let n: i64 = conn
        .query_one(
            &format!("SELECT count(*) FROM {name} WHERE id = $1"),
            &[&id],
        )
        .await
        .unwrap()
        .get(0);
    n == 1
}

#[tokio::test]
async fn a_commit_whose_reply_is_lost_still_committed_once() {
    let mut check = ledger("qail_faults_ledger_commit").await;
    let proxy = Proxy::start(Proxy::test_server().await).await;
    let mut conn = through(&proxy).await;
    let mut tx = conn.begin().await.unwrap();
    tx.execute(
        "INSERT INTO qail_faults_ledger_commit VALUES ($1, 'in a transaction')",
        &[&1i64],
    )
    .await
    .unwrap();
    proxy.set(Fault::cut_after_sync_following("COMMIT"));
    let err = tx.commit().await.unwrap_err();
    assert!(err.is_closed(), "{err}");
    assert!(
        err.is_outcome_unknown(),
        "a lost COMMIT reply is outcome unknown: {err}"
    );
    assert!(err.to_string().contains("may or may not have run"), "{err}");
    // Nothing is sent on the broken connection: a later call did not run, and says so.
    let next = conn.query("SELECT 1", &[]).await.unwrap_err();
    assert!(next.is_closed() && !next.is_outcome_unknown(), "{next}");
    // The server ran the COMMIT it received: the row is there exactly once.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(ledger_has(&mut check, "qail_faults_ledger_commit", 1).await);
}

#[tokio::test]
async fn an_autocommit_statement_whose_reply_is_lost_ran_once() {
    let mut check = ledger("qail_faults_ledger_autocommit").await;
    let proxy = Proxy::start(Proxy::test_server().await).await;
    let mut conn = through(&proxy).await;
    proxy.set(Fault::cut_after_executed_sync());
    let err = conn
        .execute(
            "INSERT INTO qail_faults_ledger_autocommit VALUES ($1, 'autocommit')",
            &[&7i64],
        )
        .await
        .unwrap_err();
    assert!(err.is_closed(), "{err}");
    assert!(err.is_outcome_unknown(), "{err}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(ledger_has(&mut check, "qail_faults_ledger_autocommit", 7).await);
}

#[tokio::test]
async fn a_statement_cut_while_it_is_prepared_never_ran() {
    let mut check = ledger("qail_faults_ledger_prepare").await;
    let proxy = Proxy::start(Proxy::test_server().await).await;
    let mut conn = through(&proxy).await;
    // The first Sync closes the Parse + Describe: nothing was executed when the cut comes.
    proxy.set(Fault::cut_after_nth_sync(1));
    let err = conn
        .execute(
            "INSERT INTO qail_faults_ledger_prepare VALUES ($1, 'prepared only')",
            &[&9i64],
        )
        .await
        .unwrap_err();
    assert!(err.is_closed(), "{err}");
    // Note: the driver does not tell a Parse from a write: what was sent and not answered is
    // outcome unknown, and here the ledger shows it did not run.
    assert!(err.is_outcome_unknown(), "{err}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!ledger_has(&mut check, "qail_faults_ledger_prepare", 9).await);
}

#[tokio::test]
async fn an_atomic_pipeline_cut_after_its_sync_committed_all_or_nothing_and_says_unknown() {
    let mut check = ledger("qail_faults_ledger_atomic").await;
    let proxy = Proxy::start(Proxy::test_server().await).await;
    let mut conn = through(&proxy).await;
    // Prepare the statement first, so the batch is Bind + Execute pairs and one Sync.
    let insert = "INSERT INTO qail_faults_ledger_atomic VALUES ($1, 'batch')";
    conn.prepare(insert).await.unwrap();
    proxy.set(Fault::cut_after_executed_sync());
    let ids: Vec<i64> = (100..150).collect();
    let params: Vec<[&(dyn qail_pg::Encode + Sync); 1]> = ids.iter().map(|id| [id as _]).collect();
    let queries: Vec<(&str, &[&(dyn qail_pg::Encode + Sync)])> =
        params.iter().map(|p| (insert, &p[..])).collect();
    let err = conn
        .pipeline_builder()
        .atomic()
        .sql(&queries)
        .count()
        .await
        .unwrap_err();
    assert!(err.is_closed() && err.is_outcome_unknown(), "{err}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let n: i64 = check
        .query_one("SELECT count(*) FROM qail_faults_ledger_atomic", &[])
        .await
        .unwrap()
        .get(0);
    // One implicit transaction: every row, or none — here the Sync arrived, so every row.
    assert_eq!(n, 50);
}

#[tokio::test]
async fn a_timed_out_query_whose_cancel_was_answered_is_not_outcome_unknown() {
    let mut conn = crate::connect().await;
    conn.set_query_timeout(Some(Duration::from_millis(200)));
    let err = conn.query("SELECT pg_sleep(5)", &[]).await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    // The cancel's 57014 was read: the statement did not complete.
    assert!(!err.is_outcome_unknown(), "{err}");
    assert_eq!(conn.query("SELECT 1", &[]).await.unwrap().len(), 1);
}

/// Runs `f` and asserts it gave up within `limit` + 1 s, returning its output.
async fn within<T>(limit: Duration, what: &str, f: impl std::future::Future<Output = T>) -> T {
    let start = Instant::now();
    let out = tokio::time::timeout(limit + Duration::from_secs(5), f)
        .await
        .unwrap_or_else(|_| {
            panic!(
                "{what} was still waiting after {:?}",
                limit + Duration::from_secs(5)
            )
        });
    let took = start.elapsed();
    assert!(
        took < limit + Duration::from_secs(1),
        "{what} gave up after {took:?}, the time-out is {limit:?}"
    );
    out
}

#[tokio::test]
async fn begin_commit_prepare_copy_and_close_give_up_on_a_black_hole() {
    let limit = Duration::from_millis(800);
    let proxy = Proxy::start(Proxy::test_server().await).await;

    let mut conn = through(&proxy).await;
    conn.set_query_timeout(Some(limit));
    proxy.set(Fault::BlackHole);
    let err = within(limit, "begin", conn.begin()).await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    proxy.set(Fault::Pass);

    let mut conn = through(&proxy).await;
    conn.set_query_timeout(Some(limit));
    let mut tx = conn.begin().await.unwrap();
    tx.execute("SELECT 1", &[]).await.unwrap();
    proxy.set(Fault::BlackHole);
    let err = within(limit, "commit", tx.commit()).await.unwrap_err();
    assert!(err.is_timeout() && err.is_outcome_unknown(), "{err}");
    proxy.set(Fault::Pass);

    let mut conn = through(&proxy).await;
    conn.set_query_timeout(Some(limit));
    proxy.set(Fault::BlackHole);
    let err = within(limit, "prepare", conn.prepare("SELECT 1"))
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    proxy.set(Fault::Pass);

    let mut conn = through(&proxy).await;
    conn.set_query_timeout(Some(limit));
    conn.batch_execute("CREATE TEMP TABLE sink (v text)")
        .await
        .unwrap();
    proxy.set(Fault::BlackHole);
    let err = within(limit, "COPY", conn.copy_in("COPY sink FROM STDIN"))
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    proxy.set(Fault::Pass);

    let mut conn = through(&proxy).await;
    conn.batch_execute("CREATE TEMP TABLE sink (v text)")
        .await
        .unwrap();
    conn.set_query_timeout(Some(limit));
    let mut copy = conn.copy_in("COPY sink FROM STDIN").await.unwrap();
    copy.send(b"a\n").await.unwrap();
    proxy.set(Fault::BlackHole);
    let err = within(limit, "COPY finish", copy.finish())
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    proxy.set(Fault::Pass);

    let conn = through(&proxy).await;
    proxy.set(Fault::BlackHole);
    within(Duration::from_secs(5), "close", conn.close()).await;
}

#[tokio::test]
async fn acquire_gives_up_on_a_black_holed_server() {
    let proxy = Proxy::start(Proxy::test_server().await).await;
    let limit = Duration::from_millis(800);
    let pool = qail_pg::Pool::builder()
        .max_size(1)
        .acquire_timeout(Some(limit))
        .connect(&proxy.url())
        .await
        .unwrap();
    {
        let mut conn = pool.acquire().await.unwrap();
        conn.execute("SELECT 1", &[]).await.unwrap();
    }
    proxy.set(Fault::BlackHole);
    let acquired = within(limit, "acquire", async {
        let mut conn = pool.acquire().await?;
        conn.set_query_timeout(Some(limit));
        conn.execute("SELECT 1", &[]).await
    })
    .await;
    assert!(acquired.is_err());
}

#[tokio::test]
async fn a_per_query_pipeline_that_loses_its_connection_says_what_became_of_each_query() {
    let mut check = ledger("qail_faults_ledger_per_query").await;
    let proxy = Proxy::start(Proxy::test_server().await).await;
    let mut conn = through(&proxy).await;
    let insert = "INSERT INTO qail_faults_ledger_per_query VALUES ($1, 'per query')";
    conn.prepare(insert).await.unwrap();
    proxy.set(Fault::cut_after_nth_sync(50));
    let ids: Vec<i64> = (0..5000).collect();
    let params: Vec<[&(dyn qail_pg::Encode + Sync); 1]> = ids.iter().map(|id| [id as _]).collect();
    let queries: Vec<(&str, &[&(dyn qail_pg::Encode + Sync)])> =
        params.iter().map(|p| (insert, &p[..])).collect();
    let results = conn.pipeline_builder().sql(&queries).count().await.unwrap();
    assert_eq!(results.len(), ids.len());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let written: std::collections::HashSet<i64> = check
        .query("SELECT id FROM qail_faults_ledger_per_query", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get::<i64>(0))
        .collect();
    let (mut done, mut unknown, mut not_run) = (0, 0, 0);
    for (id, result) in ids.iter().zip(&results) {
        match result {
            Ok(n) => {
                assert_eq!(*n, 1);
                assert!(
                    written.contains(id),
                    "query {id} reported done but is not written"
                );
                done += 1;
            }
            Err(e) if e.is_outcome_unknown() => {
                assert!(e.is_closed(), "{e}");
                unknown += 1;
            }
            Err(e) => {
                assert!(e.is_closed(), "{e}");
                assert!(
                    !written.contains(id),
                    "query {id} reported not run but is written: {e}"
                );
                not_run += 1;
            }
        }
    }
    // At most the 50 queries whose Syncs reached the server ran (the server stops at the
    // cut too); every written one was reported done or unknown, never not run.
    assert!(written.len() <= 50, "{} written", written.len());
    assert!(done <= written.len() && written.len() <= done + unknown);
    assert!(
        not_run > 0,
        "{done} done, {unknown} unknown, {not_run} not run"
    );
}
