//! A scripted fake server sending what a real one never would. Every case must end in a
//! clean error: no panic, no hang, no allocation sized by the peer.

use std::future::Future;
use std::time::Duration;

use qail_pg::Connection;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A backend message: tag, length, body.
pub(crate) fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
    let len = i32::try_from(body.len() + 4).unwrap();
    let mut out = vec![tag];
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(body);
    out
}

/// AuthenticationOk, a parameter, key data and ReadyForQuery: a session that started.
fn started() -> Vec<u8> {
    let mut out = msg(b'R', &0i32.to_be_bytes());
    out.extend(msg(b'S', b"client_encoding\0UTF8\0"));
    out.extend(msg(b'K', b"\0\0\0\x2aabcd"));
    out.extend(msg(b'Z', b"I"));
    out
}

/// Reads one untagged startup-phase message (StartupMessage or SSLRequest).
pub(crate) async fn read_startup(s: &mut TcpStream) -> Vec<u8> {
    let len = s.read_i32().await.unwrap();
    let mut body = vec![0; usize::try_from(len - 4).unwrap()];
    s.read_exact(&mut body).await.unwrap();
    body
}

/// Reads client messages up to and including a Sync.
async fn read_until_sync(s: &mut TcpStream) {
    let mut seen = Vec::new();
    while !seen.ends_with(b"S\0\0\0\x04") {
        let mut chunk = [0u8; 1024];
        let n = s.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the client hung up before Sync");
        seen.extend_from_slice(&chunk[..n]);
    }
}

/// Runs `script` as the server of one connection; returns a URL pointing to it.
async fn fake_server<F, Fut>(script: F) -> String
where
    F: FnOnce(TcpStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        script(socket).await;
    });
    format!("postgres://fake@127.0.0.1:{port}/fake?sslmode=disable")
}

/// Guards against a client that waits forever for bytes the server will never send.
pub(crate) async fn bounded<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("the client must fail on its own instead of waiting for more data")
}

#[tokio::test]
async fn negative_column_length_is_a_clean_error() {
    let url = fake_server(|mut s| async move {
        read_startup(&mut s).await;
        s.write_all(&started()).await.unwrap();
        // Parse + Describe + Sync: one int4 column.
        read_until_sync(&mut s).await;
        let mut reply = msg(b'1', b"");
        reply.extend(msg(b't', b"\0\0"));
        reply.extend(msg(
            b'T',
            b"\0\x01n\0\0\0\0\0\0\0\0\0\0\x17\0\x04\xff\xff\xff\xff\0\0",
        ));
        reply.extend(msg(b'Z', b"I"));
        s.write_all(&reply).await.unwrap();
        // Bind + Execute + Sync: a DataRow whose column length is -2.
        read_until_sync(&mut s).await;
        let mut reply = msg(b'2', b"");
        reply.extend(msg(b'D', b"\0\x01\xff\xff\xff\xfe"));
        reply.extend(msg(b'C', b"SELECT 1\0"));
        reply.extend(msg(b'Z', b"I"));
        s.write_all(&reply).await.unwrap();
        let _ = s.read(&mut [0; 64]).await;
    })
    .await;
    let mut conn = Connection::connect(&url).await.unwrap();
    assert_eq!(conn.process_id(), 42);
    let err = bounded(conn.query("SELECT 1", &[])).await.unwrap_err();
    assert!(err.is_closed(), "{err}");
    assert!(err.to_string().contains("invalid message"), "{err}");
    assert!(conn.is_closed());
    let again = conn.query("SELECT 1", &[]).await.unwrap_err();
    assert!(again.is_closed(), "{again}");
}

#[tokio::test]
async fn a_two_gigabyte_length_is_refused_before_reading_it() {
    for header in [
        &b"R\x7f\xff\xff\xff"[..],
        &b"R\x80\0\0\0"[..],
        &b"R\0\0\0\x03"[..],
    ] {
        let url = fake_server(move |mut s| async move {
            read_startup(&mut s).await;
            s.write_all(header).await.unwrap();
            // Keep the socket open: a client that believed the length would wait here.
            let _ = s.read(&mut [0; 64]).await;
        })
        .await;
        let err = bounded(Connection::connect(&url)).await.unwrap_err();
        assert!(err.to_string().contains("invalid message"), "{err}");
        assert!(err.is_closed(), "{err}");
    }
}

