//! Handshakes against an in-process rustls server using the certificates in `testdata/`
//! (a CA, a server certificate naming only `localhost` and `127.0.0.1`, a client certificate,
//! and an unrelated CA).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::ServerConfig;
use rustls::server::WebPkiClientVerifier;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/conn/connect/tls/testdata")
        .join(name)
}

/// A directory that holds no default certificate files.
fn no_defaults() -> PathBuf {
    PathBuf::from("/nonexistent/qail-pg-test/.postgresql")
}

/// A fresh directory holding the named fixtures under new names (`root.crt` …).
fn defaults_dir(tag: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("qail-pg-tls-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create a temporary directory");
    for (from, to) in files {
        std::fs::copy(fixture(from), dir.join(to)).expect("copy a fixture");
    }
    dir
}

fn config(s: &str) -> Config {
    let var = |name: &str| (name == "USER").then(|| "tester".to_owned());
    Config::parse_with_env(s, &var).expect("valid test configuration")
}

fn ca_option() -> String {
    format!("sslrootcert={}", fixture("ca.crt").display())
}

fn server_config(client_auth: bool) -> Arc<ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs = CertificateDer::pem_file_iter(fixture("server.crt"))
        .and_then(|c| c.collect::<Result<Vec<_>, _>>())
        .expect("server certificate fixture");
    let key = PrivateKeyDer::from_pem_file(fixture("server.key")).expect("server key fixture");
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .expect("default versions");
    let builder = if client_auth {
        let mut roots = RootCertStore::empty();
        let ca = CertificateDer::from_pem_file(fixture("ca.crt")).expect("CA fixture");
        roots.add(ca).expect("CA is usable");
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .expect("client verifier");
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    Arc::new(
        builder
            .with_single_cert(certs, key)
            .expect("server cert and key match"),
    )
}

/// Handshakes with an in-process server, then reads one byte the server sends (so a client
/// certificate the server refuses shows up as an error). Returns the server's leaf DER.
async fn connect(
    config: &Config,
    host: &str,
    dir: &Path,
    client_auth: bool,
) -> Result<Vec<u8>, Error> {
    let (client, server) = tokio::io::duplex(64 * 1024);
    let acceptor = tokio_rustls::TlsAcceptor::from(server_config(client_auth));
    let server = async move {
        let mut stream = acceptor.accept(server).await?;
        stream.write_all(b"!").await?;
        stream.flush().await?;
        Ok::<_, io::Error>(stream)
    };
    let client = async {
        let mut stream = handshake_with(client, config, host, Some(dir)).await?;
        let mut byte = [0u8; 1];
        stream
            .read_exact(&mut byte)
            .await
            .map_err(|e| handshake_error(e, host, None))?;
        assert_eq!(&byte, b"!");
        Ok::<_, Error>(peer_certificate(&stream).expect("server sent a certificate"))
    };
    let (client, _server) = tokio::join!(client, server);
    client
}

fn server_der() -> Vec<u8> {
    CertificateDer::from_pem_file(fixture("server.crt"))
        .expect("server certificate fixture")
        .as_ref()
        .to_vec()
}

#[tokio::test]
async fn require_without_roots_accepts_any_certificate() {
    let config = config("sslmode=require");
    let der = connect(&config, "db.example.com", &no_defaults(), false)
        .await
        .expect("require does not check the certificate");
    assert_eq!(der, server_der());
}

#[tokio::test]
async fn verify_full_accepts_the_names_in_the_certificate() {
    let config = config(&format!("sslmode=verify-full {}", ca_option()));
    for host in ["localhost", "127.0.0.1"] {
        connect(&config, host, &no_defaults(), false)
            .await
            .unwrap_or_else(|e| panic!("{host}: {e}"));
    }
}

#[tokio::test]
async fn verify_full_rejects_other_names() {
    let config = config(&format!("sslmode=verify-full {}", ca_option()));
    for host in ["127.0.0.2", "db.example.com", "::1"] {
        let err = connect(&config, host, &no_defaults(), false)
            .await
            .expect_err(host);
        assert_eq!(err.kind(), Kind::Tls);
        let text = err.to_string();
        assert!(
            text.contains(&format!("does not name the host \"{host}\"")),
            "{text}"
        );
        assert!(text.contains("sslmode=verify-ca"), "{text}");
    }
}

#[tokio::test]
async fn verify_ca_checks_the_chain_but_not_the_name() {
    let config = config(&format!("sslmode=verify-ca {}", ca_option()));
    connect(&config, "db.example.com", &no_defaults(), false)
        .await
        .expect("verify-ca ignores the host name");
}

