//! Cancelling a running query: a CancelRequest on a new connection to the same server.
//!
//! See <https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-CANCELING-REQUESTS>.

use std::net::IpAddr;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::ssl_request::{Negotiated, negotiate_tls};
use crate::config::{Config, Host};
use crate::conn::Connection;
use crate::conn::stream::Socket;
use crate::error::{Error, Kind};
use crate::proto::message::CancelRequest;

/// Where a session was opened, so a cancel request can reach the same server the same way.
pub(crate) struct Target {
    pub(crate) config: Config,
    pub(crate) host: Host,
    pub(crate) addr: Option<IpAddr>,
    pub(crate) port: u16,
    /// Whether the session runs over TLS; the cancel request does too, like libpq.
    pub(crate) tls: bool,
}

/// Cancels the query running on a connection, from anywhere: it is `Send`, `Sync` and
/// `Clone`, and opens a new connection to the same server to send the request.
///
/// ```no_run
/// # async fn run(conn: &mut qail_pg::Connection) -> Result<(), qail_pg::Error> {
/// let token = conn.cancel_token();
/// tokio::spawn(async move {
///     tokio::time::sleep(std::time::Duration::from_secs(5)).await;
///     let _ = token.cancel().await;
/// });
/// let result = conn.query("SELECT pg_sleep(60)", &[]).await; // SQLSTATE 57014 when cancelled
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct CancelToken {
    target: Option<Arc<Target>>,
    process_id: i32,
    secret_key: Vec<u8>,
}

impl std::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelToken")
            .field("process_id", &self.process_id)
            .finish_non_exhaustive()
    }
}

impl CancelToken {
    /// Asks the server to cancel the query the session is running, if any. The server does
    /// not say whether anything was cancelled; the query itself fails with SQLSTATE 57014.
    pub async fn cancel(&self) -> Result<(), Error> {
        let Some(target) = &self.target else {
            return Err(Error::new(
                Kind::Usage,
                "this connection cannot be cancelled: the server sent no cancel key",
            ));
        };
        let mut request = Vec::with_capacity(16);
        CancelRequest {
            process_id: self.process_id,
            secret_key: &self.secret_key,
        }
        .encode(&mut request)?;
        let mut socket = open(target).await?;
        let io = |e| {
            Error::with_source(
                Kind::Io,
                "sending the cancel request failed; check that the server is reachable",
                e,
            )
        };
        socket.write_all(&request).await.map_err(io)?;
        socket.flush().await.map_err(io)?;
        // Note: the server closes the connection once it has handled the request; waiting
        // for that means the signal has been delivered when this returns.
        let mut sink = [0u8; 64];
        while socket.read(&mut sink).await.map_err(io)? > 0 {}
        Ok(())
    }
}

/// A new socket to the server of `target`, over TLS when the session uses TLS.
async fn open(target: &Target) -> Result<Socket, Error> {
    match &target.host {
        #[cfg(unix)]
        Host::Unix(dir) => {
            let path = dir.join(format!(".s.PGSQL.{}", target.port));
            let socket = tokio::net::UnixStream::connect(&path).await.map_err(|e| {
                Error::with_source(Kind::Io, "could not connect to send a cancel request", e)
            })?;
            Ok(Socket::Unix(socket))
        }
        #[cfg(not(unix))]
        Host::Unix(_) => Err(Error::new(
            Kind::Config,
            "Unix sockets are not available here",
        )),
        Host::Tcp(name) => {
            let tcp = match target.addr {
                Some(ip) => tokio::net::TcpStream::connect((ip, target.port)).await,
                None => tokio::net::TcpStream::connect((name.as_str(), target.port)).await,
            }
            .map_err(|e| {
                Error::with_source(Kind::Io, "could not connect to send a cancel request", e)
            })?;
            if !target.tls {
                return Ok(Socket::Tcp(tcp));
            }
            match negotiate_tls(tcp, &target.config, name).await? {
                Negotiated::Tls(socket, _) => Ok(socket),
                Negotiated::Plain(tcp) => Ok(Socket::Tcp(tcp)),
            }
        }
    }
}

impl Connection {
    /// A token that cancels the query this connection is running, from another task.
    pub fn cancel_token(&self) -> CancelToken {
        CancelToken {
            target: self.cancel_target.clone(),
            process_id: self.process_id,
            secret_key: self.secret_key.clone(),
        }
    }

    /// Records where the session was opened, for [`Connection::cancel_token`].
    pub(crate) fn set_cancel_target(&mut self, target: Target) {
        self.cancel_target = Some(Arc::new(target));
    }
}
