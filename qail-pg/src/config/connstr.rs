//! Splitting a connection string into `(key, value)` pairs, as libpq does: a URL
//! (`postgresql://user:pw@h1:5432,h2/db?sslmode=require`) or a `key=value` list
//! (`host=localhost dbname='my db'`). Keys are checked by the caller.
//!
//! See <https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING>.

use crate::error::{Error, Kind};

/// The `(key, value)` pairs of a connection string, in order (a later pair wins).
pub(super) type Pairs = Vec<(String, String)>;

/// Splits a URL or a `key=value` string into its pairs.
pub(super) fn split(s: &str) -> Result<Pairs, Error> {
    let trimmed = s.trim();
    match strip_scheme(trimmed) {
        Some(rest) => split_url(rest),
        None => split_key_values(s),
    }
}

fn strip_scheme(s: &str) -> Option<&str> {
    s.strip_prefix("postgresql://")
        .or_else(|| s.strip_prefix("postgres://"))
}

fn config_error(message: String) -> Error {
    Error::new(Kind::Config, message)
}

// ---------------------------------------------------------------------------------------
// URLs: postgresql://[user[:password]@][host[:port][,...]][/dbname][?key=value[&...]]
// ---------------------------------------------------------------------------------------

fn split_url(rest: &str) -> Result<Pairs, Error> {
    let mut pairs = Pairs::new();
    let (before_query, query) = match rest.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (rest, None),
    };
    let (authority, dbname) = match before_query.split_once('/') {
        Some((a, d)) => (a, Some(d)),
        None => (before_query, None),
    };
    // Note: the last '@' ends the user part, so a password holding an unencoded '@' still
    // parses; host names never contain '@'.
    let hostspec = match authority.rsplit_once('@') {
        Some((userinfo, hostspec)) => {
            split_userinfo(userinfo, &mut pairs)?;
            hostspec
        }
        None => authority,
    };
    split_hostspec(hostspec, &mut pairs)?;
    if let Some(dbname) = dbname.filter(|d| !d.is_empty()) {
        pairs.push(("dbname".to_owned(), decode(dbname, "the database name")?));
    }
    if let Some(query) = query {
        split_query(query, &mut pairs)?;
    }
    Ok(pairs)
}

fn split_userinfo(userinfo: &str, pairs: &mut Pairs) -> Result<(), Error> {
    let (user, password) = match userinfo.split_once(':') {
        Some((u, p)) => (u, Some(p)),
        None => (userinfo, None),
    };
    if !user.is_empty() {
        pairs.push(("user".to_owned(), decode(user, "the user name")?));
    }
    if let Some(password) = password.filter(|p| !p.is_empty()) {
        pairs.push(("password".to_owned(), decode(password, "the password")?));
    }
    Ok(())
}

/// `host[:port],[ipv6]:port,...` becomes one `host` and one `port` list, like libpq.
fn split_hostspec(hostspec: &str, pairs: &mut Pairs) -> Result<(), Error> {
    if hostspec.is_empty() {
        return Ok(());
    }
    let mut hosts = Vec::new();
    let mut ports = Vec::new();
    for entry in hostspec.split(',') {
        let (host, port) = split_host_port(entry)?;
        hosts.push(decode(host, "a host name")?);
        ports.push(decode(port.unwrap_or(""), "a port")?);
    }
    if hosts.iter().any(|h| !h.is_empty()) {
        pairs.push(("host".to_owned(), hosts.join(",")));
    }
    if ports.iter().any(|p| !p.is_empty()) {
        pairs.push(("port".to_owned(), ports.join(",")));
    }
    Ok(())
}

fn split_host_port(entry: &str) -> Result<(&str, Option<&str>), Error> {
    if let Some(bracketed) = entry.strip_prefix('[') {
        let Some((host, after)) = bracketed.split_once(']') else {
            return Err(config_error(format!(
                "invalid connection URL: IPv6 host address \"{entry}\" is missing its closing ']'; \
                 write it as [::1] or [::1]:5432"
            )));
        };
        if host.is_empty() {
            return Err(config_error(
                "invalid connection URL: empty IPv6 host address \"[]\"; write it as [::1]"
                    .to_owned(),
            ));
        }
        return match after {
            "" => Ok((host, None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((host, Some(port))),
                None => Err(config_error(format!(
                    "invalid connection URL: unexpected \"{after}\" after IPv6 host address \
                     [{host}]; only \":port\" may follow it"
                ))),
            },
        };
    }
    Ok(match entry.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (entry, None),
    })
}

