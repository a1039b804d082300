//! The connection service file (`service=`, `PGSERVICE`), read as libpq reads it.
//!
//! A service is a section of an INI-style file, `[name]` followed by `key=value` lines of
//! connection options; `#` starts a comment line. The user's file (`PGSERVICEFILE`, default
//! `~/.pg_service.conf`) is searched first, then the system's (`PGSYSCONFDIR/pg_service.conf`,
//! default `/etc/postgresql-common/pg_service.conf`). The options of the service fill in what
//! the connection string leaves unset; the `PG*` variables come after them.
//!
//! See <https://www.postgresql.org/docs/current/libpq-pgservice.html>.

use std::path::PathBuf;

use super::Env;
use crate::error::{Error, Kind};

/// Where the system's service file is when `PGSYSCONFDIR` is unset (Debian's libpq).
const SYSCONFDIR: &str = "/etc/postgresql-common";

/// The options of service `name`, in file order; an error when no file defines it or the
/// definition is malformed.
pub(super) fn options(name: &str, env: &Env<'_>) -> Result<Vec<(String, String)>, Error> {
    let user_file = (env.var)("PGSERVICEFILE")
        .map(PathBuf::from)
        .or_else(|| (env.var)("HOME").map(|home| PathBuf::from(home).join(".pg_service.conf")));
    let system_dir = (env.var)("PGSYSCONFDIR").unwrap_or_else(|| SYSCONFDIR.to_owned());
    let system_file = PathBuf::from(system_dir).join("pg_service.conf");
    for path in user_file.iter().chain([&system_file]) {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        if let Some(options) = section(&text, name, path)? {
            return Ok(options);
        }
    }
    Err(Error::new(
        Kind::Config,
        format!(
            "definition of service \"{name}\" not found; add a [{name}] section to {} or {}, \
             or name the file with PGSERVICEFILE",
            user_file.map_or_else(
                || "~/.pg_service.conf".to_owned(),
                |p| p.display().to_string()
            ),
            system_file.display()
        ),
    ))
}

/// The `key=value` lines of section `[name]` in `text`, if it has one.
fn section(
    text: &str,
    name: &str,
    path: &std::path::Path,
) -> Result<Option<Vec<(String, String)>>, Error> {
    let mut found: Option<Vec<(String, String)>> = None;
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            if found.is_some() {
                break;
            }
            if header.strip_suffix(']') == Some(name) {
                found = Some(Vec::new());
            }
            continue;
        }
        let Some(options) = found.as_mut() else {
            continue;
        };
        let malformed = |why: &str| {
            Error::new(
                Kind::Config,
                format!(
                    "syntax error in service file {}, line {}: {why}",
                    path.display(),
                    number + 1
                ),
            )
        };
        let Some((key, value)) = line.split_once('=') else {
            return Err(malformed("expected key=value"));
        };
        if key == "service" {
            return Err(malformed("nested service specifications are not supported"));
        }
        options.push((key.to_owned(), value.to_owned()));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
# services
[shop]
host=db.example.com
port=6432
dbname=shop

[report]
  # an indented comment
  host=replica
user=reader
";

    #[test]
    fn a_section_gives_its_options_in_order() {
        let path = std::path::Path::new("pg_service.conf");
        let shop = section(FILE, "shop", path).unwrap().unwrap();
        assert_eq!(
            shop,
            [
                ("host".to_owned(), "db.example.com".to_owned()),
                ("port".to_owned(), "6432".to_owned()),
                ("dbname".to_owned(), "shop".to_owned()),
            ]
        );
        let report = section(FILE, "report", path).unwrap().unwrap();
        assert_eq!(report.len(), 2);
        assert_eq!(section(FILE, "nope", path).unwrap(), None);
    }

    #[test]
    fn malformed_lines_are_errors_with_the_line_number() {
        let path = std::path::Path::new("svc.conf");
        let e = section("[a]\nhost\n", "a", path).unwrap_err().to_string();
        assert!(
            e.contains("svc.conf, line 2") && e.contains("key=value"),
            "{e}"
        );
        let e = section("[a]\nservice=b\n", "a", path)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nested service"), "{e}");
        // Errors in other sections do not matter.
        assert!(section("[b]\nbad\n[a]\nport=1\n", "a", path).is_ok());
    }
}
