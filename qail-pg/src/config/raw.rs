//! Turning the raw option values into a [`Config`]: defaults, validation, error messages.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{
    AuthMethod, ChannelBinding, DEFAULT_PORT, DEFAULT_SOCKET_DIR, Env, Host, LoadBalanceHosts,
    Pooler, RequireAuth, SslMode, TargetSessionAttrs, TcpOptions, connstr,
};
use crate::error::{Error, Kind};
use crate::proto::ProtocolVersion;

/// Every key a connection string may hold, with the `PG*` variable that supplies its default.
const KEYS: &[(&str, Option<&str>)] = &[
    ("host", Some("PGHOST")),
    ("hostaddr", Some("PGHOSTADDR")),
    ("port", Some("PGPORT")),
    ("user", Some("PGUSER")),
    ("password", Some("PGPASSWORD")),
    ("passfile", Some("PGPASSFILE")),
    ("dbname", Some("PGDATABASE")),
    ("sslmode", Some("PGSSLMODE")),
    ("sslrootcert", Some("PGSSLROOTCERT")),
    ("sslcert", Some("PGSSLCERT")),
    ("sslkey", Some("PGSSLKEY")),
    ("channel_binding", Some("PGCHANNELBINDING")),
    ("require_auth", Some("PGREQUIREAUTH")),
    ("application_name", Some("PGAPPNAME")),
    ("fallback_application_name", None),
    ("connect_timeout", Some("PGCONNECT_TIMEOUT")),
    ("options", Some("PGOPTIONS")),
    ("target_session_attrs", Some("PGTARGETSESSIONATTRS")),
    ("load_balance_hosts", Some("PGLOADBALANCEHOSTS")),
    ("min_protocol_version", Some("PGMINPROTOCOLVERSION")),
    ("max_protocol_version", Some("PGMAXPROTOCOLVERSION")),
    ("keepalives", None),
    ("keepalives_idle", None),
    ("keepalives_interval", None),
    ("keepalives_count", None),
    ("tcp_user_timeout", None),
    ("service", Some("PGSERVICE")),
    // Note: not a libpq key; qail's own (see `Pooler`).
    ("pooler", None),
];

/// The origin of an option that came from the service file, in error messages.
const SERVICE_FILE: &str = "the service file";

/// The raw option values, each with the environment variable it came from, if any.
pub(super) struct Raw(HashMap<&'static str, (String, Option<&'static str>)>);

impl Raw {
    pub(super) fn collect(s: &str, env: &Env<'_>) -> Result<Raw, Error> {
        let mut map = HashMap::new();
        for (key, value) in connstr::split(s)? {
            let Some(&(known, _)) = KEYS.iter().find(|(k, _)| *k == key) else {
                let valid: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
                return Err(Error::new(
                    Kind::Config,
                    format!(
                        "invalid connection option \"{key}\": qail-pg does not know it; \
                         valid options are {}",
                        valid.join(", ")
                    ),
                ));
            };
            map.insert(known, (value, None));
        }
        let service = match map.get("service") {
            Some((name, _)) => Some(name.clone()),
            None => (env.var)("PGSERVICE"),
        };
        if let Some(name) = service.filter(|name| !name.is_empty()) {
            for (key, value) in super::service::options(&name, env)? {
                let Some(&(known, _)) = KEYS.iter().find(|(k, _)| *k == key) else {
                    return Err(Error::new(
                        Kind::Config,
                        format!(
                            "invalid connection option \"{key}\" in service \"{name}\" of the \
                             service file: qail-pg does not know it"
                        ),
                    ));
                };
                map.entry(known).or_insert((value, Some(SERVICE_FILE)));
            }
        }
        for &(key, var) in KEYS {
            if let Some(var) = var
                && !map.contains_key(key)
                && let Some(value) = (env.var)(var)
            {
                map.insert(key, (value, Some(var)));
            }
        }
        Ok(Raw(map))
    }

    pub(super) fn non_empty(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .map(|(v, _)| v.as_str())
            .filter(|v| !v.is_empty())
    }

