//! Several hosts against a real streaming pair: the primary and hot standby of
//! `scripts/pg-standby` (ports in `scripts/auth-env`, exported by `scripts/test`).
//! `target_session_attrs` in every mode and both host orders, reads and refused writes on the
//! standby, `load_balance_hosts`, and a dead first host within `connect_timeout`.

use std::time::{Duration, Instant};

use qail_pg::{Connection, Error};

/// A variable exported by `scripts/test`; its absence fails the test and says what to run.
pub(crate) fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!(
            "{name} is not set: run the tests with scripts/test, which starts the streaming \
             primary and standby (scripts/pg-standby) and exports their ports"
        )
    })
}

pub(crate) fn primary_port() -> u16 {
    var("QAIL_PRIMARY_PORT").parse().expect("a port number")
}

pub(crate) fn standby_port() -> u16 {
    var("QAIL_STANDBY_PORT").parse().expect("a port number")
}

/// A key=value string over `ports` on the test address, with `extra` keys.
pub(crate) fn hosts(ports: &[u16], extra: &str) -> String {
    let host = var("QAIL_AUTH_HOST");
    let hosts: Vec<&str> = ports.iter().map(|_| host.as_str()).collect();
    let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
    format!(
        "host={} port={} user=postgres dbname=postgres sslmode=disable {extra}",
        hosts.join(","),
        ports.join(",")
    )
}

/// The port of the server a connection reached.
pub(crate) async fn server_port(conn: &mut Connection) -> u16 {
    let row = conn
        .query_one("SELECT inet_server_port()", &[])
        .await
        .unwrap();
    u16::try_from(row.get::<i32>(0)).expect("a port")
}

async fn reached(ports: &[u16], attrs: &str) -> Result<u16, Error> {
    let mut conn =
        Connection::connect(&hosts(ports, &format!("target_session_attrs={attrs}"))).await?;
    Ok(server_port(&mut conn).await)
}

#[tokio::test]
async fn target_session_attrs_picks_the_right_server_in_either_order() {
    let (primary, standby) = (primary_port(), standby_port());
    for order in [[standby, primary], [primary, standby]] {
        let first = order[0];
        for (attrs, expected) in [
            ("any", first),
            ("read-write", primary),
            ("read-only", standby),
            ("primary", primary),
            ("standby", standby),
            ("prefer-standby", standby),
        ] {
            assert_eq!(
                reached(&order, attrs).await.unwrap(),
                expected,
                "target_session_attrs={attrs} over ports {order:?}"
            );
        }
    }
}

#[tokio::test]
async fn prefer_standby_falls_back_to_the_primary_alone() {
    let primary = primary_port();
    assert_eq!(
        reached(&[primary], "prefer-standby").await.unwrap(),
        primary
    );
    assert_eq!(
        reached(&[primary, primary], "prefer-standby")
            .await
            .unwrap(),
        primary
    );
}

#[tokio::test]
async fn no_matching_server_names_each_host() {
    let (primary, standby) = (primary_port(), standby_port());
    let host = var("QAIL_AUTH_HOST");
    let e = reached(&[primary, 1], "standby").await.unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with(&format!(
            "no server among {host}:{primary}, {host}:1 is a standby; {host}:{primary} is a primary; {host}:1: could not connect"
        )),
        "{text}"
    );
    assert!(text.contains("check target_session_attrs"), "{text}");

    let e = reached(&[standby], "read-write").await.unwrap_err();
    assert!(
        e.to_string().starts_with(&format!(
            "no server among {host}:{standby} accepts writes (read-write); {host}:{standby} is read-only"
        )),
        "{e}"
    );
    let e = reached(&[standby], "primary").await.unwrap_err();
    assert!(e.to_string().contains("is a standby"), "{e}");
    let e = reached(&[primary], "read-only").await.unwrap_err();
    assert!(e.to_string().contains("is read-write"), "{e}");
}

#[tokio::test]
async fn the_standby_serves_reads_and_refuses_writes() {
    let mut primary = Connection::connect(&hosts(&[primary_port()], ""))
        .await
        .unwrap();
    primary
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS qail_replicated (id int8 PRIMARY KEY, note text);
             INSERT INTO qail_replicated VALUES (1, 'from the primary') ON CONFLICT DO NOTHING",
        )
        .await
        .unwrap();
    let lsn: String = primary
        .query_one("SELECT pg_current_wal_lsn()::text", &[])
        .await
        .unwrap()
        .get(0);

    let mut standby =
        Connection::connect(&hosts(&[standby_port()], "target_session_attrs=standby"))
            .await
            .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let replayed: bool = standby
            .query_one(
                "SELECT pg_last_wal_replay_lsn() >= $1::text::pg_lsn",
                &[&lsn.as_str()],
            )
            .await
            .unwrap()
            .get(0);
        if replayed {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the standby did not replay {lsn}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let note: String = standby
        .query_one("SELECT note FROM qail_replicated WHERE id = $1", &[&1i64])
        .await
        .unwrap()
        .get(0);
    assert_eq!(note, "from the primary");

    let e = standby
        .execute(
            "INSERT INTO qail_replicated VALUES ($1, 'on the standby')",
            &[&2i64],
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some("25006"), "{e}");
    assert!(e.to_string().contains("read-only transaction"), "{e}");
    // The refused write leaves the session usable.
    standby.batch_execute("SELECT 1").await.unwrap();
}

