//! Read routing against the real streaming pair of `scripts/pg-standby`: writes on the
//! primary, reads spread over the replicas that are up, the primary when none is, and a
//! replica back in the turn once it answers again.

use std::net::SocketAddr;
use std::time::Duration;

use qail_pg::{Pool, PooledConnection};

use crate::hosts::{hosts, primary_port, server_port, standby_port, var};
use crate::proxy::{Direction, Fault, Proxy};

async fn port_of(conn: &mut PooledConnection) -> u16 {
    server_port(conn).await
}

/// The standby's address, for a proxy in front of it.
fn standby_addr() -> SocketAddr {
    format!("{}:{}", var("QAIL_AUTH_HOST"), standby_port())
        .parse()
        .expect("the test address is numeric")
}

#[tokio::test]
async fn writes_go_to_the_primary_and_reads_to_the_replica() {
    let pool = Pool::builder()
        .replica(&hosts(&[standby_port()], ""))
        .connect(&hosts(&[primary_port()], ""))
        .await
        .unwrap();
    let mut write = pool.acquire().await.unwrap();
    assert_eq!(port_of(&mut write).await, primary_port());
    write
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS qail_routed (id int8 PRIMARY KEY);
             INSERT INTO qail_routed VALUES (1) ON CONFLICT DO NOTHING",
        )
        .await
        .unwrap();
    drop(write);

    let mut read = pool.acquire_read().await.unwrap();
    assert_eq!(port_of(&mut read).await, standby_port());
    let e = read
        .execute("INSERT INTO qail_routed VALUES ($1)", &[&2i64])
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some("25006"), "{e}");
    drop(read);

    assert_eq!(pool.stats().created, 1);
    let replica = pool.replica_stats();
    assert_eq!(replica.len(), 1);
    assert_eq!(replica[0].created, 1);
    pool.close().await;
    assert!(
        pool.acquire_read().await.is_err(),
        "a closed pool refuses reads"
    );
}

#[tokio::test]
async fn reads_are_spread_over_the_replicas() {
    // Two replicas: the standby directly and through a proxy, told apart by the proxy's count.
    let proxy = Proxy::start(standby_addr()).await;
    let pool = Pool::builder()
        .replica(&hosts(&[standby_port()], ""))
        .replica(&hosts(&[proxy.port()], ""))
        .connect(&hosts(&[primary_port()], ""))
        .await
        .unwrap();
    let mut held = Vec::new();
    for _ in 0..6 {
        let mut conn = pool.acquire_read().await.unwrap();
        assert_eq!(port_of(&mut conn).await, standby_port());
        held.push(conn);
    }
    let stats: Vec<usize> = pool.replica_stats().iter().map(|s| s.size).collect();
    assert_eq!(
        stats,
        [3, 3],
        "six reads held at once, three on each replica"
    );
    assert_eq!(proxy.accepted(), 3);
    drop(held);
    // One after another, reads take the replicas in turn.
    let mut turn = Vec::new();
    for _ in 0..4 {
        let conn = pool.acquire_read().await.unwrap();
        let stats = pool.replica_stats();
        turn.push(stats.iter().position(|s| s.in_use == 1).unwrap());
        drop(conn);
    }
    assert!(turn == [0, 1, 0, 1] || turn == [1, 0, 1, 0], "{turn:?}");
    assert_eq!(pool.replica_stats()[0].size, 3);
    assert_eq!(pool.replica_stats()[1].size, 3);
    assert_eq!(pool.stats().size, 1, "no read went to the primary");
}

#[tokio::test]
async fn reads_fall_back_to_the_primary_and_return_to_a_replica_that_recovers() {
    let proxy = Proxy::start(standby_addr()).await;
    let pool = Pool::builder()
        .replica(&hosts(&[1], "")) // nothing listens on port 1
        .replica(&hosts(&[proxy.port()], "connect_timeout=2"))
        .replica_retry_after(Duration::from_millis(300))
        // Checked at every checkout, so an idle connection to a replica that went away is
        // found out by acquire_read, not by the first query.
        .health_check_after(Some(Duration::ZERO))
        .connect(&hosts(&[primary_port()], ""))
        .await
        .unwrap();

    // The dead replica is left out; the live one serves every read.
    for _ in 0..4 {
        let mut conn = pool.acquire_read().await.unwrap();
        assert_eq!(port_of(&mut conn).await, standby_port());
    }
    assert_eq!(pool.replica_stats()[0].size, 0);

    // The live replica fails too: its idle connection is reset when used and new ones are
    // refused, so reads go to the primary.
    proxy.set(Fault::ResetAfter {
        direction: Direction::ToClient,
        bytes: 0,
    });
    for _ in 0..3 {
        let mut conn = pool.acquire_read().await.unwrap();
        assert_eq!(port_of(&mut conn).await, primary_port());
    }
    assert_eq!(
        pool.replica_stats()[1].size,
        0,
        "the reset connection was closed"
    );

    // It comes back: once retry_after has passed, reads use it again.
    proxy.set(Fault::Pass);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let mut conn = pool.acquire_read().await.unwrap();
    assert_eq!(port_of(&mut conn).await, standby_port());
}

#[tokio::test]
async fn an_invalid_replica_string_is_reported_by_connect() {
    let e = Pool::builder()
        .replica("host=x sslmode=sometimes")
        .connect(&hosts(&[primary_port()], ""))
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("invalid replica connection string: invalid sslmode \"sometimes\""),
        "{e}"
    );
}