fn split_query(query: &str, pairs: &mut Pairs) -> Result<(), Error> {
    for param in query.split('&').filter(|p| !p.is_empty()) {
        let Some((key, value)) = param.split_once('=') else {
            return Err(config_error(format!(
                "invalid connection URL: query parameter \"{param}\" has no \"=\"; \
                 write it as key=value"
            )));
        };
        let key = decode(key, "a query parameter name")?;
        let value = decode(value, "a query parameter value")?;
        // Note: libpq accepts the JDBC spelling `ssl=true` for `sslmode=require`.
        if key == "ssl" && value == "true" {
            pairs.push(("sslmode".to_owned(), "require".to_owned()));
        } else {
            pairs.push((key, value));
        }
    }
    Ok(())
}

/// Percent-decodes `s` (`%2F` → `/`). `+` stays a plus sign, as in libpq.
fn decode(s: &str, what: &str) -> Result<String, Error> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b != b'%' {
            out.push(b);
            i += 1;
            continue;
        }
        let byte = bytes
            .get(i + 1..i + 3)
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok())
            .ok_or_else(|| {
                config_error(format!(
                    "invalid connection URL: bad percent-encoding in {what}; \
                     write '%' as %25 and other bytes as %XX with two hex digits"
                ))
            })?;
        if byte == 0 {
            return Err(config_error(format!(
                "invalid connection URL: {what} contains %00; remove the NUL byte"
            )));
        }
        out.push(byte);
        i += 3;
    }
    String::from_utf8(out).map_err(|_| {
        config_error(format!(
            "invalid connection URL: {what} does not decode to UTF-8; check its %XX escapes"
        ))
    })
}

// ---------------------------------------------------------------------------------------
// key=value lists: host=localhost port = 5432 password='it''s' → quoted with \' and \\
// ---------------------------------------------------------------------------------------

fn split_key_values(s: &str) -> Result<Pairs, Error> {
    let mut pairs = Pairs::new();
    let mut chars = s.chars().peekable();
    loop {
        skip_whitespace(&mut chars);
        if chars.peek().is_none() {
            return Ok(pairs);
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key.push(c);
            chars.next();
        }
        skip_whitespace(&mut chars);
        if chars.next() != Some('=') {
            return Err(config_error(format!(
                "invalid connection string: missing \"=\" after \"{key}\"; write key=value \
                 pairs such as \"host=localhost dbname=app\", or a postgres:// URL"
            )));
        }
        skip_whitespace(&mut chars);
        let value = if chars.peek() == Some(&'\'') {
            chars.next();
            quoted_value(&mut chars, &key)?
        } else {
            unquoted_value(&mut chars)
        };
        pairs.push((key, value));
    }
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

fn skip_whitespace(chars: &mut Chars<'_>) {
    while chars.next_if(|c| c.is_whitespace()).is_some() {}
}

fn unquoted_value(chars: &mut Chars<'_>) -> String {
    let mut value = String::new();
    while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
        if c == '\\' {
            if let Some(escaped) = chars.next() {
                value.push(escaped);
            }
        } else {
            value.push(c);
        }
    }
    value
}

