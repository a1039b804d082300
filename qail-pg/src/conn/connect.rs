//! Opening the socket: hosts in order, TCP or Unix, the SSLRequest and TLS.
//!
//! See <https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-SSL>.

use std::net::IpAddr;

use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::cancel::Target;
use super::config::passfile::{self, Lookup};
use super::config::{Config, Host, SslMode, TcpOptions};
use super::stream::{Socket, Stream};
use super::{Connection, startup};
use crate::error::{Error, Kind};

/// Tries each host of `config` in order; returns the first session that starts, or the last
/// error.
pub(crate) async fn connect(config: &Config) -> Result<Connection, Error> {
    let mut last = None;
    for (host, addr, port) in config.targets() {
        let (with_password, note) = with_passfile_password(config, host, port);
        let config = with_password.as_ref().unwrap_or(config);
        let attempt = async {
            let result = connect_host(config, host, addr, port).await;
            match &note {
                Some(note) => result.map_err(|e| e.with_auth_note(note)),
                None => result,
            }
        };
        let result = match config.connect_timeout {
            Some(limit) => tokio::time::timeout(limit, attempt)
                .await
                .unwrap_or_else(|_| {
                    Err(Error::new(
                        Kind::Timeout,
                        format!(
                            "connecting to {} timed out after {limit:?}; check that the server \
                             is up, or raise connect_timeout",
                            describe(host, port)
                        ),
                    ))
                }),
            None => attempt.await,
        };
        match result {
            Ok(conn) => return Ok(conn),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        Error::new(
            Kind::Config,
            "no host to connect to; set host in the connection string or PGHOST",
        )
    }))
}

/// When no password is given: the configuration with the password file's password for this
/// host, if it has one, or why the file was not used.
fn with_passfile_password(
    config: &Config,
    host: &Host,
    port: u16,
) -> (Option<Config>, Option<String>) {
    let (None, Some(path)) = (&config.password, &config.passfile) else {
        return (None, None);
    };
    match passfile::lookup(path, host, port, &config.dbname, &config.user) {
        Lookup::Found(password) => {
            let mut with = config.clone();
            with.password = Some(password);
            (Some(with), None)
        }
        Lookup::None => (None, None),
        Lookup::Ignored(why) => (None, Some(why)),
    }
}

fn describe(host: &Host, port: u16) -> String {
    match host {
        Host::Tcp(name) => format!("{name}:{port}"),
        Host::Unix(dir) => format!("{}/.s.PGSQL.{port}", dir.display()),
    }
}

/// One host: the socket, TLS as `sslmode` says, then the startup handshake.
async fn connect_host(
    config: &Config,
    host: &Host,
    addr: Option<IpAddr>,
    port: u16,
) -> Result<Connection, Error> {
    match host {
        #[cfg(unix)]
        Host::Unix(dir) => {
            let path = dir.join(format!(".s.PGSQL.{port}"));
            let socket = tokio::net::UnixStream::connect(&path)
                .await
                .map_err(|e| connect_error(host, port, e))?;
            // Note: like libpq, sslmode does not apply to Unix sockets.
            let mut conn =
                startup::startup(Stream::new(Socket::Unix(socket)), config, None).await?;
            conn.set_cancel_target(Target {
                config: config.clone(),
                host: host.clone(),
                addr: None,
                port,
                tls: false,
            });
            Ok(conn)
        }
        #[cfg(not(unix))]
        Host::Unix(_) => Err(Error::new(
            Kind::Config,
            "Unix sockets are not available on this platform; connect over TCP",
        )),
        Host::Tcp(name) => {
            let tls_first = !matches!(config.sslmode, SslMode::Disable | SslMode::Allow);
            let result = connect_tcp(config, name, addr, port, tls_first).await;
            match (config.sslmode, result) {
                // Note: `allow` tries plain text first and TLS only if the server refuses it;
                // `prefer` falls back to plain text when the TLS handshake fails, like libpq.
                (SslMode::Allow, Err(e)) if e.as_db_error().is_some() => {
                    connect_tcp(config, name, addr, port, true).await
                }
                (SslMode::Prefer, Err(e)) if e.kind() == Kind::Tls => {
                    connect_tcp(config, name, addr, port, false).await
                }
                (_, result) => result,
            }
        }
    }
}

async fn connect_tcp(
    config: &Config,
    name: &str,
    addr: Option<IpAddr>,
    port: u16,
    tls: bool,
) -> Result<Connection, Error> {
    let host = Host::Tcp(name.to_owned());
    let tcp = match addr {
        Some(ip) => TcpStream::connect((ip, port)).await,
        None => TcpStream::connect((name, port)).await,
    }
    .map_err(|e| connect_error(&host, port, e))?;
    tcp.set_nodelay(true)
        .map_err(|e| connect_error(&host, port, e))?;
    apply_tcp_options(&tcp, &config.tcp).map_err(|e| {
        Error::with_source(
            Kind::Config,
            "could not set the TCP keepalive options on the socket; check keepalives_idle, \
             keepalives_interval, keepalives_count and tcp_user_timeout",
            e,
        )
    })?;
    let (mut conn, tls) = if !tls {
        let conn = startup::startup(Stream::new(Socket::Tcp(tcp)), config, None).await?;
        (conn, false)
    } else {
        match negotiate_tls(tcp, config, name).await? {
            Negotiated::Tls(socket, cert) => (
                startup::startup(Stream::new(socket), config, cert).await?,
                true,
            ),
            Negotiated::Plain(tcp) => {
                let conn = startup::startup(Stream::new(Socket::Tcp(tcp)), config, None).await?;
                (conn, false)
            }
        }
    };
    conn.set_cancel_target(Target {
        config: config.clone(),
        host,
        addr,
        port,
        tls,
    });
    Ok(conn)
}

