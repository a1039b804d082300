//! The SSLRequest: asking the server for TLS before the startup message, and what
//! `sslmode` makes of its answer.
//!
//! See <https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-SSL>.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::config::{Config, SslMode};
use crate::conn::stream::Socket;
use crate::error::{Error, Kind};

/// What the SSLRequest led to.
pub(super) enum Negotiated {
    /// TLS is up; the server's leaf certificate (DER) for channel binding.
    Tls(Socket, Option<Vec<u8>>),
    /// The server refused TLS and `sslmode` allows plain text.
    Plain(TcpStream),
}

/// Sends SSLRequest and reads the one-byte answer; `S` starts TLS.
pub(super) async fn negotiate_tls(
    mut tcp: TcpStream,
    config: &Config,
    host: &str,
) -> Result<Negotiated, Error> {
    let io = |e| {
        Error::with_source(
            Kind::Io,
            "the TLS negotiation with the server failed; check the server address",
            e,
        )
    };
    let mut request = Vec::with_capacity(8);
    crate::proto::message::ssl_request(&mut request);
    tcp.write_all(&request).await.map_err(io)?;
    // Note: read more than the one byte expected, so bytes the server (or a man in the
    // middle) sent after the answer are seen before TLS starts (CVE-2021-23222).
    let mut answer = [0u8; 64];
    let n = tcp.read(&mut answer).await.map_err(io)?;
    if n > 1 {
        return Err(Error::new(
            Kind::Protocol,
            "the server sent unexpected bytes after its answer to the TLS request; \
             the connection may be tampered with, so it is closed",
        ));
    }
    match answer.get(..n) {
        Some([b'S']) => {
            let (socket, cert) = tls_handshake(tcp, config, host).await?;
            Ok(Negotiated::Tls(socket, cert))
        }
        Some([b'N']) if config.sslmode == SslMode::Prefer => Ok(Negotiated::Plain(tcp)),
        Some([b'N']) => Err(Error::new(
            Kind::Tls,
            format!(
                "the server does not accept TLS, but sslmode={:?} requires it; enable ssl on \
                 the server or lower sslmode",
                config.sslmode
            ),
        )),
        Some([]) => Err(Error::new(
            Kind::Closed,
            "the server closed the connection during the TLS request; check the server logs",
        )),
        _ => Err(Error::new(
            Kind::Protocol,
            "the server answered the TLS request with neither S nor N; check that the address \
             points to a PostgreSQL server",
        )),
    }
}

/// Without the `tls` feature, as libpq built without SSL support: `allow` and `prefer` connect
/// in plain text without asking the server for TLS, and the modes that require TLS are
/// refused before any connection is made.
#[cfg(not(feature = "tls"))]
pub(super) fn refuse_tls_modes(mode: SslMode) -> Result<(), Error> {
    match mode {
        SslMode::Disable | SslMode::Allow | SslMode::Prefer => Ok(()),
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => Err(Error::new(
            Kind::Tls,
            format!(
                "sslmode={mode:?} requires TLS, which this build of qail-pg leaves out; enable \
                 the `tls` feature (on by default) or lower sslmode"
            ),
        )),
    }
}

/// Runs the TLS handshake over `tcp`; returns the socket and the server's leaf certificate.
#[cfg(feature = "tls")]
async fn tls_handshake(
    tcp: TcpStream,
    config: &Config,
    host: &str,
) -> Result<(Socket, Option<Vec<u8>>), Error> {
    let tls = super::tls::handshake(tcp, config, host).await?;
    let cert = super::tls::peer_certificate(&tls);
    Ok((Socket::Tls(Box::new(tls)), cert))
}

/// Without the `tls` feature no connection asks for TLS (`refuse_tls_modes`), so a server's
/// `S` answer cannot be followed.
#[cfg(not(feature = "tls"))]
async fn tls_handshake(
    _tcp: TcpStream,
    _config: &Config,
    _host: &str,
) -> Result<(Socket, Option<Vec<u8>>), Error> {
    Err(Error::new(
        Kind::Tls,
        "this build of qail-pg leaves TLS out; enable the `tls` feature (on by default)",
    ))
}