#[tokio::test]
async fn verify_ca_rejects_a_certificate_from_another_ca() {
    let other = fixture("other-ca.crt");
    let config = config(&format!(
        "sslmode=verify-ca sslrootcert={}",
        other.display()
    ));
    let err = connect(&config, "localhost", &no_defaults(), false)
        .await
        .expect_err("wrong CA");
    let text = err.to_string();
    assert!(text.contains("not signed by a CA in"), "{text}");
    assert!(text.contains("other-ca.crt"), "{text}");
}

#[tokio::test]
async fn verify_modes_need_a_root_file() {
    let err = connect(
        &config("sslmode=verify-ca"),
        "localhost",
        &no_defaults(),
        false,
    )
    .await
    .expect_err("no root file");
    let text = err.to_string();
    assert!(
        text.contains(".postgresql/root.crt\" does not exist"),
        "{text}"
    );
    assert!(text.contains("sslrootcert"), "{text}");

    let missing = config("sslmode=verify-full sslrootcert=/nonexistent/ca.pem");
    let err = connect(&missing, "localhost", &no_defaults(), false)
        .await
        .expect_err("missing root file");
    assert!(
        err.to_string()
            .contains("\"/nonexistent/ca.pem\" does not exist"),
        "{err}"
    );
}

#[tokio::test]
async fn a_root_file_that_is_not_pem_is_reported() {
    let key_only = fixture("README.md");
    let config = config(&format!(
        "sslmode=verify-ca sslrootcert={}",
        key_only.display()
    ));
    let err = connect(&config, "localhost", &no_defaults(), false)
        .await
        .expect_err("no certificate in file");
    assert!(
        err.to_string().contains("holds no PEM certificate"),
        "{err}"
    );
}

#[tokio::test]
async fn require_checks_the_chain_when_a_default_root_file_exists() {
    let wrong = defaults_dir("wrong-root", &[("other-ca.crt", "root.crt")]);
    let err = connect(&config("sslmode=require"), "localhost", &wrong, false)
        .await
        .expect_err("root.crt present: require behaves like verify-ca");
    assert!(err.to_string().contains("not signed by a CA"), "{err}");

    let right = defaults_dir("right-root", &[("ca.crt", "root.crt")]);
    connect(&config("sslmode=require"), "db.example.com", &right, false)
        .await
        .expect("the chain is valid and the name is not checked");
}

#[tokio::test]
async fn system_roots_do_not_trust_a_private_ca() {
    let err = connect(
        &config("sslrootcert=system"),
        "localhost",
        &no_defaults(),
        false,
    )
    .await
    .expect_err("the test CA is not a public CA");
    assert!(
        err.to_string().contains("not signed by a CA in \"system\""),
        "{err}"
    );
}

#[tokio::test]
async fn client_certificate_from_sslcert_and_sslkey() {
    let config = config(&format!(
        "sslmode=verify-full {} sslcert={} sslkey={}",
        ca_option(),
        fixture("client.crt").display(),
        fixture("client.key").display()
    ));
    connect(&config, "localhost", &no_defaults(), true)
        .await
        .expect("the server accepts the client certificate");
}

#[tokio::test]
async fn client_certificate_from_the_default_directory() {
    let dir = defaults_dir(
        "client",
        &[
            ("client.crt", "postgresql.crt"),
            ("client.key", "postgresql.key"),
        ],
    );
    connect(&config("sslmode=require"), "localhost", &dir, true)
        .await
        .expect("the default client certificate is sent");
}

#[tokio::test]
async fn without_a_client_certificate_a_demanding_server_refuses() {
    let err = connect(
        &config("sslmode=require"),
        "localhost",
        &no_defaults(),
        true,
    )
    .await
    .expect_err("no client certificate");
    assert_eq!(err.kind(), Kind::Tls);
}

#[tokio::test]
async fn a_missing_sslcert_is_an_error() {
    let config = config("sslmode=require sslcert=/nonexistent/client.crt");
    let err = connect(&config, "localhost", &no_defaults(), false)
        .await
        .expect_err("missing client certificate");
    let text = err.to_string();
    assert!(
        text.contains("could not read the client certificate"),
        "{text}"
    );
    assert!(text.contains("/nonexistent/client.crt"), "{text}");
}

#[test]
fn sni_is_sent_for_dns_names_only() {
    let (_, sni) = server_name("db.example.com", SslMode::VerifyFull).expect("dns name");
    assert!(sni);
    let (name, sni) = server_name("127.0.0.1", SslMode::VerifyFull).expect("ip");
    assert!(!sni);
    assert!(matches!(name, ServerName::IpAddress(_)));
    let (_, sni) = server_name("not a name", SslMode::Require).expect("require skips the name");
    assert!(!sni);
    let err = server_name("not a name", SslMode::VerifyFull).expect_err("verify-full needs it");
    assert!(
        err.to_string().contains("\"not a name\" is neither"),
        "{err}"
    );
}
