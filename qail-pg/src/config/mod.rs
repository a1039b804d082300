//! Connection options, parsed like libpq: URLs, `key=value` strings and `PG*` variables.
//!
//! See <https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING>.

mod connstr;
pub(crate) mod passfile;
mod raw;
mod service;
#[cfg(test)]
mod tests;

use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use crate::error::{Error, Kind};
use crate::proto::ProtocolVersion;
use raw::Raw;

/// Everything needed to open a connection.
///
/// Start from a connection string ([`Config::parse`]) or the environment alone
/// ([`Config::from_env`]), which fill in libpq's defaults, then change options with the
/// setters, each named after its libpq keyword and chained by value. The fields can be read
/// (and assigned); new options may be added in a minor release, so a `Config` cannot be built
/// as a struct literal.
///
/// ```
/// use std::time::Duration;
/// use qail_pg::{Config, SslMode};
///
/// let config = Config::parse("postgres://app@db.example.com/shop")?
///     .application_name("reports")
///     .sslmode(SslMode::Require)
///     .connect_timeout(Duration::from_secs(5))
///     .options("-c search_path=reporting");
/// assert_eq!(config.application_name.as_deref(), Some("reports"));
/// assert_eq!(config.dbname, "shop");
/// # Ok::<(), qail_pg::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// Hosts to try in order (shuffled with [`LoadBalanceHosts::Random`]); a Unix socket
    /// directory is a [`Host::Unix`].
    pub hosts: Vec<Host>,
    /// `hostaddr`: numeric addresses, one per host, used instead of resolving the host
    /// name (which still names the server for TLS). Empty when not given.
    pub hostaddrs: Vec<Option<IpAddr>>,
    /// Ports, one per host (default 5432).
    pub ports: Vec<u16>,
    /// User name (default: `PGUSER`, then the OS user).
    pub user: String,
    /// Password, if any. Never printed by `Debug`. When `None` and the server asks for one,
    /// it is looked up in the password file.
    pub password: Option<String>,
    /// `passfile`: the password file (default: `PGPASSFILE`, then `~/.pgpass`), read as
    /// libpq reads it when no password is given; `None` when there is no home directory.
    pub passfile: Option<PathBuf>,
    /// Database name (default: the user name).
    pub dbname: String,
    /// `sslmode`.
    pub sslmode: SslMode,
    /// `sslrootcert`: CA bundle (PEM) for verify-ca / verify-full.
    pub sslrootcert: Option<PathBuf>,
    /// `sslcert`: client certificate (PEM).
    pub sslcert: Option<PathBuf>,
    /// `sslkey`: client private key (PEM).
    pub sslkey: Option<PathBuf>,
    /// `channel_binding`.
    pub channel_binding: ChannelBinding,
    /// `require_auth`: the authentication methods the client accepts; `None` accepts any.
    pub require_auth: Option<RequireAuth>,
    /// `application_name`.
    pub application_name: Option<String>,
    /// `connect_timeout`, per host and address attempt.
    pub connect_timeout: Option<Duration>,
    /// `target_session_attrs`: which kind of server to accept among the hosts.
    pub target_session_attrs: TargetSessionAttrs,
    /// `load_balance_hosts`: the order in which the hosts and their addresses are tried.
    pub load_balance_hosts: LoadBalanceHosts,
    /// `options`: command-line options sent to the server (`-c search_path=…`).
    pub options: Option<String>,
    /// TCP keepalives (`keepalives`, `keepalives_idle`, `keepalives_interval`,
    /// `keepalives_count`) and `tcp_user_timeout`, for TCP connections.
    pub tcp: TcpOptions,
    /// `pooler`: the connection pooler between qail and the server, if any (default none).
    pub pooler: Pooler,
    /// `min_protocol_version`: the oldest protocol version the connection accepts when the
    /// server offers an older one than requested (default 3.0). With 3.2, servers older than
    /// PostgreSQL 18 are refused.
    pub min_protocol_version: ProtocolVersion,
    /// `max_protocol_version`: the protocol version requested in the StartupMessage. `None`
    /// (the default) requests 3.0, or the latest version when `min_protocol_version` is above
    /// 3.0, like libpq 18; see [`Config::requested_protocol_version`]. A server that does not
    /// speak the version requested offers an older one, which the connection accepts down to
    /// `min_protocol_version`.
    pub max_protocol_version: Option<ProtocolVersion>,
}

