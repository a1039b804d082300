//! Connections that die, age, idle out or wait too long; convenience calls; closing.

use std::future::Future;
use std::task::Poll;
use std::time::Duration;

use qail_pg::{Pool, TransactionStatus};
use tokio::time::timeout;

use super::{app_name, backends, config, eventually, terminate};

#[tokio::test]
async fn the_holder_of_a_terminated_connection_gets_a_closed_error() {
    let pool = Pool::builder()
        .max_size(1)
        .connect_with(config(&app_name("held")))
        .await
        .unwrap();
    let mut monitor = super::super::connect().await;
    let mut conn = pool.acquire().await.unwrap();
    let pid = conn.process_id();
    terminate(&mut monitor, pid).await;

    let err = conn.query("SELECT 1", &[]).await.unwrap_err();
    assert!(err.is_closed(), "{err}");
    assert!(conn.is_closed());
    drop(conn);
    assert_eq!(pool.stats().destroyed, 1, "the broken connection is closed");

    let mut conn = pool.acquire().await.unwrap();
    assert_ne!(conn.process_id(), pid);
    conn.batch_execute("SELECT 1").await.unwrap();
}

#[tokio::test]
async fn a_connection_terminated_while_idle_is_replaced_at_checkout() {
    for health_check in [None, Some(Duration::ZERO)] {
        let pool = Pool::builder()
            .max_size(1)
            .health_check_after(health_check)
            .connect_with(config(&app_name("idle_dead")))
            .await
            .unwrap();
        let mut monitor = super::super::connect().await;
        let mut conn = pool.acquire().await.unwrap();
        conn.batch_execute("SET app.tenant = 'acme'").await.unwrap();
        let pid = conn.process_id();
        drop(conn);
        terminate(&mut monitor, pid).await;

        let mut conn = pool.acquire().await.unwrap();
        assert_ne!(conn.process_id(), pid, "health check {health_check:?}");
        let row = conn.query_one("SELECT 1::int4", &[]).await.unwrap();
        assert_eq!(row.get::<i32>(0), 1);
        let stats = pool.stats();
        assert_eq!((stats.created, stats.destroyed), (2, 1), "{stats:?}");
    }
}

#[tokio::test]
async fn max_lifetime_retires_connections_but_never_from_under_a_user() {
    let lifetime = Duration::from_millis(200);
    let pool = Pool::builder()
        .max_size(1)
        .max_lifetime(Some(lifetime))
        .idle_timeout(None)
        .connect_with(config(&app_name("lifetime")))
        .await
        .unwrap();
    let mut conn = pool.acquire().await.unwrap();
    let first = conn.process_id();
    tokio::time::sleep(lifetime * 2).await;
    conn.batch_execute("SELECT 1").await.unwrap();
    drop(conn);
    assert_eq!(
        pool.stats().destroyed,
        1,
        "closed when returned past its lifetime"
    );

    let conn = pool.acquire().await.unwrap();
    let second = conn.process_id();
    assert_ne!(second, first);
    drop(conn);
    // An idle connection past its lifetime is closed by the pool on its own.
    let pool_ref = &pool;
    eventually("the idle connection's retirement", || async move {
        pool_ref.stats().destroyed == 2
    })
    .await;
    assert_eq!(pool.stats().size, 0);
    let conn = pool.acquire().await.unwrap();
    assert_ne!(conn.process_id(), second);
}

#[tokio::test]
async fn idle_timeout_closes_surplus_connections_down_to_min_idle() {
    for min_idle in [0, 1] {
        let app = app_name(&format!("idle_{min_idle}"));
        let pool = Pool::builder()
            .max_size(3)
            .min_idle(min_idle)
            .idle_timeout(Some(Duration::from_millis(100)))
            .connect_with(config(&app))
            .await
            .unwrap();
        let held = [
            pool.acquire().await.unwrap(),
            pool.acquire().await.unwrap(),
            pool.acquire().await.unwrap(),
        ];
        drop(held);
        assert_eq!(pool.stats().idle, 3);
        let pool_ref = &pool;
        eventually("closing idle connections", || async move {
            pool_ref.stats().size == min_idle
        })
        .await;
        let mut monitor = super::super::connect().await;
        let expected = i64::try_from(min_idle).unwrap();
        wait_backends(&mut monitor, &app, expected).await;
        // min_idle connections stay however long they idle.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(pool.stats().size, min_idle);
    }
}

#[tokio::test]
async fn min_idle_connections_are_opened_and_replaced() {
    let pool = Pool::builder()
        .max_size(2)
        .min_idle(2)
        .max_lifetime(Some(Duration::from_millis(100)))
        .connect_with(config(&app_name("min_idle")))
        .await
        .unwrap();
    assert_eq!(pool.stats().idle, 2, "opened when the pool is created");
    let pool_ref = &pool;
    eventually("replacing retired connections", || async move {
        let stats = pool_ref.stats();
        stats.destroyed >= 2 && stats.idle == 2
    })
    .await;
}

