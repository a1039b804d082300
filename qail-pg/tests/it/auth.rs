//! Authentication and TLS against real servers: the trust cluster of `DATABASE_URL`, and the
//! throwaway cluster of `scripts/pg-auth-cluster` (port 5433: one user per method, ssl=on with
//! a generated CA; names and passwords in `scripts/auth-env`, exported by `scripts/test`).

use qail_pg::{Connection, Error};

/// A variable exported by `scripts/test`; its absence fails the test and says what to run.
fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!(
            "{name} is not set: run the tests with scripts/test, which starts the \
             authentication cluster on port 5433 and exports its settings"
        )
    })
}

/// A key=value connection string to the authentication cluster, quoting the password.
fn conn_str(user_var: &str, password: &str, extra: &str) -> String {
    format!(
        "host={} port={} user={} password='{}' dbname=postgres {extra}",
        var("QAIL_AUTH_HOST"),
        var("QAIL_AUTH_PORT"),
        var(user_var),
        password.replace('\\', "\\\\").replace('\'', "\\'"),
    )
}

/// Connects as the user named by `user` (`SCRAM`, `MD5`, `PASSWORD`, `SSL`) with its password.
async fn connect_as(user: &str, extra: &str) -> Result<Connection, Error> {
    let password = var(&format!("QAIL_{user}_PASSWORD"));
    Connection::connect(&conn_str(&format!("QAIL_{user}_USER"), &password, extra)).await
}

fn ca() -> String {
    format!("sslrootcert={}", var("QAIL_TEST_CA"))
}

/// Runs a query that shows the session works, and returns who the server says we are.
async fn whoami(conn: &mut Connection) -> String {
    let rows = conn
        .query("SELECT current_user::text, 40 + 2", &[])
        .await
        .expect("a query on the new connection");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get::<i32>(1), 42);
    rows[0].get::<String>(0)
}

/// Whether the server sees this session as encrypted.
async fn uses_tls(conn: &mut Connection) -> bool {
    let rows = conn
        .query(
            "SELECT count(*)::int4 FROM pg_stat_ssl WHERE pid = pg_backend_pid() AND ssl",
            &[],
        )
        .await
        .expect("pg_stat_ssl is readable");
    rows[0].get::<i32>(0) == 1
}

#[tokio::test]
async fn trust() {
    let mut conn = Connection::connect(&super::url())
        .await
        .expect("trust login");
    assert_eq!(whoami(&mut conn).await, "postgres");
}

#[tokio::test]
async fn cleartext_password() {
    let mut conn = connect_as("PASSWORD", "sslmode=disable require_auth=password")
        .await
        .expect("password login");
    assert_eq!(whoami(&mut conn).await, var("QAIL_PASSWORD_USER"));
}

#[tokio::test]
async fn md5_password() {
    let mut conn = connect_as("MD5", "sslmode=disable require_auth=md5")
        .await
        .expect("md5 login");
    assert_eq!(whoami(&mut conn).await, var("QAIL_MD5_USER"));
}

#[tokio::test]
async fn scram_sha_256_without_tls() {
    let mut conn = connect_as("SCRAM", "sslmode=disable require_auth=scram-sha-256")
        .await
        .expect("scram login");
    assert_eq!(whoami(&mut conn).await, var("QAIL_SCRAM_USER"));
    assert!(!uses_tls(&mut conn).await);
}

#[tokio::test]
async fn scram_over_verified_tls_with_channel_binding() {
    let extra = format!(
        "host=localhost sslmode=verify-full {} channel_binding=require",
        ca()
    );
    let mut conn = connect_as("SSL", &extra)
        .await
        .expect("scram-sha-256-plus login over TLS");
    assert_eq!(whoami(&mut conn).await, var("QAIL_SSL_USER"));
    assert!(uses_tls(&mut conn).await);
}