/// Sets keepalives and `tcp_user_timeout` on the socket as the options say; what is not set
/// keeps the operating system's default.
pub(crate) fn apply_tcp_options(tcp: &TcpStream, options: &TcpOptions) -> std::io::Result<()> {
    let socket = socket2::SockRef::from(tcp);
    socket.set_keepalive(options.keepalives)?;
    if options.keepalives {
        let mut keepalive = socket2::TcpKeepalive::new();
        if let Some(idle) = options.keepalives_idle {
            keepalive = keepalive.with_time(idle);
        }
        #[cfg(any(target_os = "linux", target_os = "macos", target_os = "freebsd"))]
        {
            if let Some(interval) = options.keepalives_interval {
                keepalive = keepalive.with_interval(interval);
            }
            if let Some(count) = options.keepalives_count {
                keepalive = keepalive.with_retries(count);
            }
        }
        if options.keepalives_idle.is_some()
            || options.keepalives_interval.is_some()
            || options.keepalives_count.is_some()
        {
            socket.set_tcp_keepalive(&keepalive)?;
        }
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Some(limit) = options.tcp_user_timeout {
        socket.set_tcp_user_timeout(Some(limit))?;
    }
    Ok(())
}

fn connect_error(host: &Host, port: u16, e: std::io::Error) -> Error {
    Error::with_source(
        Kind::Io,
        format!(
            "could not connect to {}; check that the server is running and accepts connections there",
            describe(host, port)
        ),
        e,
    )
}

/// What the SSLRequest led to.
pub(crate) enum Negotiated {
    /// TLS is up; the server's leaf certificate (DER) for channel binding.
    Tls(Socket, Option<Vec<u8>>),
    /// The server refused TLS and `sslmode` allows plain text.
    Plain(TcpStream),
}

/// Sends SSLRequest and reads the one-byte answer; `S` starts TLS.
pub(crate) async fn negotiate_tls(
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

/// Runs the TLS handshake over `tcp`; returns the socket and the server's leaf certificate.
async fn tls_handshake(
    tcp: TcpStream,
    config: &Config,
    host: &str,
) -> Result<(Socket, Option<Vec<u8>>), Error> {
    let tls = super::tls::handshake(tcp, config, host).await?;
    let cert = super::tls::peer_certificate(&tls);
    Ok((Socket::Tls(Box::new(tls)), cert))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::Connection;

    /// The test server (`DATABASE_URL`, else the local default) with `options` appended.
    fn url(options: &str) -> String {
        let base = std::env::var("DATABASE_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
        let sep = if base.contains('?') { '&' } else { '?' };
        format!("{base}{sep}{options}")
    }

    #[tokio::test]
    async fn keepalives_are_on_by_default_with_the_systems_timings() {
        let conn = Connection::connect(&url("sslmode=disable")).await.unwrap();
        let tcp = conn
            .stream
            .tcp()
            .expect("the test server is reached over TCP");
        let socket = socket2::SockRef::from(tcp);
        assert!(socket.keepalive().unwrap());
        #[cfg(target_os = "linux")]
        {
            let system: u64 = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_keepalive_time")
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            assert_eq!(
                socket.tcp_keepalive_time().unwrap(),
                Duration::from_secs(system)
            );
            assert_eq!(socket.tcp_user_timeout().unwrap(), None);
        }
    }

    #[tokio::test]
    async fn the_keepalive_keys_are_set_on_the_socket() {
        let conn = Connection::connect(&url(
            "sslmode=disable&keepalives_idle=11&keepalives_interval=3&keepalives_count=4&tcp_user_timeout=2500",
        ))
        .await
        .unwrap();
        let tcp = conn
            .stream
            .tcp()
            .expect("the test server is reached over TCP");
        let socket = socket2::SockRef::from(tcp);
        assert!(socket.keepalive().unwrap());
        assert_eq!(
            socket.tcp_keepalive_time().unwrap(),
            Duration::from_secs(11)
        );
        #[cfg(target_os = "linux")]
        {
            assert_eq!(
                socket.tcp_keepalive_interval().unwrap(),
                Duration::from_secs(3)
            );
            assert_eq!(socket.tcp_keepalive_retries().unwrap(), 4);
            assert_eq!(
                socket.tcp_user_timeout().unwrap(),
                Some(Duration::from_millis(2500))
            );
        }

        let off = Connection::connect(&url("sslmode=disable&keepalives=0"))
            .await
            .unwrap();
        let tcp = off
            .stream
            .tcp()
            .expect("the test server is reached over TCP");
        assert!(!socket2::SockRef::from(tcp).keepalive().unwrap());
    }
}