    pub(super) fn path(&self, key: &str) -> Option<PathBuf> {
        self.non_empty(key).map(PathBuf::from)
    }

    /// An error about the value of `key`, naming the variable it came from.
    fn invalid(&self, key: &str, expected: &str) -> Error {
        let (value, origin) = match self.0.get(key) {
            Some((value, Some(var))) => (value.as_str(), format!(" (from {var})")),
            Some((value, None)) => (value.as_str(), String::new()),
            None => ("", String::new()),
        };
        Error::new(
            Kind::Config,
            format!("invalid {key} \"{value}\"{origin}: {expected}"),
        )
    }

    fn choice<T: Copy>(&self, key: &str, table: &[(&str, T)]) -> Result<Option<T>, Error> {
        let Some(value) = self.non_empty(key) else {
            return Ok(None);
        };
        match table.iter().find(|(name, _)| *name == value) {
            Some(&(_, v)) => Ok(Some(v)),
            None => {
                let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
                Err(self.invalid(key, &format!("valid values are {}", names.join(", "))))
            }
        }
    }
}

impl Raw {
    /// The hosts, their `hostaddr`s and ports, lined up one per host like libpq.
    #[allow(
        clippy::type_complexity,
        reason = "three parallel lists, named by the caller"
    )]
    pub(super) fn hosts(
        &self,
        env: &Env<'_>,
    ) -> Result<(Vec<Host>, Vec<Option<IpAddr>>, Vec<u16>), Error> {
        let addrs = match self.non_empty("hostaddr") {
            Some(list) => list
                .split(',')
                .map(|a| self.hostaddr(a))
                .collect::<Result<Vec<_>, _>>()?,
            None => Vec::new(),
        };
        let mut names: Vec<&str> = self
            .non_empty("host")
            .map_or(vec![""], |h| h.split(',').collect());
        if !addrs.is_empty() && names.len() != addrs.len() {
            if self.non_empty("host").is_some() {
                return Err(self.invalid(
                    "hostaddr",
                    &format!(
                        "{} addresses for {} hosts; give one hostaddr per host, in the same order",
                        addrs.len(),
                        names.len()
                    ),
                ));
            }
            names = vec![""; addrs.len()];
        }
        let hosts = names
            .iter()
            .enumerate()
            .map(|(i, name)| match (*name, addrs.get(i).copied().flatten()) {
                ("", Some(addr)) => Host::Tcp(addr.to_string()),
                ("", None) => default_host(env),
                (dir, _) if dir.starts_with('/') => Host::Unix(PathBuf::from(dir)),
                (name, _) => Host::Tcp(name.to_owned()),
            })
            .collect::<Vec<_>>();
        let ports = self.ports(hosts.len())?;
        Ok((hosts, addrs, ports))
    }

    fn hostaddr(&self, addr: &str) -> Result<Option<IpAddr>, Error> {
        if addr.is_empty() {
            return Ok(None);
        }
        addr.parse().map(Some).map_err(|_| {
            self.invalid(
                "hostaddr",
                &format!(
                    "\"{addr}\" is not a numeric IP address such as 127.0.0.1 or ::1; \
                     put host names in host"
                ),
            )
        })
    }

    fn ports(&self, hosts: usize) -> Result<Vec<u16>, Error> {
        let Some(list) = self.non_empty("port") else {
            return Ok(vec![DEFAULT_PORT; hosts]);
        };
        let ports = list
            .split(',')
            .map(|p| match p.trim() {
                "" => Ok(DEFAULT_PORT),
                p => p.parse::<u16>().ok().filter(|&p| p != 0).ok_or_else(|| {
                    self.invalid("port", &format!("\"{p}\" is not a number from 1 to 65535"))
                }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        match ports.as_slice() {
            [one] => Ok(vec![*one; hosts]),
            _ if ports.len() == hosts => Ok(ports),
            _ => Err(self.invalid(
                "port",
                &format!(
                    "{} ports for {hosts} hosts; give one port for all hosts or one per host",
                    ports.len()
                ),
            )),
        }
    }

    pub(super) fn sslmode(&self, sslrootcert: Option<&Path>) -> Result<SslMode, Error> {
        let mode = self.choice(
            "sslmode",
            &[
                ("disable", SslMode::Disable),
                ("allow", SslMode::Allow),
                ("prefer", SslMode::Prefer),
                ("require", SslMode::Require),
                ("verify-ca", SslMode::VerifyCa),
                ("verify-full", SslMode::VerifyFull),
            ],
        )?;
        // Note: libpq makes the system trust store imply verify-full, and refuses weaker
        // modes with it, because any public CA can sign a certificate for any host name.
        if sslrootcert != Some(Path::new("system")) {
            return Ok(mode.unwrap_or_default());
        }
        match mode {
            None | Some(SslMode::VerifyFull) => Ok(SslMode::VerifyFull),
            Some(_) => Err(self.invalid(
                "sslmode",
                "a weaker sslmode than verify-full may not be used with sslrootcert=system; \
                 use sslmode=verify-full",
            )),
        }
    }

    pub(super) fn channel_binding(&self) -> Result<ChannelBinding, Error> {
        let binding = self.choice(
            "channel_binding",
            &[
                ("disable", ChannelBinding::Disable),
                ("prefer", ChannelBinding::Prefer),
                ("require", ChannelBinding::Require),
            ],
        )?;
        Ok(binding.unwrap_or_default())
    }

    pub(super) fn pooler(&self) -> Result<Pooler, Error> {
        let pooler = self.choice(
            "pooler",
            &[("none", Pooler::None), ("transaction", Pooler::Transaction)],
        )?;
        Ok(pooler.unwrap_or_default())
    }

    pub(super) fn require_auth(&self) -> Result<Option<RequireAuth>, Error> {
        let Some(list) = self.non_empty("require_auth") else {
            return Ok(None);
        };
        const VALID: &str = "valid methods are password, md5, scram-sha-256 and none, \
                             each optionally negated with '!' (all or none of them)";
        let mut negated = None;
        let mut methods = Vec::new();
        let mut seen = Vec::new();
        for item in list.split(',') {
            let (negative, name) = match item.strip_prefix('!') {
                Some(name) => (true, name),
                None => (false, item),
            };
            if *negated.get_or_insert(negative) != negative {
                return Err(self.invalid(
                    "require_auth",
                    &format!("\"{item}\" mixes negated and plain methods; {VALID}"),
                ));
            }
            if seen.contains(&name) {
                return Err(self.invalid(
                    "require_auth",
                    &format!("\"{name}\" is listed more than once; {VALID}"),
                ));
            }
            seen.push(name);
            let method = match name {
                "password" => AuthMethod::Password,
                "md5" => AuthMethod::Md5,
                "scram-sha-256" => AuthMethod::ScramSha256,
                "none" => AuthMethod::None,
                // qail-pg never uses GSSAPI or SSPI, so refusing them changes nothing.
                "gss" | "sspi" if negative => continue,
                "gss" | "sspi" => {
                    return Err(self.invalid(
                        "require_auth",
                        &format!("qail-pg does not support {name} authentication; {VALID}"),
                    ));
                }
                _ => {
                    return Err(self.invalid(
                        "require_auth",
                        &format!("unknown method \"{name}\"; {VALID}"),
                    ));
                }
            };
            methods.push(method);
        }
        Ok(Some(RequireAuth {
            negated: negated.unwrap_or(false),
            methods,
        }))
    }

    pub(super) fn target_session_attrs(&self) -> Result<TargetSessionAttrs, Error> {
        let attrs = self.choice(
            "target_session_attrs",
            &[
                ("any", TargetSessionAttrs::Any),
                ("read-write", TargetSessionAttrs::ReadWrite),
                ("read-only", TargetSessionAttrs::ReadOnly),
                ("primary", TargetSessionAttrs::Primary),
                ("standby", TargetSessionAttrs::Standby),
                ("prefer-standby", TargetSessionAttrs::PreferStandby),
            ],
        )?;
        Ok(attrs.unwrap_or_default())
    }

    pub(super) fn load_balance_hosts(&self) -> Result<LoadBalanceHosts, Error> {
        let mode = self.choice(
            "load_balance_hosts",
            &[
                ("disable", LoadBalanceHosts::Disable),
                ("random", LoadBalanceHosts::Random),
            ],
        )?;
        Ok(mode.unwrap_or_default())
    }

    /// `min_protocol_version` and `max_protocol_version`, like libpq 18: the minimum defaults
    /// to 3.0; an unset maximum to 3.0, or to the latest version when the minimum is above 3.0;
    /// a minimum above the maximum is an error.
    pub(super) fn protocol_versions(
        &self,
    ) -> Result<(ProtocolVersion, Option<ProtocolVersion>), Error> {
        let version = |key: &str| -> Result<Option<ProtocolVersion>, Error> {
            self.non_empty(key)
                .map(|value| {
                    value
                        .parse()
                        .map_err(|_| self.invalid(key, "valid values are 3.0, 3.2 and latest"))
                })
                .transpose()
        };
        let min = version("min_protocol_version")?.unwrap_or_default();
        let max = version("max_protocol_version")?;
        if let Some(max) = max
            && min > max
        {
            return Err(Error::new(
                Kind::Config,
                format!(
                    "min_protocol_version ({min}) is greater than max_protocol_version ({max}); \
                     raise max_protocol_version or lower min_protocol_version"
                ),
            ));
        }
        Ok((min, max))
    }

    /// libpq: zero or negative waits forever, and 1 second is rounded up to 2.
    pub(super) fn connect_timeout(&self) -> Result<Option<Duration>, Error> {
        let Some(value) = self.non_empty("connect_timeout") else {
            return Ok(None);
        };
        let seconds: i64 = value.trim().parse().map_err(|_| {
            self.invalid(
                "connect_timeout",
                "expected a whole number of seconds (0 waits forever)",
            )
        })?;
        Ok(u64::try_from(seconds)
            .ok()
            .filter(|&s| s > 0)
            .map(|s| Duration::from_secs(s.max(2))))
    }
}

impl Raw {
    /// The keepalive keys and `tcp_user_timeout`, read like libpq: whole numbers, zero for the
    /// operating system's default.
    pub(super) fn tcp_options(&self) -> Result<TcpOptions, Error> {
        let number = |key: &str, unit: &str| -> Result<Option<u64>, Error> {
            let Some(value) = self.non_empty(key) else {
                return Ok(None);
            };
            let n: i64 = value.trim().parse().map_err(|_| {
                self.invalid(
                    key,
                    &format!("expected a whole number of {unit} (0 for the default)"),
                )
            })?;
            u64::try_from(n)
                .map(|n| Some(n).filter(|&n| n > 0))
                .map_err(|_| self.invalid(key, &format!("expected 0 or more {unit}")))
        };
        Ok(TcpOptions {
            keepalives: match self.non_empty("keepalives") {
                None => true,
                Some(flag) => {
                    flag.trim().parse::<i64>().map_err(|_| {
                        self.invalid("keepalives", "expected 1 (on, the default) or 0 (off)")
                    })? != 0
                }
            },
            keepalives_idle: number("keepalives_idle", "seconds")?.map(Duration::from_secs),
            keepalives_interval: number("keepalives_interval", "seconds")?.map(Duration::from_secs),
            keepalives_count: number("keepalives_count", "probes")?
                .map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
            tcp_user_timeout: number("tcp_user_timeout", "milliseconds")?
                .map(Duration::from_millis),
        })
    }
}

/// libpq's default host: the Unix socket directory where there is one, else localhost.
fn default_host(env: &Env<'_>) -> Host {
    let dir = Path::new(DEFAULT_SOCKET_DIR);
    if cfg!(unix) && (env.dir_exists)(dir) {
        Host::Unix(dir.to_path_buf())
    } else {
        Host::Tcp("localhost".to_owned())
    }
}