#[tokio::test]
async fn a_gigabyte_header_during_startup_is_refused_at_once() {
    // Before authentication, and after it (the session has not started until ReadyForQuery):
    // no type may be large yet, so the header alone is an error; nothing is reserved for
    // the gigabyte (the stream's unit tests measure the read buffer), and the client does not
    // wait for it until connect_timeout.
    let after_auth = msg(b'R', &0i32.to_be_bytes());
    for (before, header) in [
        (&b""[..], &b"R\x40\0\0\x04"[..]),
        (b"", b"E\x40\0\0\x04"),
        (b"", b"D\x40\0\0\x04"),
        (&after_auth[..], b"S\x40\0\0\x04"),
        (&after_auth[..], b"N\x40\0\0\x04"),
        (&after_auth[..], b"Z\0\0\0\x06"),
    ] {
        let first = [before, header].concat();
        let url = fake_server(move |mut s| async move {
            read_startup(&mut s).await;
            s.write_all(&first).await.unwrap();
            let _ = s.read(&mut [0; 64]).await;
        })
        .await;
        let url = format!("{url}&connect_timeout=10");
        let started = std::time::Instant::now();
        let err = bounded(Connection::connect(&url)).await.unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert!(!err.is_timeout(), "{err}");
        assert!(err.is_closed(), "{err}");
        assert!(err.to_string().contains("invalid message"), "{err}");
        assert!(err.to_string().contains("byte limit"), "{err}");
    }
}

#[tokio::test]
async fn bytes_after_the_ssl_answer_are_refused() {
    for answer in [&b"Sgarbage"[..], &b"Ngarbage"[..]] {
        let url = fake_server(move |mut s| async move {
            let request = read_startup(&mut s).await;
            assert_eq!(
                request, b"\x04\xd2\x16\x2f",
                "the client starts with SSLRequest"
            );
            s.write_all(answer).await.unwrap();
            let _ = s.read(&mut [0; 64]).await;
        })
        .await;
        let url = url.replace("sslmode=disable", "sslmode=prefer");
        let err = bounded(Connection::connect(&url)).await.unwrap_err();
        assert!(err.to_string().contains("unexpected bytes"), "{err}");
    }
}

#[tokio::test]
async fn a_server_closing_mid_startup_is_a_clean_error() {
    let url = fake_server(|mut s| async move {
        read_startup(&mut s).await;
        s.write_all(&msg(b'R', &0i32.to_be_bytes())[..6])
            .await
            .unwrap();
    })
    .await;
    let err = bounded(Connection::connect(&url)).await.unwrap_err();
    assert!(err.is_closed(), "{err}");
}

#[tokio::test]
async fn a_non_utf8_client_encoding_is_refused() {
    let url = fake_server(|mut s| async move {
        read_startup(&mut s).await;
        let mut reply = msg(b'R', &0i32.to_be_bytes());
        reply.extend(msg(b'S', b"client_encoding\0LATIN1\0"));
        reply.extend(msg(b'Z', b"I"));
        s.write_all(&reply).await.unwrap();
        let _ = s.read(&mut [0; 64]).await;
    })
    .await;
    let err = bounded(Connection::connect(&url)).await.unwrap_err();
    assert!(err.to_string().contains("LATIN1"), "{err}");
}

#[tokio::test]
async fn cleartext_password_is_sent_and_never_echoed() {
    let url = fake_server(|mut s| async move {
        read_startup(&mut s).await;
        s.write_all(&msg(b'R', &3i32.to_be_bytes())).await.unwrap();
        let mut tag = [0u8; 1];
        s.read_exact(&mut tag).await.unwrap();
        assert_eq!(&tag, b"p");
        let len = s.read_i32().await.unwrap();
        let mut body = vec![0; usize::try_from(len - 4).unwrap()];
        s.read_exact(&mut body).await.unwrap();
        assert_eq!(body, b"s3cr3t-pw\0");
        let error = msg(
            b'E',
            b"SFATAL\0C28P01\0Mpassword authentication failed for user \"fake\"\0\0",
        );
        s.write_all(&error).await.unwrap();
    })
    .await;
    let url = url.replace("fake@", "fake:s3cr3t-pw@");
    let err = bounded(Connection::connect(&url)).await.unwrap_err();
    assert_eq!(err.code(), Some("28P01"));
    assert!(!err.to_string().contains("s3cr3t"), "{err}");
    assert!(!format!("{err:?}").contains("s3cr3t"), "{err:?}");
}

#[tokio::test]
async fn a_silent_server_hits_connect_timeout() {
    let url = fake_server(|mut s| async move {
        read_startup(&mut s).await;
        // Never answer, never hang up.
        let _ = s.read(&mut [0; 64]).await;
    })
    .await;
    let url = format!("{url}&connect_timeout=1");
    let err = bounded(Connection::connect(&url)).await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(err.to_string().contains("connect_timeout"), "{err}");
    assert!(!err.to_string().contains("  "), "one sentence: {err}");
}
