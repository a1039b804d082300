//! TLS with libpq's `sslmode` meanings, on rustls with the ring provider.
//!
//! | sslmode                 | certificate chain                       | host name |
//! |-------------------------|-----------------------------------------|-----------|
//! | allow, prefer, require  | checked only if a root file exists      | no        |
//! | verify-ca               | checked against `sslrootcert`           | no        |
//! | verify-full             | checked against `sslrootcert`           | yes       |
//!
//! The root file is `sslrootcert`, else `~/.postgresql/root.crt`; `sslrootcert=system` means
//! the bundled Mozilla roots. A client certificate comes from `sslcert`/`sslkey`, else from
//! `~/.postgresql/postgresql.crt`/`.key` when those exist.
//!
//! See <https://www.postgresql.org/docs/current/libpq-ssl.html>.

#[cfg(test)]
mod tests;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_cert_signed_by_trust_anchor, verify_server_name};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::server::ParsedCertificate;
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::config::{Config, SslMode};
use crate::error::{Error, Kind};

/// A TLS connection to the server.
pub(crate) type TlsStream<S> = tokio_rustls::client::TlsStream<S>;

/// Runs the TLS handshake on `stream` (after the server answered `S` to SSLRequest), checking
/// the server's certificate as `config.sslmode` asks. `host` is the name the user gave for the
/// server (not a `hostaddr`): it is matched against the certificate and sent as SNI.
pub(crate) async fn handshake<S>(
    stream: S,
    config: &Config,
    host: &str,
) -> Result<TlsStream<S>, Error>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let dir = std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".postgresql"));
    handshake_with(stream, config, host, dir.as_deref()).await
}

/// [`handshake`] with the directory of default certificate files given explicitly.
pub(crate) async fn handshake_with<S>(
    stream: S,
    config: &Config,
    host: &str,
    default_dir: Option<&Path>,
) -> Result<TlsStream<S>, Error>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (name, sni) = server_name(host, config.sslmode)?;
    let (client_config, roots) = client_config(config, default_dir, sni)?;
    tokio_rustls::TlsConnector::from(Arc::new(client_config))
        .connect(name, stream)
        .await
        .map_err(|e| handshake_error(e, host, roots.as_deref()))
}

/// The server's leaf certificate (DER), for SCRAM channel binding (`tls-server-end-point`).
pub(crate) fn peer_certificate<S>(stream: &TlsStream<S>) -> Option<Vec<u8>> {
    let certificates = stream.get_ref().1.peer_certificates()?;
    certificates.first().map(|leaf| leaf.as_ref().to_vec())
}

/// The name to verify and whether to send it as SNI (only DNS names are sent).
fn server_name(host: &str, mode: SslMode) -> Result<(ServerName<'static>, bool), Error> {
    match ServerName::try_from(host.to_owned()) {
        Ok(name) => {
            let sni = matches!(name, ServerName::DnsName(_));
            Ok((name, sni))
        }
        Err(e) if mode == SslMode::VerifyFull => Err(Error::with_source(
            Kind::Tls,
            format!(
                "sslmode=verify-full needs a host name or IP address to check the server's \
                 certificate against, and \"{host}\" is neither; connect with the name the \
                 certificate lists"
            ),
            e,
        )),
        // Note: the name is never checked below verify-full, and SNI is off, so any
        // placeholder will do.
        Err(_) => {
            let placeholder = std::net::IpAddr::from(std::net::Ipv4Addr::UNSPECIFIED);
            Ok((ServerName::from(placeholder), false))
        }
    }
}

/// The rustls configuration for `config`, and the root file that was loaded, if any.
fn client_config(
    config: &Config,
    default_dir: Option<&Path>,
    sni: bool,
) -> Result<(ClientConfig, Option<PathBuf>), Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let (roots, root_file) = roots(config, default_dir)?;
    let verifier = Verifier {
        roots: roots.map(Arc::new),
        check_name: config.sslmode == SslMode::VerifyFull,
        provider: Arc::clone(&provider),
    };
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| {
            Error::with_source(
                Kind::Tls,
                "the TLS library refused its default protocol versions; report this as a bug",
                e,
            )
        })?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier));
    let mut client_config = match client_identity(config, default_dir)? {
        Some((certs, key, cert_file)) => {
            builder.with_client_auth_cert(certs, key).map_err(|e| {
                Error::with_source(
                    Kind::Tls,
                    format!(
                        "the client certificate {} does not fit its private key; set sslcert \
                         and sslkey to a matching PEM certificate and key",
                        cert_file.display()
                    ),
                    e,
                )
            })?
        }
        None => builder.with_no_client_auth(),
    };
    client_config.enable_sni = sni;
    client_config.alpn_protocols = vec![b"postgresql".to_vec()];
    Ok((client_config, root_file))
}

/// The CA certificates to check the server against, per sslmode; `None` checks nothing.
fn roots(
    config: &Config,
    default_dir: Option<&Path>,
) -> Result<(Option<RootCertStore>, Option<PathBuf>), Error> {
    let verify = matches!(config.sslmode, SslMode::VerifyCa | SslMode::VerifyFull);
    let file = match (&config.sslrootcert, default_dir) {
        (Some(file), _) => file.clone(),
        (None, Some(dir)) => dir.join("root.crt"),
        (None, None) if verify => {
            return Err(Error::new(
                Kind::Tls,
                format!(
                    "sslmode={} needs the CA certificate that signed the server's certificate, \
                     and HOME is not set to find ~/.postgresql/root.crt; set sslrootcert to a \
                     PEM file, or sslrootcert=system for the well-known public CAs",
                    mode_name(config.sslmode)
                ),
            ));
        }
        (None, None) => return Ok((None, None)),
    };
    if file == Path::new("system") {
        let store = RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        return Ok((Some(store), Some(file)));
    }
    if !file.exists() {
        if !verify {
            // Note: like libpq, allow/prefer/require check the chain only when a root file
            // exists, and otherwise accept any certificate.
            return Ok((None, None));
        }
        return Err(Error::new(
            Kind::Tls,
            format!(
                "root certificate file \"{}\" does not exist; sslmode={} needs it to check the \
                 server's certificate: provide the file, set sslrootcert to the CA's PEM file \
                 (or sslrootcert=system for the well-known public CAs), or use sslmode=require \
                 to encrypt without checking the certificate",
                file.display(),
                mode_name(config.sslmode)
            ),
        ));
    }
    let store = load_roots(&file)?;
    Ok((Some(store), Some(file)))
}

