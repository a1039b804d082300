//! The startup on the server of `DATABASE_URL`, whatever its version (scripts/test-versions
//! runs this module against PostgreSQL 13 to 18): protocol 3.0 and 3.2, the cancel key each
//! carries, and SCRAM-SHA-256. A scripted fake server covers what only other servers send.

use qail_pg::{Config, Connection, ProtocolVersion};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::hostile::{bounded, msg, read_startup};
use super::server_major as major;

async fn connect_with(config: &Config) -> Result<Connection, qail_pg::Error> {
    Connection::connect_with(config).await
}

/// The version a connection asking for up to 3.2 ends up with on a server of `major`.
fn negotiated(major: i32) -> ProtocolVersion {
    if major >= 18 {
        ProtocolVersion::V3_2
    } else {
        ProtocolVersion::V3_0
    }
}

#[tokio::test]
async fn the_server_is_the_version_this_run_is_for() {
    let mut conn = super::connect().await;
    let major = major(&mut conn).await;
    // Note: scripts/test-versions names the version of each run; a run without it (the main
    // one, on the system server) checks nothing here.
    if let Ok(expected) = std::env::var("QAIL_PG_MAJOR") {
        assert_eq!(
            major.to_string(),
            expected,
            "DATABASE_URL is the wrong server"
        );
    }
    assert!(
        (13..=18).contains(&major),
        "PostgreSQL {major} is not supported"
    );
}

#[tokio::test]
async fn protocol_3_0_is_the_default() {
    let mut conn = super::connect().await;
    assert_eq!(conn.protocol_version(), ProtocolVersion::V3_0);
    assert_eq!(conn.query("SELECT 1", &[]).await.unwrap().len(), 1);
}

#[tokio::test]
async fn max_protocol_version_3_2_is_used_from_postgresql_18_and_negotiated_down_before() {
    let config = super::config().max_protocol_version(ProtocolVersion::V3_2);
    let mut conn = connect_with(&config).await.expect("connects with max 3.2");
    let major = major(&mut conn).await;
    assert_eq!(
        conn.protocol_version(),
        negotiated(major),
        "PostgreSQL {major}"
    );
    // Queries of every flow work on the version agreed.
    let v: i64 = conn
        .query_one("SELECT $1::int8 * 2", &[&21i64])
        .await
        .unwrap()
        .get(0);
    assert_eq!(v, 42);
    conn.batch_execute("SELECT 1; SELECT 2").await.unwrap();
    let mut tx = conn.begin().await.unwrap();
    tx.execute("CREATE TEMP TABLE t32 (x int4)", &[])
        .await
        .unwrap();
    assert_eq!(
        tx.execute("INSERT INTO t32 SELECT generate_series(1, 3)", &[])
            .await
            .unwrap(),
        3
    );
    tx.rollback().await.unwrap();
    // `latest` is 3.2 too.
    let url = super::url();
    let sep = if url.contains('?') { '&' } else { '?' };
    let conn = Connection::connect(&format!("{url}{sep}max_protocol_version=latest"))
        .await
        .unwrap();
    assert_eq!(conn.protocol_version(), negotiated(major));
}

#[tokio::test]
async fn a_cancel_under_protocol_3_2_stops_a_query() {
    // Note: from PostgreSQL 18 the session's cancel key is 32 bytes; the server matches the
    // whole key, so a cancel that sent only part of it would leave the sleep running.
    let config = super::config().max_protocol_version(ProtocolVersion::V3_2);
    let mut conn = connect_with(&config).await.unwrap();
    let major = major(&mut conn).await;
    assert_eq!(conn.protocol_version(), negotiated(major));
    super::cancel::cancel_sleep(&mut conn).await;
}

#[tokio::test]
async fn min_protocol_version_3_2_needs_postgresql_18() {
    let major = major(&mut super::connect().await).await;
    let config = super::config().min_protocol_version(ProtocolVersion::V3_2);
    match connect_with(&config).await {
        Ok(mut conn) => {
            assert!(major >= 18, "PostgreSQL {major} accepted 3.2");
            assert_eq!(conn.protocol_version(), ProtocolVersion::V3_2);
            assert_eq!(conn.query("SELECT 1", &[]).await.unwrap().len(), 1);
        }
        Err(err) => {
            assert!(major < 18, "PostgreSQL {major} refused 3.2: {err}");
            assert!(
                err.to_string().contains(
                    "the server supports protocol version 3.0 at most, but \
                     min_protocol_version is 3.2"
                ),
                "{err}"
            );
            assert!(err.code().is_none(), "{err}");
        }
    }
}