/// The `pooler` option (qail's own key, not libpq's): what the connection may rely on when a
/// pooler such as pgbouncer sits between it and the server.
///
/// With [`Pooler::Transaction`] (`pooler=transaction`, for pgbouncer's `pool_mode =
/// transaction`) consecutive transactions of one connection may run on different server
/// sessions, so nothing is kept on the server from one Sync to the next:
///
/// - no named statements: the statement cache is off (size 0, and stays 0);
/// - a compiled query goes out as one write, Parse + Describe + Bind + Execute + Sync of the
///   unnamed statement, and the server's description is checked against the template before
///   any row is decoded (a drifted column is a schema-drift error, never a wrong value; the
///   statement has run when the drift is reported);
/// - run-time SQL (`query`, `execute`) is one write too, its parameters typed by their Rust
///   values ([`Encode::type_oid`](crate::Encode::type_oid));
/// - pipelines of compiled queries send that same cycle per query; pipelines of run-time SQL
///   (which prepare first) are refused;
/// - the pool's reset only rolls back an open transaction (pgbouncer resets server sessions).
///
/// ```
/// let config = qail_pg::Config::parse("postgres://app@127.0.0.1:6432/shop?pooler=transaction")?;
/// assert_eq!(config.pooler, qail_pg::Pooler::Transaction);
/// # Ok::<(), qail_pg::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Pooler {
    /// `none`: a direct connection, or a pooler in session mode; the session is the client's.
    #[default]
    None,
    /// `transaction`: a pooler in transaction mode (pgbouncer's `pool_mode = transaction`).
    Transaction,
}

/// How the TCP socket of a connection detects a peer that vanished, with libpq's keys and
/// defaults: keepalives on, every other value the operating system's own (on Linux: the first
/// probe after 7,200 s idle, then every 75 s, 9 unanswered probes drop the connection, and
/// unacknowledged data is retransmitted for about 15 minutes).
///
/// Keepalives find a dead peer of an idle or waiting connection; `tcp_user_timeout` bounds
/// how long sent data may stay unacknowledged. Neither bounds a query: set
/// [`Connection::set_query_timeout`](crate::Connection::set_query_timeout) for that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TcpOptions {
    /// `keepalives`: `0` turns keepalives off (default on).
    pub keepalives: bool,
    /// `keepalives_idle`: seconds of silence before the first probe (`0` or absent: the OS's).
    pub keepalives_idle: Option<Duration>,
    /// `keepalives_interval`: seconds between probes (`0` or absent: the OS's).
    pub keepalives_interval: Option<Duration>,
    /// `keepalives_count`: unanswered probes before the connection is dropped (`0` or absent:
    /// the OS's).
    pub keepalives_count: Option<u32>,
    /// `tcp_user_timeout`: milliseconds sent data may stay unacknowledged before the
    /// connection is dropped (`0` or absent: the OS's). Linux only; ignored elsewhere.
    pub tcp_user_timeout: Option<Duration>,
}

impl Default for TcpOptions {
    fn default() -> TcpOptions {
        TcpOptions {
            keepalives: true,
            keepalives_idle: None,
            keepalives_interval: None,
            keepalives_count: None,
            tcp_user_timeout: None,
        }
    }
}

/// Where to connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// A TCP host name or IP address.
    Tcp(String),
    /// A directory holding the server's Unix socket (`.s.PGSQL.<port>`).
    Unix(PathBuf),
}

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    /// Never use TLS.
    Disable,
    /// Try without TLS first; use TLS if the server insists.
    Allow,
    /// Try TLS first; fall back to plain text if the server refuses it.
    #[default]
    Prefer,
    /// Use TLS; do not verify the certificate.
    Require,
    /// Use TLS; verify the certificate chain against `sslrootcert`.
    VerifyCa,
    /// Use TLS; verify the chain and that the certificate names the host.
    VerifyFull,
}

