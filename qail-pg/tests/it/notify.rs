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

/// Sends `n` notifications on `channel` in one transaction: delivered together at its commit.
async fn notify_many(channel: &str, n: i32) {
    let mut other = super::connect().await;
    other
        .execute(
            "SELECT pg_notify($1, g::text) FROM generate_series(1, $2) g",
            &[&channel, &n],
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn ten_thousand_notifications_during_a_long_query_arrive_in_order() {
    let mut conn = super::connect().await;
    conn.batch_execute("LISTEN qail_it_many").await.unwrap();
    let sender = tokio::spawn(async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        notify_many("qail_it_many", 10_000).await;
    });
    conn.query("SELECT pg_sleep(2)", &[]).await.unwrap();
    sender.await.unwrap();
    let mut got = conn.notifications();
    while got.len() < 10_000 {
        got.push(conn.listener().recv().await.unwrap());
    }
    let payloads: Vec<String> = got.iter().map(|n| n.payload().to_owned()).collect();
    let expected: Vec<String> = (1..=10_000).map(|i| i.to_string()).collect();
    assert!(payloads == expected, "all 10,000, in order");
    assert!(got.iter().all(|n| n.missed_before() == 0));
    assert_eq!(conn.query("SELECT 1", &[]).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_listener_that_falls_behind_is_told_how_many_it_missed() {
    let mut conn = super::connect().await;
    conn.set_notification_capacity(100);
    conn.batch_execute("LISTEN qail_it_behind").await.unwrap();
    notify_many("qail_it_behind", 10_000).await;
    // The notifications arrive with the replies of the next query.
    conn.query("SELECT 1", &[]).await.unwrap();
    let got = conn.notifications();
    let payloads: Vec<String> = got.iter().map(|n| n.payload().to_owned()).collect();
    let expected: Vec<String> = (9_901..=10_000).map(|i| i.to_string()).collect();
    assert_eq!(payloads, expected, "the newest 100, in order");
    assert_eq!(got[0].missed_before(), 9_900);
    assert!(got[1..].iter().all(|n| n.missed_before() == 0));
}

#[tokio::test]
async fn a_hundred_kilobyte_notice_reaches_the_handler() {
    let mut conn = super::connect().await;
    let (tx, rx) = std::sync::mpsc::channel();
    conn.set_notice_handler(move |notice| {
        let _ = tx.send(notice.message.len());
    });
    conn.batch_execute("DO $$ BEGIN RAISE NOTICE '%', repeat('x', 100000); END $$")
        .await
        .unwrap();
    assert_eq!(rx.try_recv().unwrap(), 100_000);
    assert_eq!(conn.query("SELECT 1", &[]).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_pipeline_of_noisy_calls_completes() {
    use super::compiled::{Int8, col, query, template};
    let mut conn = super::connect().await;
    conn.batch_execute(
        "CREATE OR REPLACE FUNCTION pg_temp.qail_it_noisy(i int8) RETURNS int8
         LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE '%', repeat('x', 8000); RETURN i; END $$",
    )
    .await
    .unwrap();
    let notices = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = notices.clone();
    conn.set_notice_handler(move |notice| {
        assert_eq!(notice.message.len(), 8000);
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    });
    let t = template(
        "SELECT pg_temp.qail_it_noisy($1::int8) AS v",
        &[20],
        &[col("v", 20, "int8")],
    );
    let ids: Vec<i64> = (0..10_000).collect();
    // 10,000 calls written without waiting for replies, each reply led by an 8 kB notice:
    // the server blocks on a full socket unless the client reads while it writes.
    let rows = tokio::time::timeout(
        Duration::from_secs(60),
        conn.pipeline(ids.iter().map(|i| query::<Int8>(t, &[i]))),
    )
    .await
    .expect("no deadlock")
    .unwrap();
    let values: Vec<i64> = rows.iter().map(|r| r.as_ref().unwrap()[0].0).collect();
    assert_eq!(values, ids);
    assert_eq!(notices.load(std::sync::atomic::Ordering::Relaxed), 10_000);
}
