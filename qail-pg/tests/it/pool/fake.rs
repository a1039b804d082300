//! A scripted server whose session reset fails (a real one only does so when the previous user
//! left, say, a millisecond statement_timeout): the pool closes that connection, never hands
//! it on, and serves the next caller with another.

use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use qail_pg::Pool;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A backend message: tag, length, body.
fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
    let len = i32::try_from(body.len() + 4).unwrap();
    let mut out = vec![tag];
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(body);
    out
}

/// Serves one session as backend `pid`; the first session fails the reset's `CLOSE ALL`.
async fn serve(mut s: TcpStream, pid: i32) {
    let len = s.read_i32().await.unwrap();
    let mut startup = vec![0; usize::try_from(len - 4).unwrap()];
    s.read_exact(&mut startup).await.unwrap();
    let mut hello = msg(b'R', &0i32.to_be_bytes());
    hello.extend(msg(b'S', b"client_encoding\0UTF8\0"));
    let mut key = pid.to_be_bytes().to_vec();
    key.extend_from_slice(b"abcd");
    hello.extend(msg(b'K', &key));
    hello.extend(msg(b'Z', b"I"));
    s.write_all(&hello).await.unwrap();
    loop {
        let Ok(tag) = s.read_u8().await else { return };
        let len = s.read_i32().await.unwrap();
        let mut body = vec![0; usize::try_from(len - 4).unwrap()];
        s.read_exact(&mut body).await.unwrap();
        if tag != b'Q' {
            return;
        }
        let sql = body.strip_suffix(b"\0").unwrap();
        let mut reply = if sql.is_empty() {
            msg(b'I', b"")
        } else if pid == 1 && sql == b"CLOSE ALL" {
            msg(
                b'E',
                b"SERROR\0C57014\0Mcanceling statement due to statement timeout\0\0",
            )
        } else {
            msg(b'C', b"SELECT 0\0")
        };
        reply.extend(msg(b'Z', b"I"));
        if s.write_all(&reply).await.is_err() {
            return;
        }
    }
}

/// Starts the server; sessions get backend ids 1, 2, 3…
async fn server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let next = Arc::new(AtomicI32::new(1));
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(serve(socket, next.fetch_add(1, Ordering::AcqRel)));
        }
    });
    format!("postgres://fake@127.0.0.1:{port}/fake?sslmode=disable")
}

#[tokio::test]
async fn a_health_check_catches_a_failed_reset_and_acquire_moves_on() {
    let pool = Pool::builder()
        .max_size(1)
        .health_check_after(Some(Duration::ZERO))
        .connect(&server().await)
        .await
        .unwrap();
    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(conn.process_id(), 1);
    conn.batch_execute("SELECT 1").await.unwrap();
    drop(conn);

    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(
        conn.process_id(),
        2,
        "the connection whose reset failed is replaced"
    );
    conn.batch_execute("SELECT 1").await.unwrap();
    let stats = pool.stats();
    assert_eq!((stats.created, stats.destroyed, stats.size), (2, 1, 1));
}

#[tokio::test]
async fn without_a_health_check_the_next_call_reports_the_failed_reset() {
    let pool = Pool::builder()
        .max_size(1)
        .health_check_after(None)
        .connect(&server().await)
        .await
        .unwrap();
    let mut conn = pool.acquire().await.unwrap();
    conn.batch_execute("SELECT 1").await.unwrap();
    drop(conn);

    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(conn.process_id(), 1);
    let err = conn.batch_execute("SELECT 1").await.unwrap_err();
    assert!(err.is_closed(), "{err}");
    assert!(
        err.to_string().contains("resetting the pooled connection"),
        "{err}"
    );
    drop(conn);

    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(conn.process_id(), 2);
    conn.batch_execute("SELECT 1").await.unwrap();
    assert_eq!(pool.stats().destroyed, 1);
}