/// libpq's `target_session_attrs`: which server of the host list a connection accepts.
///
/// A server that connects but does not qualify is closed and the next host is tried. For the
/// read-write and read-only modes the answer comes from the `default_transaction_read_only`
/// and `in_hot_standby` parameters the server reports (PostgreSQL 14 and later), else from
/// `SHOW transaction_read_only`; for primary and standby from `in_hot_standby`, else from
/// `SELECT pg_is_in_recovery()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TargetSessionAttrs {
    /// `any`: the first server that accepts the connection.
    #[default]
    Any,
    /// `read-write`: a session that accepts writes by default (not in hot standby and
    /// `default_transaction_read_only` off).
    ReadWrite,
    /// `read-only`: a session that does not accept writes by default.
    ReadOnly,
    /// `primary`: a server not in hot standby.
    Primary,
    /// `standby`: a server in hot standby.
    Standby,
    /// `prefer-standby`: a standby if any host is one, else the first server that accepts the
    /// connection.
    PreferStandby,
}

/// libpq's `load_balance_hosts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoadBalanceHosts {
    /// `disable`: the hosts in the order given, and the addresses of a host name in the order
    /// the resolver returns them.
    #[default]
    Disable,
    /// `random`: the hosts in random order, and the addresses of each host name shuffled, to
    /// spread connections over the servers.
    Random,
}

/// libpq's `channel_binding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChannelBinding {
    /// Never use channel binding.
    Disable,
    /// Use it when the server offers SCRAM-SHA-256-PLUS over TLS.
    #[default]
    Prefer,
    /// Fail unless the exchange used channel binding.
    Require,
}

/// libpq's `require_auth`: a list of accepted methods, or (with `!`) of refused ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequireAuth {
    /// Whether `methods` lists refused methods (`!md5`) rather than accepted ones.
    pub negated: bool,
    /// The methods named.
    pub methods: Vec<AuthMethod>,
}

/// An authentication method named by `require_auth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethod {
    /// `password`: cleartext.
    Password,
    /// `md5`.
    Md5,
    /// `scram-sha-256`.
    ScramSha256,
    /// `none`: the server asked for no authentication.
    None,
}

pub(crate) const DEFAULT_PORT: u16 = 5432;

/// Where libpq (as packaged by Debian and most distributions) looks for the server's socket.
pub(crate) const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";

/// What parsing reads from the outside world; tests substitute their own.
pub(crate) struct Env<'a> {
    /// Looks up an environment variable.
    pub(crate) var: &'a dyn Fn(&str) -> Option<String>,
    /// Whether a directory exists (for the default Unix socket directory).
    pub(crate) dir_exists: &'a dyn Fn(&Path) -> bool,
}

impl Config {
    /// Parses a libpq connection string — a `postgres://` / `postgresql://` URL or a
    /// `key=value` list — taking unset options from the `PG*` environment variables and then
    /// libpq's defaults. An empty string gives the configuration of [`Config::from_env`].
    ///
    /// ```
    /// let config = qail_pg::Config::parse("postgres://app@db.example.com/shop?sslmode=require")?;
    /// assert_eq!(config.dbname, "shop");
    /// # Ok::<(), qail_pg::Error>(())
    /// ```
    pub fn parse(s: &str) -> Result<Config, Error> {
        Config::parse_with_env(s, &process_var)
    }

    /// The configuration given by the `PG*` environment variables and libpq's defaults alone.
    pub fn from_env() -> Result<Config, Error> {
        Config::parse("")
    }