#[tokio::test]
async fn acquire_times_out_and_dropped_acquires_leak_no_slot() {
    let pool = Pool::builder()
        .max_size(1)
        .acquire_timeout(Some(Duration::from_millis(100)))
        .connect_with(config(&app_name("timeout")))
        .await
        .unwrap();
    let held = pool.acquire().await.unwrap();
    let err = pool.acquire().await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(err.to_string().contains("max_size"), "{err}");

    let waiting: Vec<_> = (0..10)
        .map(|_| {
            let pool = pool.clone();
            tokio::spawn(async move { timeout(Duration::from_millis(5), pool.acquire()).await })
        })
        .collect();
    for w in waiting {
        assert!(
            w.await.unwrap().is_err(),
            "the slot is held, so no acquire succeeds"
        );
    }
    assert_eq!(pool.stats().waiters, 0);
    drop(held);
    let conn = pool.acquire().await.unwrap();
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    let stats = pool.stats();
    assert_eq!((stats.size, stats.in_use, stats.created), (1, 1, 1));
}

#[tokio::test]
async fn pool_calls_warm_up_and_reset_between_calls() {
    let pool = Pool::builder()
        .max_size(1)
        .warm_up("SELECT $1::int4 * 2 AS qail_it_pool_warm")
        .connect_with(config(&app_name("calls")))
        .await
        .unwrap();
    let mut conn = pool.acquire().await.unwrap();
    let warm: i64 = conn
        .query_one(
            "SELECT count(*) FROM pg_prepared_statements
              WHERE statement = 'SELECT $1::int4 * 2 AS qail_it_pool_warm'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        warm, 1,
        "the warm-up statement is prepared on a new connection"
    );
    drop(conn);

    let row = pool
        .query_one("SELECT $1::int4 * 2 AS qail_it_pool_warm", &[&21i32])
        .await
        .unwrap();
    assert_eq!(row.get::<i32>(0), 42);
    assert_eq!(pool.query("SELECT 1", &[]).await.unwrap().len(), 1);
    assert!(
        pool.query_opt("SELECT 1 WHERE false", &[])
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(pool.execute("SELECT 1", &[]).await.unwrap(), 1);
    pool.batch_execute("SET app.tenant = 'acme'").await.unwrap();
    let tenant: Option<String> = pool
        .query_one("SELECT current_setting('app.tenant', true)", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(tenant.unwrap_or_default(), "", "reset between pool calls");
    let stats = pool.stats();
    assert_eq!((stats.created, stats.idle, stats.in_use), (1, 1, 0));
}

#[tokio::test]
async fn close_refuses_acquires_and_closes_connections() {
    let app = app_name("close");
    let pool = Pool::connect_with(config(&app)).await.unwrap();
    let held = pool.acquire().await.unwrap();
    let idle = pool.acquire().await.unwrap();
    drop(idle);
    pool.close().await;
    assert!(pool.is_closed());
    let err = pool.acquire().await.unwrap_err();
    assert!(
        err.is_closed() && err.to_string().contains("pool is closed"),
        "{err}"
    );
    assert_eq!(
        pool.stats().size,
        1,
        "the held connection stays until returned"
    );
    drop(held);
    assert_eq!(pool.stats().size, 0);
    let mut monitor = super::super::connect().await;
    wait_backends(&mut monitor, &app, 0).await;
}

/// Waits (bounded) until the server shows `expected` backends named `app`.
async fn wait_backends(monitor: &mut qail_pg::Connection, app: &str, expected: i64) {
    let mut seen = -1;
    for _ in 0..1000 {
        seen = backends(monitor, app).await;
        if seen == expected {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(seen, expected, "server backends named {app}");
}

#[tokio::test]
async fn dropping_the_pool_closes_its_connections() {
    let app = app_name("drop");
    let pool = Pool::builder()
        .min_idle(2)
        .connect_with(config(&app))
        .await
        .unwrap();
    let mut monitor = super::super::connect().await;
    wait_backends(&mut monitor, &app, 2).await;
    let conn = pool.acquire().await.unwrap();
    drop(pool);
    wait_backends(&mut monitor, &app, 2).await;
    drop(conn);
    wait_backends(&mut monitor, &app, 0).await;
}

#[tokio::test]
async fn a_connection_opened_for_a_dropped_acquire_is_kept_for_the_next() {
    let app = app_name("abandoned");
    let pool = Pool::builder()
        .max_size(2)
        .connect_with(config(&app))
        .await
        .unwrap();
    let held = pool.acquire().await.unwrap();
    // The acquire starts opening a second connection, then its caller gives up.
    let mut acquire = Box::pin(pool.acquire());
    let first = std::future::poll_fn(|cx| Poll::Ready(acquire.as_mut().poll(cx))).await;
    assert!(first.is_pending(), "the connection is being opened");
    drop(acquire);
    let pool_ref = &pool;
    eventually("the opening to finish", || async move {
        pool_ref.stats().created == 2
    })
    .await;
    let stats = pool.stats();
    assert_eq!(
        (stats.size, stats.idle, stats.in_use),
        (2, 1, 1),
        "{stats:?}"
    );

    let second = pool.acquire().await.unwrap();
    assert_ne!(second.process_id(), held.process_id());
    let stats = pool.stats();
    assert_eq!(
        (stats.created, stats.size, stats.in_use),
        (2, 2, 2),
        "{stats:?}"
    );
    let mut monitor = super::super::connect().await;
    wait_backends(&mut monitor, &app, 2).await;
}
