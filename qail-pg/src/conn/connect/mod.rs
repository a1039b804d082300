//! Connecting: hosts in order (or shuffled), each host's addresses, TCP or Unix, the
//! SSLRequest and TLS ([`ssl_request`], [`tls`]), the startup handshake and authentication
//! ([`startup`], [`auth`]), then the `target_session_attrs` check. A [`CancelToken`] reaches
//! the same server the same way later ([`cancel`]).
//!
//! See <https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-SSL>.

mod auth;
mod cancel;
mod ssl_request;
mod startup;
#[cfg(feature = "tls")]
mod tls;

use std::net::IpAddr;

use rand::seq::SliceRandom as _;
use tokio::net::TcpStream;

pub use cancel::CancelToken;
pub(crate) use cancel::Target;
use ssl_request::{Negotiated, negotiate_tls};

use super::stream::{Socket, Stream};
use super::{BoxedFuture, Connection};
use crate::config::passfile::{self, Lookup};
use crate::config::{Config, Host, LoadBalanceHosts, SslMode, TargetSessionAttrs, TcpOptions};
use crate::error::{Error, Kind};

/// Tries each host of `config` in order (shuffled with `load_balance_hosts=random`) and
/// returns the first session that starts on a server `target_session_attrs` accepts.
///
/// See <https://www.postgresql.org/docs/16/libpq-connect.html#LIBPQ-MULTIPLE-HOSTS>.
pub(crate) async fn connect(config: &Config) -> Result<Connection, Error> {
    let mut targets: Vec<_> = config.targets().collect();
    if targets.is_empty() {
        return Err(Error::new(
            Kind::Config,
            "no host to connect to; set host in the connection string or PGHOST",
        ));
    }
    if config.load_balance_hosts == LoadBalanceHosts::Random {
        targets.shuffle(&mut rand::rng());
    }
    let wanted = config.target_session_attrs;
    let first = match wanted {
        TargetSessionAttrs::PreferStandby => TargetSessionAttrs::Standby,
        other => other,
    };
    let mut outcomes = Vec::with_capacity(targets.len());
    for &(host, addr, port) in &targets {
        match connect_one(config, host, addr, port, first).await {
            Ok(conn) => return Ok(conn),
            Err(outcome) => outcomes.push((describe(host, port), outcome)),
        }
    }
    // Note: prefer-standby found no standby; like libpq, try every host again accepting any.
    if wanted == TargetSessionAttrs::PreferStandby {
        let mut again = Vec::with_capacity(targets.len());
        for &(host, addr, port) in &targets {
            match connect_one(config, host, addr, port, TargetSessionAttrs::Any).await {
                Ok(conn) => return Ok(conn),
                Err(outcome) => again.push((describe(host, port), outcome)),
            }
        }
        outcomes = again;
    }
    Err(no_server(wanted, outcomes))
}