#[tokio::test]
async fn load_balance_hosts_random_spreads_connections() {
    let (primary, standby) = (primary_port(), standby_port());
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..24 {
        let mut conn =
            Connection::connect(&hosts(&[primary, standby], "load_balance_hosts=random"))
                .await
                .unwrap();
        seen.insert(server_port(&mut conn).await);
    }
    assert_eq!(
        seen,
        [primary, standby].into(),
        "24 random picks reach both servers"
    );
    // disable keeps the order.
    for _ in 0..4 {
        let mut conn =
            Connection::connect(&hosts(&[standby, primary], "load_balance_hosts=disable"))
                .await
                .unwrap();
        assert_eq!(server_port(&mut conn).await, standby);
    }
}

#[tokio::test]
async fn a_hung_first_host_falls_through_within_connect_timeout() {
    // A listener that never accepts: the TCP handshake completes in the backlog, and the
    // startup message is never answered, like a server that hangs.
    let hung = tokio::net::TcpListener::bind((var("QAIL_AUTH_HOST"), 0))
        .await
        .unwrap();
    let hung_port = hung.local_addr().unwrap().port();
    let primary = primary_port();
    let started = Instant::now();
    let mut conn = Connection::connect(&hosts(
        &[hung_port, 1, primary],
        "connect_timeout=2 target_session_attrs=read-write",
    ))
    .await
    .unwrap();
    let took = started.elapsed();
    assert_eq!(server_port(&mut conn).await, primary);
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(4),
        "the hung host costs one connect_timeout (2 s), the refused one nothing: took {took:?}"
    );

    // With no host left after it, the time-out is the error.
    let e = Connection::connect(&hosts(&[hung_port], "connect_timeout=2"))
        .await
        .unwrap_err();
    assert!(e.is_timeout(), "{e}");
    assert!(e.to_string().contains("timed out after 2s"), "{e}");
    drop(hung);
}

/// A relay to `upstream` that drops the server's `in_hot_standby` and
/// `default_transaction_read_only` ParameterStatus messages, as a server older than
/// PostgreSQL 14 (which does not report them) would; everything else passes unchanged, or,
/// with `hang_after_startup`, nothing after the first ReadyForQuery.
async fn without_hot_standby_reports(upstream: u16, hang_after_startup: bool) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let host = var("QAIL_AUTH_HOST");
    let listener = tokio::net::TcpListener::bind((host.as_str(), 0))
        .await
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let server = tokio::net::TcpStream::connect((host.as_str(), upstream))
                .await
                .unwrap();
            let (mut client_read, mut client_write) = client.into_split();
            let (mut server_read, mut server_write) = server.into_split();
            tokio::spawn(async move {
                let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
            });
            tokio::spawn(async move {
                // Note: with sslmode=disable every server message is framed: tag, length.
                loop {
                    let mut header = [0u8; 5];
                    if server_read.read_exact(&mut header).await.is_err() {
                        return;
                    }
                    let [tag, len @ ..] = header;
                    let len = usize::try_from(u32::from_be_bytes(len))
                        .unwrap()
                        .saturating_sub(4);
                    let mut body = vec![0u8; len];
                    if server_read.read_exact(&mut body).await.is_err() {
                        return;
                    }
                    let hidden = tag == b'S'
                        && (body.starts_with(b"in_hot_standby\0")
                            || body.starts_with(b"default_transaction_read_only\0"));
                    if !hidden
                        && (client_write.write_all(&header).await.is_err()
                            || client_write.write_all(&body).await.is_err())
                    {
                        return;
                    }
                    if tag == b'Z' && hang_after_startup {
                        // Keep both sockets open and answer nothing more.
                        std::future::pending::<()>().await;
                    }
                }
            });
        }
    });
    port
}

#[tokio::test]
async fn without_the_reported_parameters_the_server_is_asked() {
    let (primary, standby) = (primary_port(), standby_port());
    let old_primary = without_hot_standby_reports(primary, false).await;
    let old_standby = without_hot_standby_reports(standby, false).await;
    let mut conn = Connection::connect(&hosts(&[old_standby], ""))
        .await
        .unwrap();
    assert_eq!(conn.parameter_status("in_hot_standby"), None);
    assert_eq!(conn.parameter_status("default_transaction_read_only"), None);
    assert_eq!(server_port(&mut conn).await, standby);

    for order in [[old_standby, old_primary], [old_primary, old_standby]] {
        for (attrs, expected) in [
            ("read-write", primary),
            ("read-only", standby),
            ("primary", primary),
            ("standby", standby),
            ("prefer-standby", standby),
        ] {
            assert_eq!(
                reached(&order, attrs).await.unwrap(),
                expected,
                "target_session_attrs={attrs} over relays {order:?}"
            );
        }
    }
}

#[tokio::test]
async fn connect_timeout_bounds_the_session_check() {
    // The first server starts the session, then never answers SHOW transaction_read_only.
    let silent = without_hot_standby_reports(standby_port(), true).await;
    let primary = primary_port();
    let started = Instant::now();
    let mut conn = Connection::connect(&hosts(
        &[silent, primary],
        "connect_timeout=2 target_session_attrs=read-write",
    ))
    .await
    .unwrap();
    let took = started.elapsed();
    assert_eq!(server_port(&mut conn).await, primary);
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(4),
        "the silent check costs one connect_timeout (2 s): took {took:?}"
    );
}
