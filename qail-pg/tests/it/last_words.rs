//! The server's last words: an error sent right before it closes the connection reaches the
//! caller with its SQLSTATE, and the connection reports itself closed.

use std::time::Duration;

use qail_pg::Connection;

async fn terminate(pid: i32) {
    let mut admin = crate::connect().await;
    admin
        .query("SELECT pg_terminate_backend($1)", &[&pid])
        .await
        .unwrap();
}

#[tokio::test]
async fn a_backend_terminated_mid_query_reports_57p01_and_is_closed() {
    let mut conn = crate::connect().await;
    let pid = conn.process_id();
    let killer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        terminate(pid).await;
    });
    let err = conn.query("SELECT pg_sleep(10)", &[]).await.unwrap_err();
    killer.await.unwrap();
    assert_eq!(err.code(), Some("57P01"), "{err}");
    assert!(err.is_closed(), "{err}");
    assert!(conn.is_closed());
}

#[tokio::test]
async fn a_backend_terminated_while_idle_reports_57p01_at_the_next_call() {
    let mut conn = crate::connect().await;
    terminate(conn.process_id()).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let err = conn.query("SELECT 1", &[]).await.unwrap_err();
    assert_eq!(err.code(), Some("57P01"), "{err}");
    assert!(err.is_closed(), "{err}");
    let again = conn.query("SELECT 1", &[]).await.unwrap_err();
    assert!(again.is_closed(), "{again}");
}

#[tokio::test]
async fn a_backend_terminated_mid_transaction_runs_nothing_after() {
    let mut conn = crate::connect().await;
    conn.batch_execute(
        "DROP TABLE IF EXISTS qail_last_words_tx; CREATE TABLE qail_last_words_tx (v int4)",
    )
    .await
    .unwrap();
    let pid = conn.process_id();
    let mut tx = conn.begin().await.unwrap();
    tx.execute("INSERT INTO qail_last_words_tx VALUES (1)", &[])
        .await
        .unwrap();
    terminate(pid).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let err = tx
        .execute("INSERT INTO qail_last_words_tx VALUES (2)", &[])
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("57P01"), "{err}");
    assert!(err.is_closed());
    assert!(tx.commit().await.unwrap_err().is_closed());
    let mut check = crate::connect().await;
    let n: i64 = check
        .query_one("SELECT count(*) FROM qail_last_words_tx", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        n, 0,
        "nothing of the transaction, nor after it, was written"
    );
}

#[tokio::test]
async fn an_idle_in_transaction_time_out_reports_25p03() {
    let mut conn = crate::connect().await;
    conn.batch_execute("SET idle_in_transaction_session_timeout = '300ms'")
        .await
        .unwrap();
    let mut tx = conn.begin().await.unwrap();
    tx.execute("SELECT 1", &[]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(900)).await;
    let err = tx.execute("SELECT 1", &[]).await.unwrap_err();
    assert_eq!(err.code(), Some("25P03"), "{err}");
    assert!(err.is_closed(), "{err}");
}

#[tokio::test]
async fn an_idle_session_time_out_on_a_pooled_connection_reports_57p05_and_the_pool_recovers() {
    let pool = qail_pg::Pool::builder()
        .max_size(1)
        .connect(&format!(
            "{}?options=-c%20idle_session_timeout%3D300",
            crate::url()
        ))
        .await
        .unwrap();
    {
        let mut conn = pool.acquire().await.unwrap();
        conn.execute("SELECT 1", &[]).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(900)).await;
    // The pool finds the connection closed at checkout, or the call reports why it closed.
    let mut conn = pool.acquire().await.unwrap();
    match conn.execute("SELECT 1", &[]).await {
        Ok(_) => {}
        Err(err) => {
            assert_eq!(err.code(), Some("57P05"), "{err}");
            assert!(err.is_closed());
            drop(conn);
            let mut conn = pool.acquire().await.unwrap();
            conn.execute("SELECT 1", &[]).await.unwrap();
        }
    }
    let _ = Connection::close;
}