    /// [`Config::parse`] with environment variables looked up through `var`.
    pub(crate) fn parse_with_env(
        s: &str,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, Error> {
        Config::parse_in(
            s,
            &Env {
                var,
                dir_exists: &Path::is_dir,
            },
        )
    }

    /// [`Config::parse`] against an explicit outside world.
    pub(crate) fn parse_in(s: &str, env: &Env<'_>) -> Result<Config, Error> {
        let raw = Raw::collect(s, env)?;
        let user = match raw.non_empty("user") {
            Some(user) => user.to_owned(),
            None => (env.var)("USER").filter(|u| !u.is_empty()).ok_or_else(|| {
                Error::new(
                    Kind::Config,
                    "could not determine the user name: set user in the connection string or \
                     the PGUSER environment variable",
                )
            })?,
        };
        let (hosts, hostaddrs, ports) = raw.hosts(env)?;
        let sslrootcert = raw.path("sslrootcert");
        let (min_protocol_version, max_protocol_version) = raw.protocol_versions()?;
        Ok(Config {
            hosts,
            hostaddrs,
            ports,
            dbname: raw.non_empty("dbname").unwrap_or(&user).to_owned(),
            user,
            password: raw.non_empty("password").map(str::to_owned),
            passfile: raw
                .path("passfile")
                .or_else(|| (env.var)("HOME").map(|home| Path::new(&home).join(".pgpass"))),
            sslmode: raw.sslmode(sslrootcert.as_deref())?,
            sslrootcert,
            sslcert: raw.path("sslcert"),
            sslkey: raw.path("sslkey"),
            channel_binding: raw.channel_binding()?,
            require_auth: raw.require_auth()?,
            application_name: raw
                .non_empty("application_name")
                .or_else(|| raw.non_empty("fallback_application_name"))
                .map(str::to_owned),
            connect_timeout: raw.connect_timeout()?,
            target_session_attrs: raw.target_session_attrs()?,
            load_balance_hosts: raw.load_balance_hosts()?,
            options: raw.non_empty("options").map(str::to_owned),
            tcp: raw.tcp_options()?,
            pooler: raw.pooler()?,
            min_protocol_version,
            max_protocol_version,
        })
    }

    /// The protocol version the StartupMessage requests: `max_protocol_version`, else 3.0,
    /// or the latest version when `min_protocol_version` is above 3.0 (libpq 18's rule).
    pub fn requested_protocol_version(&self) -> ProtocolVersion {
        match self.max_protocol_version {
            Some(max) => max,
            None if self.min_protocol_version > ProtocolVersion::V3_0 => ProtocolVersion::LATEST,
            None => ProtocolVersion::V3_0,
        }
    }

    /// Each host with the port to use for it.
    pub(crate) fn targets(&self) -> impl Iterator<Item = (&Host, Option<IpAddr>, u16)> {
        self.hosts.iter().enumerate().map(|(i, host)| {
            let addr = self.hostaddrs.get(i).copied().flatten();
            let port = self.ports.get(i).copied().unwrap_or(DEFAULT_PORT);
            (host, addr, port)
        })
    }
}

/// Setters: each replaces one option and returns the configuration.
impl Config {
    /// `host`: the hosts to try, in order (a Unix socket directory is a [`Host::Unix`]).
    pub fn hosts(mut self, hosts: impl IntoIterator<Item = Host>) -> Config {
        self.hosts = hosts.into_iter().collect();
        self
    }

    /// `hostaddr`: numeric addresses, one per host, used instead of resolving its name.
    pub fn hostaddrs(mut self, addrs: impl IntoIterator<Item = Option<IpAddr>>) -> Config {
        self.hostaddrs = addrs.into_iter().collect();
        self
    }

    /// `port`: one per host, or one for all of them.
    pub fn ports(mut self, ports: impl IntoIterator<Item = u16>) -> Config {
        self.ports = ports.into_iter().collect();
        self
    }

    /// `user`.
    pub fn user(mut self, user: impl Into<String>) -> Config {
        self.user = user.into();
        self
    }

    /// `password`.
    pub fn password(mut self, password: impl Into<String>) -> Config {
        self.password = Some(password.into());
        self
    }

    /// `passfile`: the password file read when no password is given.
    pub fn passfile(mut self, path: impl Into<PathBuf>) -> Config {
        self.passfile = Some(path.into());
        self
    }

    /// `dbname`.
    pub fn dbname(mut self, dbname: impl Into<String>) -> Config {
        self.dbname = dbname.into();
        self
    }

    /// `sslmode`.
    pub fn sslmode(mut self, mode: SslMode) -> Config {
        self.sslmode = mode;
        self
    }

    /// `sslrootcert`: the CA bundle (PEM) for verify-ca and verify-full.
    pub fn sslrootcert(mut self, path: impl Into<PathBuf>) -> Config {
        self.sslrootcert = Some(path.into());
        self
    }

    /// `sslcert`: the client certificate (PEM).
    pub fn sslcert(mut self, path: impl Into<PathBuf>) -> Config {
        self.sslcert = Some(path.into());
        self
    }