fn quoted_value(chars: &mut Chars<'_>, key: &str) -> Result<String, Error> {
    let mut value = String::new();
    loop {
        match chars.next() {
            Some('\'') => return Ok(value),
            Some('\\') => match chars.next() {
                Some(escaped) => value.push(escaped),
                None => break,
            },
            Some(c) => value.push(c),
            None => break,
        }
    }
    Err(config_error(format!(
        "invalid connection string: the quoted value of \"{key}\" has no closing quote; \
         end it with ' and write a quote inside it as \\'"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(s: &str) -> Vec<(String, String)> {
        split(s).expect("valid connection string")
    }

    fn p(k: &str, v: &str) -> (String, String) {
        (k.to_owned(), v.to_owned())
    }

    #[test]
    fn full_url() {
        assert_eq!(
            pairs(
                "postgresql://app:s3cret@db.example.com:6432/shop?sslmode=require&application_name=web"
            ),
            vec![
                p("user", "app"),
                p("password", "s3cret"),
                p("host", "db.example.com"),
                p("port", "6432"),
                p("dbname", "shop"),
                p("sslmode", "require"),
                p("application_name", "web"),
            ]
        );
    }

    #[test]
    fn short_scheme_and_bare_url() {
        assert_eq!(pairs("postgres://"), vec![]);
        assert_eq!(pairs("postgresql:///mydb"), vec![p("dbname", "mydb")]);
        assert_eq!(pairs("postgres://localhost"), vec![p("host", "localhost")]);
    }

    #[test]
    fn url_percent_decoding() {
        assert_eq!(
            pairs("postgres://us%40er:p%40ss%2Fw+rd@h/d%20b"),
            vec![
                p("user", "us@er"),
                p("password", "p@ss/w+rd"),
                p("host", "h"),
                p("dbname", "d b"),
            ]
        );
    }

    #[test]
    fn url_password_with_raw_at_sign() {
        assert_eq!(
            pairs("postgres://u:a@b@h"),
            vec![p("user", "u"), p("password", "a@b"), p("host", "h")]
        );
    }

    #[test]
    fn url_multiple_hosts_and_ports() {
        assert_eq!(
            pairs("postgresql://h1:5433,h2,[::1]:5434/db"),
            vec![
                p("host", "h1,h2,::1"),
                p("port", "5433,,5434"),
                p("dbname", "db")
            ]
        );
    }

    #[test]
    fn url_ipv6() {
        assert_eq!(
            pairs("postgresql://[2001:db8::1234]/db"),
            vec![p("host", "2001:db8::1234"), p("dbname", "db")]
        );
        assert_eq!(
            pairs("postgresql://[::1]:5433"),
            vec![p("host", "::1"), p("port", "5433")]
        );
    }

    #[test]
    fn url_socket_directory() {
        assert_eq!(
            pairs("postgresql://%2Fvar%2Frun%2Fpostgresql/db"),
            vec![p("host", "/var/run/postgresql"), p("dbname", "db")]
        );
        assert_eq!(
            pairs("postgresql:///db?host=/tmp&port=5999"),
            vec![p("dbname", "db"), p("host", "/tmp"), p("port", "5999")]
        );
    }

    #[test]
    fn url_port_without_host() {
        assert_eq!(
            pairs("postgres://:5433/db"),
            vec![p("port", "5433"), p("dbname", "db")]
        );
    }

    #[test]
    fn url_ssl_true_means_require() {
        assert_eq!(
            pairs("postgres://h?ssl=true"),
            vec![p("host", "h"), p("sslmode", "require")]
        );
    }

    #[test]
    fn url_errors() {
        for bad in [
            "postgres://[::1/db",
            "postgres://[::1]x/db",
            "postgres://[]/db",
            "postgres://h/db?sslmode",
            "postgres://h/d%zz",
            "postgres://h/d%4",
            "postgres://h/d%00",
            "postgres://h/d%ff",
        ] {
            let err = split(bad).expect_err(bad);
            assert_eq!(err.kind(), Kind::Config, "{bad}");
            assert!(
                err.to_string().starts_with("invalid connection URL"),
                "{err}"
            );
        }
    }

    #[test]
    fn key_values() {
        assert_eq!(
            pairs("  host=localhost port = 5433\tdbname= app  "),
            vec![
                p("host", "localhost"),
                p("port", "5433"),
                p("dbname", "app")
            ]
        );
    }

    #[test]
    fn key_values_quoted_and_escaped() {
        assert_eq!(
            pairs(r"password='it\'s a \\ secret' user=a\ b options='-c search_path=x' dbname=''"),
            vec![
                p("password", r"it's a \ secret"),
                p("user", "a b"),
                p("options", "-c search_path=x"),
                p("dbname", ""),
            ]
        );
    }

    #[test]
    fn empty_string_has_no_pairs() {
        assert_eq!(pairs(""), vec![]);
        assert_eq!(pairs("   "), vec![]);
    }

    #[test]
    fn key_value_errors_name_the_problem() {
        let err = split("host=h mydb").expect_err("missing =");
        assert!(
            err.to_string().contains("missing \"=\" after \"mydb\""),
            "{err}"
        );
        let err = split("password='abc").expect_err("unterminated");
        assert!(
            err.to_string()
                .contains("\"password\" has no closing quote"),
            "{err}"
        );
        assert!(!err.to_string().contains("abc"), "{err}");
    }
}
