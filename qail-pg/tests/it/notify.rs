//! LISTEN/NOTIFY: buffered during queries, awaited while idle, never lost.

use std::time::Duration;

#[tokio::test]
async fn notifications_during_queries_are_buffered() {
    let mut conn = super::connect().await;
    let mut other = super::connect().await;
    conn.batch_execute("LISTEN qail_it_buffered").await.unwrap();
    for i in 0..100 {
        other
            .execute(
                "SELECT pg_notify('qail_it_buffered', $1)",
                &[&i.to_string()],
            )
            .await
            .unwrap();
    }
    // Notifications arrive while the connection runs another query.
    conn.query("SELECT pg_sleep(0.1)", &[]).await.unwrap();
    let mut got = conn.notifications();
    while got.len() < 100 {
        let next = conn.listener().recv().await.unwrap();
        got.push(next);
    }
    let payloads: Vec<String> = got.iter().map(|n| n.payload().to_owned()).collect();
    let expected: Vec<String> = (0..100).map(|i| i.to_string()).collect();
    assert_eq!(payloads, expected);
    assert!(got.iter().all(|n| n.channel() == "qail_it_buffered"));
    assert_eq!(got[0].process_id(), other.process_id());
    assert!(conn.notifications().is_empty());
}

#[tokio::test]
async fn a_listener_waits_while_idle() {
    let mut conn = super::connect().await;
    conn.batch_execute("LISTEN qail_it_idle").await.unwrap();
    let sender = tokio::spawn(async {
        let mut other = super::connect().await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        other
            .batch_execute("NOTIFY qail_it_idle, 'wake up'")
            .await
            .unwrap();
    });
    let mut listener = conn.listener();
    // A recv future dropped before anything arrives loses nothing.
    assert!(
        tokio::time::timeout(Duration::from_millis(1), listener.recv())
            .await
            .is_err()
    );
    let n = listener.recv().await.unwrap();
    assert_eq!(n.payload(), "wake up");
    assert!(listener.try_recv().is_none());
    sender.await.unwrap();
    assert_eq!(conn.query("SELECT 1", &[]).await.unwrap().len(), 1);
}
