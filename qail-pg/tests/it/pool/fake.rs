//! A scripted server whose session reset fails (a real one only does so when the previous user
//! left, say, a millisecond statement_timeout): the pool closes that connection, never hands
//! it on, and serves the caller with another.

use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use qail_pg::Pool;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// How the pool's session reset begins: its statements go out as one Query message.
const RESET: &[u8] = b"CLOSE ALL;";

/// Whether `sql` is a message of the pool's reset: the ROLLBACK of an open transaction, or
/// the session reset.
fn is_reset(sql: &[u8]) -> bool {
    sql == b"ROLLBACK" || sql.starts_with(RESET)
}

/// When the server answers the reset.
#[derive(Clone, Copy)]
enum Answer {
    /// At once; the test hears when the answer is out.
    Prompt,
    /// Only with the answer to the next other statement.
    Held,
}

/// A backend message: tag, length, body.
fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
    let len = i32::try_from(body.len() + 4).unwrap();
    let mut out = vec![tag];
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(body);
    out
}

fn hello(pid: i32) -> Vec<u8> {
    let mut out = msg(b'R', &0i32.to_be_bytes());
    out.extend(msg(b'S', b"client_encoding\0UTF8\0"));
    let mut key = pid.to_be_bytes().to_vec();
    key.extend_from_slice(b"abcd");
    out.extend(msg(b'K', &key));
    out.extend(msg(b'Z', b"I"));
    out
}

/// Serves one session as backend `pid`; session 1 fails the session reset.
async fn serve(mut s: TcpStream, pid: i32, answer: Answer, answered: mpsc::UnboundedSender<()>) {
    let len = s.read_i32().await.unwrap();
    let mut startup = vec![0; usize::try_from(len - 4).unwrap()];
    s.read_exact(&mut startup).await.unwrap();
    s.write_all(&hello(pid)).await.unwrap();
    let mut owed = Vec::new();
    loop {
        let Ok(tag) = s.read_u8().await else { return };
        let len = s.read_i32().await.unwrap();
        let mut body = vec![0; usize::try_from(len - 4).unwrap()];
        s.read_exact(&mut body).await.unwrap();
        if tag != b'Q' {
            return;
        }
        let sql = body.strip_suffix(b"\0").unwrap();
        if sql.is_empty() {
            owed.extend(msg(b'I', b""));
        } else if pid == 1 && sql.starts_with(RESET) {
            owed.extend(msg(
                b'E',
                b"SERROR\0C57014\0Mcanceling statement due to statement timeout\0\0",
            ));
        } else {
            owed.extend(msg(b'C', b"SELECT 0\0"));
        }
        owed.extend(msg(b'Z', b"I"));
        let last_of_reset = sql.starts_with(RESET);
        if matches!(answer, Answer::Held) && is_reset(sql) {
            continue;
        }
        if s.write_all(&std::mem::take(&mut owed)).await.is_err() {
            return;
        }
        if last_of_reset {
            answered.send(()).ok();
        }
    }
}

/// Starts the server; sessions get backend ids 1, 2, 3… The receiver hears of each reset
/// answered (when `answer` is Prompt).
async fn server(answer: Answer) -> (String, mpsc::UnboundedReceiver<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let next = Arc::new(AtomicI32::new(1));
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let pid = next.fetch_add(1, Ordering::AcqRel);
            tokio::spawn(serve(socket, pid, answer, tx.clone()));
        }
    });
    let url = format!("postgres://fake@127.0.0.1:{port}/fake?sslmode=disable");
    (url, rx)
}

async fn pool(url: &str, health_check: Option<Duration>) -> Pool {
    Pool::builder()
        .max_size(1)
        .health_check_after(health_check)
        .connect(url)
        .await
        .unwrap()
}

/// Uses the first connection once and returns it, which sends the reset.
async fn use_once(pool: &Pool) {
    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(conn.process_id(), 1);
    conn.batch_execute("SELECT 1").await.unwrap();
}

#[tokio::test]
async fn a_failed_reset_answered_before_checkout_is_caught_without_a_round_trip() {
    let (url, mut answered) = server(Answer::Prompt).await;
    let pool = pool(&url, None).await;
    use_once(&pool).await;
    tokio::time::timeout(Duration::from_secs(10), answered.recv())
        .await
        .expect("returning the connection sends the reset without waiting for a call")
        .unwrap();

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
async fn a_health_check_waits_for_the_reset_and_acquire_moves_on() {
    let (url, _) = server(Answer::Held).await;
    let pool = pool(&url, Some(Duration::ZERO)).await;
    use_once(&pool).await;

    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(
        conn.process_id(),
        2,
        "the connection whose reset failed is replaced"
    );
    conn.batch_execute("SELECT 1").await.unwrap();
    assert_eq!(pool.stats().destroyed, 1);
}

#[tokio::test]
async fn without_a_health_check_the_next_call_reports_a_late_failed_reset() {
    let (url, _) = server(Answer::Held).await;
    let pool = pool(&url, None).await;
    use_once(&pool).await;

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
