//! The password file (`~/.pgpass`, `PGPASSFILE`, `passfile=`), read as libpq reads it.
//!
//! Each line is `hostname:port:database:username:password`; `*` in one of the first four
//! fields matches anything, `\` escapes a `:` or a `\`, lines starting with `#` are comments,
//! and the first matching line wins. A Unix-socket connection to the default socket directory
//! matches the host name `localhost`. On Unix a file that the group or others may read is
//! ignored, as libpq does, since it would leak the passwords in it.
//!
//! See <https://www.postgresql.org/docs/current/libpq-pgpass.html>.

use std::path::Path;

use super::{DEFAULT_SOCKET_DIR, Host};

/// What the password file says for one connection attempt.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// The password of the first matching line.
    Found(String),
    /// No file, or no matching line.
    None,
    /// The file exists but was not read (the reason, for the error if a password is asked).
    Ignored(String),
}

/// Looks up the password for `user` on `dbname` at `host`:`port` in the file at `path`.
pub(crate) fn lookup(path: &Path, host: &Host, port: u16, dbname: &str, user: &str) -> Lookup {
    let Ok(meta) = std::fs::metadata(path) else {
        return Lookup::None;
    };
    if !meta.is_file() {
        return Lookup::Ignored(format!(
            "the password file {} is not a plain file",
            path.display()
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            return Lookup::Ignored(format!(
                "the password file {} was ignored because the group or others may read it; \
                 make it private with chmod 0600",
                path.display()
            ));
        }
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        return Lookup::Ignored(format!(
            "the password file {} could not be read as UTF-8 text",
            path.display()
        ));
    };
    let host = match host {
        Host::Tcp(name) => name.clone(),
        Host::Unix(dir) if dir == Path::new(DEFAULT_SOCKET_DIR) => "localhost".to_owned(),
        Host::Unix(dir) => dir.display().to_string(),
    };
    match find(&text, &host, &port.to_string(), dbname, user) {
        Some(password) => Lookup::Found(password),
        None => Lookup::None,
    }
}

/// The password of the first line of `text` whose fields match.
fn find(text: &str, host: &str, port: &str, dbname: &str, user: &str) -> Option<String> {
    let wanted = [host, port, dbname, user];
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(fields)
        .find(|(keys, _)| {
            keys.iter().zip(wanted).all(|(key, value)| match key {
                Key::Any => true,
                Key::Text(text) => text == value,
            })
        })
        .map(|(_, password)| password)
}

/// A key field of a line.
enum Key {
    /// `*` (unescaped, the whole field): matches anything.
    Any,
    /// Anything else, escapes resolved (`\*` is a literal star).
    Text(String),
}

/// The four key fields and the password of a line; `None` when it has fewer than five
/// fields. The password is the rest of the line, escapes resolved.
fn fields(line: &str) -> Option<([Key; 4], String)> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut keys = Vec::with_capacity(4);
    let mut current = String::new();
    let mut escaped_any = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                escaped_any = true;
                if let Some(next) = chars.next() {
                    current.push(next);
                }
            }
            ':' if keys.len() < 4 => {
                let field = std::mem::take(&mut current);
                keys.push(if field == "*" && !escaped_any {
                    Key::Any
                } else {
                    Key::Text(field)
                });
                escaped_any = false;
            }
            c => current.push(c),
        }
    }
    let keys: [Key; 4] = keys.try_into().ok()?;
    Some((keys, current))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
# comment line: db.example.com:5432:*:app:nope
db.example.com:5432:shop:app:first
db.example.com:5432:shop:app:second
*:*:*:report:wild\\:card\\\\pass
localhost:5433:*:*:local
odd\\:host:5432:*:*:escaped
short:line
\\*:5432:*:star:literal-star
";

    #[test]
    fn the_first_matching_line_wins() {
        assert_eq!(
            find(FILE, "db.example.com", "5432", "shop", "app").as_deref(),
            Some("first")
        );
        assert_eq!(find(FILE, "db.example.com", "5433", "shop", "app"), None);
        assert_eq!(find(FILE, "db.example.com", "5432", "other", "app"), None);
    }

    #[test]
    fn stars_match_anything_and_escapes_are_resolved() {
        assert_eq!(
            find(FILE, "anywhere", "1", "any", "report").as_deref(),
            Some("wild:card\\pass")
        );
        assert_eq!(
            find(FILE, "localhost", "5433", "x", "y").as_deref(),
            Some("local")
        );
        assert_eq!(
            find(FILE, "odd:host", "5432", "x", "y").as_deref(),
            Some("escaped")
        );
        // An escaped star is a literal star, not the wildcard.
        assert_eq!(find(FILE, "anyhost", "5432", "x", "star"), None);
        assert_eq!(
            find(FILE, "*", "5432", "x", "star").as_deref(),
            Some("literal-star")
        );
    }

    #[test]
    fn comments_and_short_lines_never_match() {
        assert_eq!(find(FILE, "short", "line", "", ""), None);
        assert_eq!(find("#*:*:*:*:x\n", "h", "1", "d", "u"), None);
        assert_eq!(
            find("h:1:d:u:crlf\r\n", "h", "1", "d", "u").as_deref(),
            Some("crlf")
        );
    }

    #[test]
    fn files_others_may_read_are_ignored() {
        let dir = std::env::temp_dir().join(format!("qail-pgpass-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("pgpass");
        std::fs::write(&path, "*:*:*:*:secret\n").unwrap();
        let host = Host::Tcp("h".to_owned());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            let Lookup::Ignored(why) = lookup(&path, &host, 5432, "d", "u") else {
                panic!("a world-readable file must be ignored");
            };
            assert!(why.contains("chmod 0600"), "{why}");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        assert_eq!(
            lookup(&path, &host, 5432, "d", "u"),
            Lookup::Found("secret".to_owned())
        );
        let socket = Host::Unix(DEFAULT_SOCKET_DIR.into());
        std::fs::write(&path, "localhost:5432:d:u:via-socket\n").unwrap();
        assert_eq!(
            lookup(&path, &socket, 5432, "d", "u"),
            Lookup::Found("via-socket".to_owned())
        );
        assert_eq!(
            lookup(&dir.join("missing"), &host, 5432, "d", "u"),
            Lookup::None
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