/// Why one host was not used.
enum Outcome {
    /// The connection failed; the error.
    Failed(Error),
    /// The server connected but is not the kind wanted: what it is ("a standby", …).
    Refused(&'static str),
}

/// The error when no host gave a session: the last failure when every host failed to
/// connect (so a single host reports its own error unchanged), else one naming each host.
fn no_server(wanted: TargetSessionAttrs, mut outcomes: Vec<(String, Outcome)>) -> Error {
    if outcomes
        .iter()
        .all(|(_, o)| matches!(o, Outcome::Failed(_)))
        && let Some((_, Outcome::Failed(e))) = outcomes.pop()
    {
        return e;
    }
    let names: Vec<&str> = outcomes.iter().map(|(name, _)| name.as_str()).collect();
    let what = match wanted {
        TargetSessionAttrs::ReadWrite => "accepts writes (read-write)",
        TargetSessionAttrs::ReadOnly => "is read-only",
        TargetSessionAttrs::Primary => "is a primary",
        TargetSessionAttrs::Standby => "is a standby",
        // Note: unreachable in practice, as the second pass accepts any server that connects.
        TargetSessionAttrs::PreferStandby | TargetSessionAttrs::Any => "accepted the connection",
    };
    let each: Vec<String> = outcomes
        .iter()
        .map(|(name, outcome)| match outcome {
            Outcome::Refused(is) => format!("{name} is {is}"),
            Outcome::Failed(e) => format!("{name}: {e}"),
        })
        .collect();
    Error::new(
        Kind::Config,
        format!(
            "no server among {} {what}; {}; check target_session_attrs and the host list",
            names.join(", "),
            each.join("; ")
        ),
    )
}

/// One host: its addresses in turn, each within `connect_timeout`, then the
/// `target_session_attrs` check.
async fn connect_one(
    config: &Config,
    host: &Host,
    addr: Option<IpAddr>,
    port: u16,
    wanted: TargetSessionAttrs,
) -> Result<Connection, Outcome> {
    let (with_password, note) = with_passfile_password(config, host, port);
    let config = with_password.as_ref().unwrap_or(config);
    let addrs = addresses(config, host, addr, port)
        .await
        .map_err(Outcome::Failed)?;
    let mut last = None;
    for addr in addrs {
        // Note: like libpq, connect_timeout bounds the check of the session too; a failed
        // attempt moves on to the next address, a server of the wrong kind to the next host.
        let attempt = attempt(config, host, addr, port, wanted, note.as_deref());
        match within_timeout(config, host, port, attempt).await {
            Ok(Ok(conn)) => return Ok(conn),
            Ok(Err(is)) => return Err(Outcome::Refused(is)),
            Err(e) => last = Some(e),
        }
    }
    Err(Outcome::Failed(last.unwrap_or_else(|| {
        Error::new(
            Kind::Io,
            format!(
                "{} resolved to no address; check the host name",
                describe(host, port)
            ),
        )
    })))
}

/// One attempt on one address: the socket, TLS, the startup and the session check; a
/// session of the wrong kind is closed, and what it is instead comes back as `Err`.
///
/// Note: a [`BoxedFuture`] made here. The attempt's state is the largest of the connect
/// future's: boxed it lives on the heap only while it runs, and built here it takes no room
/// in `connect_one`'s stack frame, which built it there (2.9 kB) for the whole setup.
#[inline(never)]
fn attempt<'a>(
    config: &'a Config,
    host: &'a Host,
    addr: Option<IpAddr>,
    port: u16,
    wanted: TargetSessionAttrs,
    note: Option<&'a str>,
) -> BoxedFuture<'a, Result<Result<Connection, &'static str>, Error>> {
    Box::pin(async move {
        let mut conn = connect_host(config, host, addr, port)
            .await
            .map_err(|e| match note {
                Some(note) => e.with_auth_note(note),
                None => e,
            })?;
        Ok(match session_is(&mut conn, wanted).await? {
            None => {
                // Note: the session check's statements only read; the session is as new.
                conn.session_changed = false;
                Ok(conn)
            }
            Some(is) => {
                conn.close().await;
                Err(is)
            }
        })
    })
}

/// The addresses to try for one host: its `hostaddr`, else what its name resolves to
/// (shuffled with `load_balance_hosts=random`); a Unix socket is one attempt (`None`).
async fn addresses(
    config: &Config,
    host: &Host,
    addr: Option<IpAddr>,
    port: u16,
) -> Result<Vec<Option<IpAddr>>, Error> {
    let name = match (host, addr) {
        (Host::Tcp(name), None) => name,
        (_, addr) => return Ok(vec![addr]),
    };
    let resolve = async {
        tokio::net::lookup_host((name.as_str(), port))
            .await
            .map_err(|e| {
                Error::with_source(
                    Kind::Io,
                    format!(
                        "could not resolve the host name {name}; check the host in the \
                         connection string"
                    ),
                    e,
                )
            })
    };
    let mut addrs: Vec<Option<IpAddr>> = Vec::new();
    for found in within_timeout(config, host, port, resolve).await? {
        if !addrs.contains(&Some(found.ip())) {
            addrs.push(Some(found.ip()));
        }
    }
    if config.load_balance_hosts == LoadBalanceHosts::Random {
        addrs.shuffle(&mut rand::rng());
    }
    Ok(addrs)
}

