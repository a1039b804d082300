//! Connection options, parsed like libpq: URLs, `key=value` strings and `PG*` variables.
//!
//! See <https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING>.

use std::path::PathBuf;
use std::time::Duration;

/// Everything needed to open a connection.
#[derive(Clone, PartialEq, Eq)]
pub struct Config {
    /// Hosts to try in order; a Unix socket directory is a [`Host::Unix`].
    pub hosts: Vec<Host>,
    /// Ports, one per host or a single one for all (default 5432).
    pub ports: Vec<u16>,
    /// User name (default: `PGUSER`, then the OS user).
    pub user: String,
    /// Password, if any. Never printed by `Debug`.
    pub password: Option<String>,
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
    /// `connect_timeout`, per host attempt.
    pub connect_timeout: Option<Duration>,
    /// `options`: command-line options sent to the server (`-c search_path=…`).
    pub options: Option<String>,
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
