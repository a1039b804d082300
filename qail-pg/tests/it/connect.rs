//! Connecting: URL and key=value forms, Unix sockets, server parameters.

use qail_pg::{Connection, TransactionStatus};

#[tokio::test]
async fn connects_with_a_url_and_reports_parameters() {
    let conn = super::connect().await;
    let version = conn.parameter_status("server_version").unwrap();
    assert!(
        version.chars().next().unwrap().is_ascii_digit(),
        "{version}"
    );
    assert_eq!(conn.parameter_status("client_encoding"), Some("UTF8"));
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    assert!(conn.process_id() != 0);
    assert!(!conn.is_closed());
}

#[tokio::test]
async fn connects_with_key_value_and_application_name() {
    let config = super::config();
    let port = config.ports.first().copied().unwrap_or(5432);
    let host = match config.hosts.first() {
        Some(qail_pg::Host::Tcp(h)) => h.clone(),
        _ => "127.0.0.1".to_owned(),
    };
    let s = format!(
        "host={host} port={port} user={} dbname={} application_name=qail_kv_test sslmode=disable",
        config.user, config.dbname
    );
    let mut conn = Connection::connect(&s).await.unwrap();
    assert_eq!(
        conn.parameter_status("application_name"),
        Some("qail_kv_test")
    );
    conn.batch_execute("SELECT 1").await.unwrap();
}

#[tokio::test]
async fn connects_over_the_unix_socket() {
    let config = super::config();
    let s = format!(
        "host=/var/run/postgresql user={} dbname={}",
        config.user, config.dbname
    );
    let mut conn = Connection::connect(&s).await.unwrap();
    conn.batch_execute("SELECT 1").await.unwrap();
}

#[tokio::test]
async fn tries_hosts_in_order() {
    let config = super::config();
    // Port 1 refuses connections; the second host is the real server.
    let s = format!(
        "postgres://{}@127.0.0.1:1,127.0.0.1:{}/{}?sslmode=disable",
        config.user,
        config.ports.first().copied().unwrap_or(5432),
        config.dbname
    );
    let mut conn = Connection::connect(&s).await.unwrap();
    conn.batch_execute("SELECT 1").await.unwrap();
}

#[tokio::test]
async fn options_are_sent_at_startup() {
    let mut config = super::config();
    config.options = Some("-c search_path=qail_opt_schema".to_owned());
    let mut conn = Connection::connect_with(&config).await.unwrap();
    let stmt = conn.prepare("SHOW search_path").await.unwrap();
    assert_eq!(stmt.columns()[0].name(), "search_path");
    let rows = conn.query("SHOW search_path", &[]).await.unwrap();
    assert_eq!(rows[0].raw(0), Some(&b"qail_opt_schema"[..]));
}

#[tokio::test]
async fn a_closed_server_port_is_an_io_error() {
    let err = Connection::connect("postgres://postgres@127.0.0.1:1/postgres?sslmode=disable")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("127.0.0.1:1"), "{err}");
}
