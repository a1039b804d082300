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
    let err = conn.query("SELECT 1", &[]).await.unwrap_err();
    assert!(err.is_closed(), "a reset connection stays closed: {err}");

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
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!ledger_has(&mut check, "qail_faults_ledger_prepare", 9).await);
}