    /// `sslkey`: the client private key (PEM).
    pub fn sslkey(mut self, path: impl Into<PathBuf>) -> Config {
        self.sslkey = Some(path.into());
        self
    }

    /// `channel_binding`.
    pub fn channel_binding(mut self, binding: ChannelBinding) -> Config {
        self.channel_binding = binding;
        self
    }

    /// `require_auth`: the authentication methods accepted (or, negated, refused).
    pub fn require_auth(mut self, require: RequireAuth) -> Config {
        self.require_auth = Some(require);
        self
    }

    /// `application_name`.
    pub fn application_name(mut self, name: impl Into<String>) -> Config {
        self.application_name = Some(name.into());
        self
    }

    /// `connect_timeout`, per host and address attempt.
    pub fn connect_timeout(mut self, timeout: Duration) -> Config {
        self.connect_timeout = Some(timeout);
        self
    }

    /// `target_session_attrs`: which kind of server to accept among the hosts.
    pub fn target_session_attrs(mut self, attrs: TargetSessionAttrs) -> Config {
        self.target_session_attrs = attrs;
        self
    }

    /// `load_balance_hosts`: try the hosts (and each host's addresses) in random order.
    pub fn load_balance_hosts(mut self, mode: LoadBalanceHosts) -> Config {
        self.load_balance_hosts = mode;
        self
    }

    /// `options`: command-line options sent to the server (`-c search_path=…`), replacing
    /// any given before.
    pub fn options(mut self, options: impl Into<String>) -> Config {
        self.options = Some(options.into());
        self
    }

    /// TCP keepalives and `tcp_user_timeout` ([`TcpOptions`]).
    pub fn tcp(mut self, options: TcpOptions) -> Config {
        self.tcp = options;
        self
    }

    /// `pooler`: the pooler between the client and the server ([`Pooler`]).
    pub fn pooler(mut self, pooler: Pooler) -> Config {
        self.pooler = pooler;
        self
    }

    /// `min_protocol_version`: the oldest protocol version accepted.
    pub fn min_protocol_version(mut self, version: ProtocolVersion) -> Config {
        self.min_protocol_version = version;
        self
    }

    /// `max_protocol_version`: the protocol version requested.
    pub fn max_protocol_version(mut self, version: ProtocolVersion) -> Config {
        self.max_protocol_version = Some(version);
        self
    }
}

impl FromStr for Config {
    type Err = Error;

    fn from_str(s: &str) -> Result<Config, Error> {
        Config::parse(s)
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("hosts", &self.hosts)
            .field("hostaddrs", &self.hostaddrs)
            .field("ports", &self.ports)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "<hidden>"))
            .field("passfile", &self.passfile)
            .field("dbname", &self.dbname)
            .field("sslmode", &self.sslmode)
            .field("sslrootcert", &self.sslrootcert)
            .field("sslcert", &self.sslcert)
            .field("sslkey", &self.sslkey)
            .field("channel_binding", &self.channel_binding)
            .field("require_auth", &self.require_auth)
            .field("application_name", &self.application_name)
            .field("connect_timeout", &self.connect_timeout)
            .field("target_session_attrs", &self.target_session_attrs)
            .field("load_balance_hosts", &self.load_balance_hosts)
            .field("tcp", &self.tcp)
            .field("options", &self.options)
            .field("pooler", &self.pooler)
            .field("min_protocol_version", &self.min_protocol_version)
            .field("max_protocol_version", &self.max_protocol_version)
            .finish()
    }
}

impl RequireAuth {
    /// Whether the server may authenticate the client with `method`.
    pub fn allows(&self, method: AuthMethod) -> bool {
        self.methods.contains(&method) != self.negated
    }
}

/// The process environment; `USER` falls back to the account that owns this process.
fn process_var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .or_else(|| if name == "USER" { os_user() } else { None })
}

/// The name of the account running this process, from `/etc/passwd`.
#[cfg(unix)]
fn os_user() -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let uid = std::fs::metadata("/proc/self").ok()?.uid().to_string();
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        (fields.nth(1)? == uid).then(|| name.to_owned())
    })
}

#[cfg(not(unix))]
fn os_user() -> Option<String> {
    std::env::var("USERNAME").ok()
}