#[tokio::test]
async fn a_minimum_above_the_maximum_is_refused_before_the_startup() {
    let config = super::config()
        .max_protocol_version(ProtocolVersion::V3_0)
        .min_protocol_version(ProtocolVersion::V3_2);
    let err = connect_with(&config).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("min_protocol_version (3.2) is greater than max_protocol_version (3.0)"),
        "{err}"
    );
}

/// Connects as the SCRAM user: on `QAIL_SCRAM_PORT` (a server of the same version as
/// `DATABASE_URL`'s, set by scripts/test-versions), else the authentication cluster.
async fn connect_scram(version: ProtocolVersion) -> Connection {
    let var = |name: &str| {
        std::env::var(name).unwrap_or_else(|_| {
            panic!(
                "{name} is not set: run the tests with scripts/test, which exports the \
                 settings of scripts/auth-env"
            )
        })
    };
    let port = std::env::var("QAIL_SCRAM_PORT").unwrap_or_else(|_| var("QAIL_AUTH_PORT"));
    let url = format!(
        "host={} port={port} user={} password='{}' dbname=postgres sslmode=disable \
         require_auth=scram-sha-256 max_protocol_version={version}",
        var("QAIL_AUTH_HOST"),
        var("QAIL_SCRAM_USER"),
        var("QAIL_SCRAM_PASSWORD"),
    );
    Connection::connect(&url).await.expect("SCRAM login")
}

#[tokio::test]
async fn scram_sha_256_on_this_version() {
    let major = major(&mut super::connect().await).await;
    for version in [ProtocolVersion::V3_0, ProtocolVersion::V3_2] {
        let mut conn = connect_scram(version).await;
        let rows = conn
            .query(
                "SELECT current_user::text, current_setting('server_version_num')::int4 / 10000",
                &[],
            )
            .await
            .unwrap();
        assert_eq!(
            rows[0].get::<String>(0),
            std::env::var("QAIL_SCRAM_USER").unwrap()
        );
        // Note: without QAIL_SCRAM_PORT (the main run) the login goes to the authentication
        // cluster, whose version may differ from DATABASE_URL's.
        let scram_major = rows[0].get::<i32>(1);
        if std::env::var("QAIL_SCRAM_PORT").is_ok() {
            assert_eq!(
                scram_major, major,
                "the SCRAM server is not the version of DATABASE_URL's"
            );
        }
        let expected = version.min(negotiated(scram_major));
        assert_eq!(conn.protocol_version(), expected, "asked for {version}");
    }
}

/// A fake server for `sessions` connections, each run on a task of its own by `script` with
/// its index; returns a URL pointing to it.
async fn fake_server<F, Fut>(sessions: usize, script: F) -> String
where
    F: Fn(usize, tokio::net::TcpStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        for i in 0..sessions {
            let (socket, _) = listener.accept().await.unwrap();
            tokio::spawn(script(i, socket));
        }
    });
    format!("postgres://fake@127.0.0.1:{port}/fake?sslmode=disable")
}

/// AuthenticationOk, client_encoding, BackendKeyData with `key`, ReadyForQuery.
fn started_with_key(key: &[u8]) -> Vec<u8> {
    let mut body = 42i32.to_be_bytes().to_vec();
    body.extend_from_slice(key);
    let mut out = msg(b'R', &0i32.to_be_bytes());
    out.extend(msg(b'S', b"client_encoding\0UTF8\0"));
    out.extend(msg(b'K', &body));
    out.extend(msg(b'Z', b"I"));
    out
}

/// NegotiateProtocolVersion offering 3.`minor` and naming no option.
fn negotiate(minor: i32) -> Vec<u8> {
    let mut body = ((3 << 16) | minor).to_be_bytes().to_vec();
    body.extend_from_slice(&0i32.to_be_bytes());
    msg(b'v', &body)
}

