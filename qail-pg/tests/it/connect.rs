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
    let config = super::config().options("-c search_path=qail_opt_schema");
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

/// A variable set by scripts/auth-env for the authentication cluster.
fn auth_env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run the tests with scripts/test, which sets up the auth cluster")
    })
}

/// A URL for the authentication cluster as `user_var`/`password_var` name them.
fn auth_url(user_var: &str, password: &str, extra: &str) -> String {
    format!(
        "postgres://{}:{password}@{}:{}/postgres?{extra}",
        auth_env(user_var),
        auth_env("QAIL_AUTH_HOST"),
        auth_env("QAIL_AUTH_PORT"),
    )
}

async fn select_one(url: &str) -> Result<(), qail_pg::Error> {
    let mut conn = Connection::connect(url).await?;
    conn.batch_execute("SELECT 1").await
}

#[tokio::test]
async fn scram_md5_and_cleartext_authenticate() {
    let scram = auth_env("QAIL_SCRAM_PASSWORD");
    select_one(&auth_url("QAIL_SCRAM_USER", &scram, "sslmode=disable"))
        .await
        .unwrap();
    let md5 = auth_env("QAIL_MD5_PASSWORD");
    select_one(&auth_url("QAIL_MD5_USER", &md5, "sslmode=disable"))
        .await
        .unwrap();
    let clear = auth_env("QAIL_PASSWORD_PASSWORD");
    select_one(&auth_url("QAIL_PASSWORD_USER", &clear, "sslmode=disable"))
        .await
        .unwrap();
}

#[tokio::test]
async fn scram_plus_over_tls_and_channel_binding_require() {
    let password = auth_env("QAIL_SSL_PASSWORD");
    let url = auth_url(
        "QAIL_SSL_USER",
        &password,
        "sslmode=require&channel_binding=require",
    );
    select_one(&url).await.unwrap();
    let ca = auth_env("QAIL_TEST_CA");
    let full = format!(
        "postgres://{}:{password}@localhost:{}/postgres?sslmode=verify-full&sslrootcert={ca}",
        auth_env("QAIL_SSL_USER"),
        auth_env("QAIL_AUTH_PORT"),
    );
    select_one(&full).await.unwrap();
}

#[tokio::test]
async fn channel_binding_require_refuses_md5_and_plain_connections() {
    let md5 = auth_env("QAIL_MD5_PASSWORD");
    let err = select_one(&auth_url(
        "QAIL_MD5_USER",
        &md5,
        "sslmode=prefer&channel_binding=require",
    ))
    .await
    .unwrap_err();
    assert!(err.to_string().contains("channel_binding"), "{err}");
    assert!(!err.to_string().contains(&md5));
    let scram = auth_env("QAIL_SCRAM_PASSWORD");
    let err = select_one(&auth_url(
        "QAIL_SCRAM_USER",
        &scram,
        "sslmode=disable&channel_binding=require",
    ))
    .await
    .unwrap_err();
    assert!(err.to_string().contains("channel_binding"), "{err}");
}

#[tokio::test]
async fn require_auth_refuses_other_methods() {
    let md5 = auth_env("QAIL_MD5_PASSWORD");
    let err = select_one(&auth_url(
        "QAIL_MD5_USER",
        &md5,
        "sslmode=disable&require_auth=scram-sha-256",
    ))
    .await
    .unwrap_err();
    assert!(err.to_string().contains("require_auth"), "{err}");
    let scram = auth_env("QAIL_SCRAM_PASSWORD");
    select_one(&auth_url(
        "QAIL_SCRAM_USER",
        &scram,
        "sslmode=disable&require_auth=scram-sha-256",
    ))
    .await
    .unwrap();
}

#[tokio::test]
async fn a_wrong_password_is_28p01_and_never_shown() {
    let wrong = "not-the-password-9931";
    for user in ["QAIL_SCRAM_USER", "QAIL_MD5_USER", "QAIL_PASSWORD_USER"] {
        let err = select_one(&auth_url(user, wrong, "sslmode=disable"))
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some("28P01"), "{user}: {err}");
        assert!(!err.to_string().contains(wrong), "{err}");
        assert!(!format!("{err:?}").contains(wrong), "{err:?}");
    }
}

#[tokio::test]
async fn a_connection_moves_across_tasks() {
    fn assert_send<T: Send>(t: T) -> T {
        t
    }
    let mut conn = assert_send(super::connect().await);
    let handle = tokio::spawn(async move {
        conn.batch_execute("SELECT 1").await.unwrap();
        conn
    });
    let conn = handle.await.unwrap();
    conn.close().await;
}