fn load_roots(file: &Path) -> Result<RootCertStore, Error> {
    let unreadable = |e: rustls_pki_types::pem::Error| {
        Error::with_source(
            Kind::Tls,
            format!(
                "could not read root certificates from \"{}\"; make sslrootcert a readable \
                 PEM file of CA certificates",
                file.display()
            ),
            io::Error::other(e),
        )
    };
    let mut store = RootCertStore::empty();
    for certificate in CertificateDer::pem_file_iter(file).map_err(unreadable)? {
        let certificate = certificate.map_err(unreadable)?;
        store.add(certificate).map_err(|e| {
            Error::with_source(
                Kind::Tls,
                format!(
                    "\"{}\" holds a certificate that cannot be used as a CA; remove it from \
                     the sslrootcert file",
                    file.display()
                ),
                e,
            )
        })?;
    }
    if store.is_empty() {
        return Err(Error::new(
            Kind::Tls,
            format!(
                "\"{}\" holds no PEM certificate; make sslrootcert a file of \
                 -----BEGIN CERTIFICATE----- blocks",
                file.display()
            ),
        ));
    }
    Ok(store)
}

type Identity = (
    Vec<CertificateDer<'static>>,
    PrivateKeyDer<'static>,
    PathBuf,
);

/// The client certificate chain and key, if `sslcert` is set or the default file exists.
fn client_identity(config: &Config, default_dir: Option<&Path>) -> Result<Option<Identity>, Error> {
    let cert_file = match (&config.sslcert, default_dir) {
        (Some(file), _) => file.clone(),
        (None, Some(dir)) if dir.join("postgresql.crt").exists() => dir.join("postgresql.crt"),
        (None, _) => return Ok(None),
    };
    let key_file = match (&config.sslkey, default_dir) {
        (Some(file), _) => file.clone(),
        (None, Some(dir)) => dir.join("postgresql.key"),
        (None, None) => cert_file.with_extension("key"),
    };
    let certs = CertificateDer::pem_file_iter(&cert_file)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| {
            Error::with_source(
                Kind::Tls,
                format!(
                    "could not read the client certificate \"{}\"; set sslcert to a readable \
                     PEM certificate, or unset it",
                    cert_file.display()
                ),
                io::Error::other(e),
            )
        })?;
    let key = PrivateKeyDer::from_pem_file(&key_file).map_err(|e| {
        Error::with_source(
            Kind::Tls,
            format!(
                "could not read the client private key \"{}\" for the certificate \"{}\"; set \
                 sslkey to its readable PEM key",
                key_file.display(),
                cert_file.display()
            ),
            io::Error::other(e),
        )
    })?;
    Ok(Some((certs, key, cert_file)))
}

fn mode_name(mode: SslMode) -> &'static str {
    match mode {
        SslMode::Disable => "disable",
        SslMode::Allow => "allow",
        SslMode::Prefer => "prefer",
        SslMode::Require => "require",
        SslMode::VerifyCa => "verify-ca",
        SslMode::VerifyFull => "verify-full",
    }
}

/// Explains a failed handshake, naming what to change.
fn handshake_error(e: io::Error, host: &str, roots: Option<&Path>) -> Error {
    let rustls_error = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>());
    let message = match rustls_error {
        Some(rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        )) => format!(
            "the server's certificate does not name the host \"{host}\"; connect with a host \
             name the certificate lists (set hostaddr to reach it by address), or use \
             sslmode=verify-ca to skip the host name check"
        ),
        Some(rustls::Error::InvalidCertificate(
            CertificateError::UnknownIssuer | CertificateError::BadSignature,
        )) => format!(
            "the server's certificate is not signed by a CA in \"{}\"; set sslrootcert to \
             the CA certificate that signed the server's certificate",
            roots.map_or_else(|| "sslrootcert".into(), |p| p.display().to_string())
        ),
        Some(rustls::Error::InvalidCertificate(_)) => format!(
            "the certificate of {host} was rejected; check that it is valid, current and meant \
             for a TLS server"
        ),
        _ => format!(
            "the TLS handshake with {host} failed; check that the server has ssl=on with a \
             valid certificate and accepts this client, or use sslmode=disable"
        ),
    };
    Error::with_source(Kind::Tls, message, e)
}

/// Checks the server's certificate as the sslmode asks, and always the handshake signatures
/// (so even without chain checks the server must hold the key of the certificate it sent,
/// which channel binding relies on).
#[derive(Debug)]
struct Verifier {
    roots: Option<Arc<RootCertStore>>,
    check_name: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(roots) = &self.roots {
            let certificate = ParsedCertificate::try_from(end_entity)?;
            let algorithms = self.provider.signature_verification_algorithms.all;
            verify_server_cert_signed_by_trust_anchor(
                &certificate,
                roots,
                intermediates,
                now,
                algorithms,
            )?;
            if self.check_name {
                verify_server_name(&certificate, server_name)?;
            }
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