#[tokio::test]
async fn an_older_server_answers_3_2_with_3_0_which_min_protocol_version_decides() {
    for min in ["3.0", "3.2"] {
        let url = fake_server(1, |_, mut s| async move {
            let startup = read_startup(&mut s).await;
            assert_eq!(
                startup[..4],
                [0, 3, 0, 2],
                "the StartupMessage asks for 3.2"
            );
            let mut reply = negotiate(0);
            reply.extend(started_with_key(b"abcd"));
            // Note: the client may have hung up already (min 3.2).
            let _ = s.write_all(&reply).await;
        })
        .await;
        let url = format!("{url}&max_protocol_version=3.2&min_protocol_version={min}");
        let result = bounded(Connection::connect(&url)).await;
        match min {
            "3.0" => {
                let conn = result.expect("3.0 is accepted");
                assert_eq!(conn.protocol_version(), ProtocolVersion::V3_0);
            }
            _ => {
                let err = result.expect_err("3.0 is below the minimum");
                assert!(
                    err.to_string().contains(
                        "supports protocol version 3.0 at most, but min_protocol_version is 3.2"
                    ),
                    "{err}"
                );
            }
        }
    }
}

#[tokio::test]
async fn offers_the_protocol_forbids_end_the_attempt() {
    for (max, minor, says) in [
        ("3.2", 1, "3.1, which qail-pg does not speak"),
        ("3.2", 2, "which is not older"),
        ("3.0", 0, "which is not older"),
    ] {
        let url = fake_server(1, move |_, mut s| async move {
            read_startup(&mut s).await;
            let mut reply = negotiate(minor);
            reply.extend(started_with_key(b"abcd"));
            let _ = s.write_all(&reply).await;
        })
        .await;
        let url = format!("{url}&max_protocol_version={max}");
        let err = bounded(Connection::connect(&url))
            .await
            .expect_err("refused");
        assert!(
            err.to_string().contains(says),
            "{max} offered 3.{minor}: {err}"
        );
    }
}

#[tokio::test]
async fn a_long_key_is_refused_under_3_0() {
    let url = fake_server(1, |_, mut s| async move {
        let startup = read_startup(&mut s).await;
        assert_eq!(
            startup[..4],
            [0, 3, 0, 0],
            "the StartupMessage asks for 3.0"
        );
        let _ = s.write_all(&started_with_key(&[7; 32])).await;
    })
    .await;
    let err = bounded(Connection::connect(&url))
        .await
        .expect_err("a 32-byte key under 3.0");
    assert!(err.to_string().contains("BackendKeyData"), "{err}");
}

#[tokio::test]
async fn the_cancel_request_carries_the_whole_256_byte_key() {
    let key: Vec<u8> = (0..=255u8).collect();
    let (sent, received) = tokio::sync::oneshot::channel();
    let sent = std::sync::Mutex::new(Some(sent));
    let served = key.clone();
    let url = fake_server(2, move |i, mut s| {
        let served = served.clone();
        let sent = if i == 1 {
            sent.lock().unwrap().take()
        } else {
            None
        };
        async move {
            let request = read_startup(&mut s).await;
            if i == 0 {
                assert_eq!(
                    request[..4],
                    [0, 3, 0, 2],
                    "the StartupMessage asks for 3.2"
                );
                s.write_all(&started_with_key(&served)).await.unwrap();
                // Keep the session open while the cancel request arrives.
                let mut rest = Vec::new();
                let _ = s.read_to_end(&mut rest).await;
            } else {
                sent.expect("one cancel request").send(request).unwrap();
            }
        }
    })
    .await;
    let url = format!("{url}&max_protocol_version=3.2");
    let conn = bounded(Connection::connect(&url)).await.unwrap();
    assert_eq!(conn.protocol_version(), ProtocolVersion::V3_2);
    bounded(conn.cancel_token().cancel()).await.unwrap();
    let request = bounded(received).await.unwrap();
    let mut expected = 80_877_102i32.to_be_bytes().to_vec();
    expected.extend_from_slice(&42i32.to_be_bytes());
    expected.extend_from_slice(&key);
    assert_eq!(request, expected);
}