#[tokio::test]
async fn hostssl_user_is_refused_without_tls() {
    let err = connect_as("SSL", "sslmode=disable")
        .await
        .expect_err("pg_hba.conf rejects ssl_user without encryption");
    assert_eq!(err.code(), Some("28000"), "{err}");
}

#[tokio::test]
async fn channel_binding_required_but_md5_offered() {
    let err = connect_as("MD5", "sslmode=require channel_binding=require")
        .await
        .expect_err("md5 cannot bind to the channel");
    assert_eq!(
        err.code(),
        None,
        "refused by the client, not the server: {err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("channel binding") || text.contains("channel_binding"),
        "{text}"
    );
}

#[tokio::test]
async fn require_auth_refuses_another_method() {
    let err = connect_as("MD5", "sslmode=disable require_auth=scram-sha-256")
        .await
        .expect_err("the server asks for md5, which require_auth forbids");
    assert_eq!(
        err.code(),
        None,
        "refused by the client, not the server: {err}"
    );
    let text = err.to_string();
    assert!(text.contains("require_auth"), "{text}");
    assert!(text.contains("md5"), "{text}");
}

#[tokio::test]
async fn verify_full_rejects_a_host_name_the_certificate_lacks() {
    let extra = format!(
        "host={} sslmode=verify-full {}",
        var("QAIL_AUTH_WRONG_HOST"),
        ca()
    );
    let err = connect_as("SSL", &extra)
        .await
        .expect_err("the certificate names only localhost and 127.0.0.1");
    assert_eq!(err.code(), None, "{err}");
    assert!(err.to_string().contains("does not name the host"), "{err}");
}

#[tokio::test]
async fn verify_ca_accepts_the_same_certificate_under_another_name() {
    let extra = format!(
        "host={} sslmode=verify-ca {}",
        var("QAIL_AUTH_WRONG_HOST"),
        ca()
    );
    let mut conn = connect_as("SSL", &extra)
        .await
        .expect("verify-ca checks the chain, not the name");
    assert!(uses_tls(&mut conn).await);
}

#[tokio::test]
async fn verify_ca_rejects_a_certificate_from_another_ca() {
    let extra = format!(
        "host=localhost sslmode=verify-ca sslrootcert={}",
        var("QAIL_TEST_OTHER_CA")
    );
    let err = connect_as("SSL", &extra)
        .await
        .expect_err("the server's certificate is not signed by the other CA");
    assert_eq!(err.code(), None, "{err}");
    assert!(err.to_string().contains("not signed by a CA"), "{err}");
}

#[tokio::test]
async fn wrong_password_is_28p01_and_never_shown() {
    const WRONG: &str = "Wrong-Pa55word-7319";
    for (user, extra) in [
        ("SCRAM", "sslmode=disable"),
        ("MD5", "sslmode=disable"),
        ("PASSWORD", "sslmode=disable"),
        ("SSL", "sslmode=require"),
    ] {
        let err = Connection::connect(&conn_str(&format!("QAIL_{user}_USER"), WRONG, extra))
            .await
            .expect_err("a wrong password must not log in");
        assert_eq!(err.code(), Some("28P01"), "{user}: {err}");
        assert!(!err.to_string().contains(WRONG), "{user}: {err}");
        assert!(!format!("{err:?}").contains(WRONG), "{user}: {err:?}");
    }
}

#[tokio::test]
async fn verify_full_checks_the_host_name_not_the_hostaddr() {
    let addr = var("QAIL_AUTH_HOST");
    let named = format!(
        "host=localhost hostaddr={addr} sslmode=verify-full {}",
        ca()
    );
    let mut conn = connect_as("SSL", &named)
        .await
        .expect("the certificate names localhost; hostaddr only says where to connect");
    assert!(uses_tls(&mut conn).await);

    let unnamed = format!(
        "host=db.example.com hostaddr={addr} sslmode=verify-full {}",
        ca()
    );
    let err = connect_as("SSL", &unnamed)
        .await
        .expect_err("the certificate does not name db.example.com");
    assert!(
        err.to_string()
            .contains("does not name the host \"db.example.com\""),
        "{err}"
    );
}