/// `attempt` bounded by `connect_timeout`, when set.
async fn within_timeout<T>(
    config: &Config,
    host: &Host,
    port: u16,
    attempt: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    let Some(limit) = config.connect_timeout else {
        return attempt.await;
    };
    tokio::time::timeout(limit, attempt)
        .await
        .unwrap_or_else(|_| {
            Err(Error::new(
                Kind::Timeout,
                format!(
                    "connecting to {} timed out after {limit:?}; check that the server is up, \
                     or raise connect_timeout",
                    describe(host, port)
                ),
            ))
        })
}

/// Whether the session is of the kind `target_session_attrs` wants: `None` when it is, else
/// what it is instead, for the error message.
///
/// Note: like libpq, the read-only test uses the `default_transaction_read_only` and
/// `in_hot_standby` parameters when the server reports them (PostgreSQL 14 and later), else
/// `SHOW transaction_read_only`; the standby test uses `in_hot_standby`, else
/// `pg_is_in_recovery()`.
async fn session_is(
    conn: &mut Connection,
    wanted: TargetSessionAttrs,
) -> Result<Option<&'static str>, Error> {
    if let Some(answer) = reported_session_is(conn, wanted) {
        return Ok(answer);
    }
    Ok(match wanted {
        TargetSessionAttrs::Any => None,
        TargetSessionAttrs::ReadWrite | TargetSessionAttrs::ReadOnly => {
            let row = conn.query_one("SHOW transaction_read_only", &[]).await?;
            read_only_is(wanted, row.try_get::<&str>(0)? == "on")
        }
        TargetSessionAttrs::Primary
        | TargetSessionAttrs::Standby
        | TargetSessionAttrs::PreferStandby => {
            let row = conn
                .query_one("SELECT pg_catalog.pg_is_in_recovery()", &[])
                .await?;
            standby_is(wanted, row.try_get::<bool>(0)?)
        }
    })
}

/// [`session_is`] from the parameters the server reported alone, without a round trip:
/// `None` when the server does not report them (older than 14). The pool asks it of a
/// returned connection, whose server may have changed since (`default_transaction_read_only`
/// turned on by a reload, a standby promoted): the server reports such changes after the next
/// statement.
pub(crate) fn reported_session_is(
    conn: &Connection,
    wanted: TargetSessionAttrs,
) -> Option<Option<&'static str>> {
    let on = |name| conn.parameter_status(name).map(|value| value == "on");
    match wanted {
        TargetSessionAttrs::Any => Some(None),
        TargetSessionAttrs::ReadWrite | TargetSessionAttrs::ReadOnly => {
            let (default, standby) = (on("default_transaction_read_only")?, on("in_hot_standby")?);
            Some(read_only_is(wanted, default || standby))
        }
        TargetSessionAttrs::Primary
        | TargetSessionAttrs::Standby
        | TargetSessionAttrs::PreferStandby => Some(standby_is(wanted, on("in_hot_standby")?)),
    }
}

fn read_only_is(wanted: TargetSessionAttrs, read_only: bool) -> Option<&'static str> {
    match (wanted, read_only) {
        (TargetSessionAttrs::ReadWrite, true) => Some("read-only"),
        (TargetSessionAttrs::ReadOnly, false) => Some("read-write"),
        _ => None,
    }
}

fn standby_is(wanted: TargetSessionAttrs, standby: bool) -> Option<&'static str> {
    match (wanted, standby) {
        (TargetSessionAttrs::Primary, true) => Some("a standby"),
        (TargetSessionAttrs::Standby | TargetSessionAttrs::PreferStandby, false) => {
            Some("a primary")
        }
        _ => None,
    }
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
            #[cfg(not(feature = "tls"))]
            ssl_request::refuse_tls_modes(config.sslmode)?;
            let tls_first = cfg!(feature = "tls")
                && !matches!(config.sslmode, SslMode::Disable | SslMode::Allow);
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
    async fn a_host_name_that_does_not_resolve_is_reported_in_one_sentence() {
        let err = Connection::connect("postgres://postgres@no-such-host.invalid/postgres")
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains(
                "could not resolve the host name no-such-host.invalid; check the host in the \
                 connection string"
            ),
            "{err}"
        );
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
