//! The pool's state as `Pool::stats` reports it: connections opened, closed and broken, and
//! the acquires that waited and for how long.

use std::time::Duration;

use qail_pg::Pool;
use tokio::time::timeout;

use super::{app_name, config, eventually, terminate};

#[tokio::test]
async fn connections_broken_in_use_and_while_idle_are_counted() {
    let pool = Pool::builder()
        .max_size(2)
        .health_check_after(None)
        .connect_with(config(&app_name("stats_broken")))
        .await
        .unwrap();
    let mut monitor = super::super::connect().await;
    let start = pool.stats();
    assert_eq!(
        (start.created, start.destroyed, start.broken, start.idle),
        (1, 0, 0, 1),
        "{start:?}"
    );

    // Broken under its user: the failed call closes it, returning it counts it.
    let mut held = pool.acquire().await.unwrap();
    terminate(&mut monitor, held.process_id()).await;
    assert!(held.query("SELECT 1", &[]).await.unwrap_err().is_closed());
    drop(held);
    let stats = pool.stats();
    assert_eq!((stats.destroyed, stats.broken), (1, 1), "{stats:?}");

    // Broken while idle: found at checkout, replaced, counted.
    let conn = pool.acquire().await.unwrap();
    let pid = conn.process_id();
    drop(conn);
    terminate(&mut monitor, pid).await;
    let mut conn = pool.acquire().await.unwrap();
    assert_ne!(conn.process_id(), pid);
    conn.batch_execute("SELECT 1").await.unwrap();
    drop(conn);
    let stats = pool.stats();
    assert_eq!(
        (stats.created, stats.destroyed, stats.broken),
        (3, 2, 2),
        "{stats:?}"
    );

    // Closing the pool closes its idle connection, which was not broken.
    pool.close().await;
    let stats = pool.stats();
    assert_eq!(
        (stats.size, stats.destroyed, stats.broken),
        (0, 3, 2),
        "{stats:?}"
    );
}

#[tokio::test]
async fn acquires_that_wait_are_counted_with_their_wait_time() {
    let pool = Pool::builder()
        .max_size(1)
        .connect_with(config(&app_name("stats_wait")))
        .await
        .unwrap();
    // Uncontended acquires do not wait.
    for _ in 0..3 {
        drop(pool.acquire().await.unwrap());
    }
    let stats = pool.stats();
    assert_eq!(
        (stats.waits, stats.wait_time, stats.max_wait),
        (0, Duration::ZERO, Duration::ZERO),
        "{stats:?}"
    );

    // One waiter, held off for at least `held`.
    let held = Duration::from_millis(30);
    let conn = pool.acquire().await.unwrap();
    let waiter = tokio::spawn({
        let pool = pool.clone();
        async move { pool.acquire().await.map(drop) }
    });
    eventually("the second acquire waits", || async {
        pool.stats().waiters == 1
    })
    .await;
    tokio::time::sleep(held).await;
    drop(conn);
    waiter.await.unwrap().unwrap();
    let stats = pool.stats();
    assert_eq!((stats.waiters, stats.waits), (0, 1), "{stats:?}");
    assert!(stats.wait_time >= held, "{stats:?}");
    assert_eq!(stats.max_wait, stats.wait_time, "{stats:?}");

    // A wait the caller gives up on counts too.
    let conn = pool.acquire().await.unwrap();
    let gave_up = timeout(Duration::from_millis(20), pool.acquire()).await;
    assert!(
        gave_up.is_err(),
        "the acquire waited for the held connection"
    );
    drop(conn);
    let after = pool.stats();
    assert_eq!((after.waiters, after.waits), (0, 2), "{after:?}");
    assert!(
        after.wait_time >= stats.wait_time + Duration::from_millis(20),
        "{after:?}"
    );
    assert!(after.max_wait >= stats.max_wait, "{after:?}");
}