/// A password file at a fresh path holding `lines`, with Unix mode `mode`.
fn passfile(name: &str, lines: &str, mode: u32) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("qail-it-pgpass-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, lines).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

#[tokio::test]
async fn the_password_comes_from_the_password_file() {
    let (host, port) = (var("QAIL_AUTH_HOST"), var("QAIL_AUTH_PORT"));
    let lines = format!(
        "# a comment\n{host}:{port}:postgres:{}:wrong\n{host}:{port}:*:{}:{}\n*:*:*:{}:{}\n",
        var("QAIL_MD5_USER"),
        var("QAIL_SCRAM_USER"),
        var("QAIL_SCRAM_PASSWORD").replace(':', "\\:"),
        var("QAIL_MD5_USER"),
        var("QAIL_MD5_PASSWORD"),
    );
    let file = passfile("good", &lines, 0o600);
    let connect = |user: &str, file: &std::path::Path| {
        format!(
            "host={host} port={port} user={} dbname=postgres passfile='{}'",
            var(user),
            file.display()
        )
    };
    let mut scram = Connection::connect(&connect("QAIL_SCRAM_USER", &file))
        .await
        .expect("the SCRAM password comes from the file");
    assert_eq!(whoami(&mut scram).await, var("QAIL_SCRAM_USER"));
    // The first matching line wins: md5_user's own line has the wrong password.
    let err = Connection::connect(&connect("QAIL_MD5_USER", &file))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("28P01"), "{err}");
    // A file others may read is ignored, and the error says why.
    let open = passfile("open", &lines, 0o644);
    let err = Connection::connect(&connect("QAIL_SCRAM_USER", &open))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("chmod 0600"), "{err}");
    // A password in the connection string wins over the file.
    let with_password = format!(
        "{} password='{}'",
        connect("QAIL_MD5_USER", &file),
        var("QAIL_MD5_PASSWORD")
    );
    let mut md5 = Connection::connect(&with_password).await.unwrap();
    assert_eq!(whoami(&mut md5).await, var("QAIL_MD5_USER"));
}

/// A build without the `tls` feature behaves as libpq built without SSL support against the
/// TLS-enabled authentication cluster: `prefer` and `allow` log in over plain text, the modes
/// that need TLS are refused before connecting with an error naming the feature, and a user
/// the server admits only over TLS gets the server's refusal. Run by `scripts/test` with
/// `--no-default-features --features runtime`.
#[cfg(not(feature = "tls"))]
mod without_tls {
    use super::{connect_as, uses_tls, whoami};

    #[tokio::test]
    async fn prefer_and_allow_connect_in_plain_text() {
        for mode in ["prefer", "allow"] {
            let mut conn = connect_as("SCRAM", &format!("sslmode={mode}"))
                .await
                .unwrap_or_else(|e| panic!("sslmode={mode} without TLS: {e}"));
            assert_eq!(whoami(&mut conn).await, "scram_user");
            assert!(!uses_tls(&mut conn).await, "sslmode={mode}");
        }
    }

    #[tokio::test]
    async fn modes_that_need_tls_are_refused_naming_the_feature() {
        for mode in ["require", "verify-ca", "verify-full"] {
            let err = connect_as("SCRAM", &format!("sslmode={mode}"))
                .await
                .expect_err("no TLS in this build");
            assert_eq!(err.code(), None, "refused by the client: {err}");
            let text = err.to_string();
            assert!(text.contains("`tls` feature"), "sslmode={mode}: {text}");
        }
    }

    #[tokio::test]
    async fn a_tls_only_user_gets_the_servers_refusal() {
        let err = connect_as("SSL", "sslmode=prefer")
            .await
            .expect_err("pg_hba.conf admits ssl_user only over TLS");
        assert_eq!(err.code(), Some("28000"), "{err}");
    }
}
