//! The migrations directory: which files are migrations, their versions and names (sqlx's
//! layouts read as they are), and adding a new one.
//!
//! A migration is `<version>_<name>.sql`, or a reversible pair `<version>_<name>.up.sql` +
//! `<version>_<name>.down.sql`. Files that do not end in `.sql` (a README) and hidden files
//! are ignored; any other `.sql` file is an error naming it.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{Error, ErrorKind};
use crate::migration::{Migration, Script, Version};

/// Versions below this are sequence numbers (`0001`, `2`); timestamps (`20240501120000`) are
/// larger.
const SEQUENCE_LIMIT: Version = 1_000_000_000;

/// Which file of a migration a name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// `<version>_<name>.sql`
    Simple,
    /// `<version>_<name>.up.sql`
    Up,
    /// `<version>_<name>.down.sql`
    Down,
}

/// A migration file's name taken apart.
#[derive(Debug, PartialEq, Eq)]
struct FileName<'a> {
    version: Version,
    /// The digits as written (`0003`), for the width of the next sequence number.
    digits: &'a str,
    name: &'a str,
    part: Part,
}

/// Whether the directory entry `file` is one the runner reads: a visible `.sql` file.
pub fn is_migration_file(file: &str) -> bool {
    !file.starts_with('.') && file.ends_with(".sql")
}

fn parse_name(file: &str) -> Result<FileName<'_>, Error> {
    let (stem, part) = if let Some(stem) = file.strip_suffix(".up.sql") {
        (stem, Part::Up)
    } else if let Some(stem) = file.strip_suffix(".down.sql") {
        (stem, Part::Down)
    } else if let Some(stem) = file.strip_suffix(".sql") {
        (stem, Part::Simple)
    } else {
        return Err(layout(file, "is not a .sql file"));
    };
    let digits_end = stem
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(stem.len());
    let (digits, rest) = stem.split_at(digits_end);
    let name = rest.strip_prefix('_').unwrap_or("");
    if digits.is_empty() || name.is_empty() {
        return Err(layout(
            file,
            "is not named <version>_<name>.sql (or .up.sql/.down.sql); rename it, e.g. \
             `0001_create_users.sql`, or move it out of the migrations directory",
        ));
    }
    let version = digits.parse::<Version>().map_err(|_| {
        layout(
            file,
            "has a version too large for a 64-bit integer; use a timestamp \
             (YYYYMMDDHHMMSS) or a sequence number",
        )
    })?;
    Ok(FileName {
        version,
        digits,
        name,
        part,
    })
}

fn layout(file: &str, what: &str) -> Error {
    Error::new(ErrorKind::Layout, format!("migration file `{file}` {what}"))
}

/// The migrations made of `files` (file name, contents), in version order. File names that
/// [`is_migration_file`] rejects are skipped.
///
/// # Errors
///
/// A `.sql` file not named `<version>_<name>.sql` / `.up.sql` / `.down.sql`, two files with
/// one version, or a `.down.sql` without its `.up.sql` ([`ErrorKind::Layout`]).
pub fn parse<N, S>(files: impl IntoIterator<Item = (N, S)>) -> Result<Vec<Migration>, Error>
where
    N: Into<String>,
    S: Into<String>,
{
    #[derive(Default)]
    struct Parts {
        simple: Option<Script>,
        up: Option<Script>,
        down: Option<Script>,
        name: String,
    }
    let mut versions: BTreeMap<Version, Parts> = BTreeMap::new();
    for (file, sql) in files {
        let file: String = file.into();
        if !is_migration_file(&file) {
            continue;
        }
        let parsed = parse_name(&file)?;
        let (version, name, part) = (parsed.version, parsed.name.to_owned(), parsed.part);
        let parts = versions.entry(version).or_default();
        if parts.name.is_empty() {
            parts.name = name.clone();
        } else if parts.name != name {
            return Err(duplicate(version, &parts.name, &name));
        }
        let script = Script::new(file, sql.into());
        let slot = match part {
            Part::Simple => &mut parts.simple,
            Part::Up => &mut parts.up,
            Part::Down => &mut parts.down,
        };
        if let Some(other) = slot.replace(script) {
            return Err(duplicate(version, &other.file, &parts.name));
        }
    }
    versions
        .into_iter()
        .map(|(version, parts)| {
            let up = match (parts.simple, parts.up) {
                (Some(simple), None) => simple,
                (None, Some(up)) => up,
                (Some(simple), Some(up)) => {
                    return Err(Error::new(
                        ErrorKind::Layout,
                        format!(
                            "version {version} has both `{}` and `{}`; keep one of them",
                            simple.file, up.file
                        ),
                    ));
                }
                (None, None) => {
                    let down = parts.down.map(|d| d.file).unwrap_or_default();
                    return Err(Error::new(
                        ErrorKind::Layout,
                        format!(
                            "`{down}` has no `.up.sql` beside it; add `{}` or remove it",
                            down.replace(".down.sql", ".up.sql")
                        ),
                    ));
                }
            };
            if up.file.ends_with(".sql") && !up.file.ends_with(".up.sql") && parts.down.is_some() {
                let down = parts.down.map(|d| d.file).unwrap_or_default();
                return Err(Error::new(
                    ErrorKind::Layout,
                    format!(
                        "`{down}` belongs to a reversible pair, but its up file is `{}`; rename \
                         that to `{}`",
                        up.file,
                        up.file.replace(".sql", ".up.sql")
                    ),
                ));
            }
            Ok(Migration {
                version,
                name: parts.name,
                up,
                down: parts.down,
            })
        })
        .collect()
}

fn duplicate(version: Version, a: &str, b: &str) -> Error {
    Error::new(
        ErrorKind::Layout,
        format!(
            "two migrations have version {version} (`{a}` and `{b}`); give one of them a new \
             version (rename its file)"
        ),
    )
}

/// The `.sql` files of `dir` that are migrations, sorted by name.
///
/// # Errors
///
/// The directory cannot be read ([`ErrorKind::Io`]).
pub fn files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = fs::read_dir(dir).map_err(|e| io(dir, "read the migrations directory", e))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io(dir, "read the migrations directory", e))?;
        let path = entry.path();
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if is_migration_file(name) && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The migrations of directory `dir`, in version order.
///
/// # Errors
///
/// The directory or a file cannot be read ([`ErrorKind::Io`]), or its layout is wrong
/// ([`ErrorKind::Layout`], see [`parse`]).
pub fn read(dir: &Path) -> Result<Vec<Migration>, Error> {
    let mut contents = Vec::new();
    for path in files(dir)? {
        let sql = fs::read_to_string(&path).map_err(|e| io(&path, "read the migration", e))?;
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        contents.push((name, sql));
    }
    parse(contents)
}

fn io(path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::new(
        ErrorKind::Io,
        format!(
            "could not {what} `{}`: {e}; check the path and its permissions",
            path.display()
        ),
    )
    .with_source(e)
}

/// Creates a new migration in `dir` (made if missing) and returns the files written: one
/// `<version>_<name>.sql`, or with `reversible` a `.up.sql` and `.down.sql` pair.
///
/// The version is the current UTC time as `YYYYMMDDHHMMSS` (like sqlx), or — when the
/// directory's migrations use small sequence numbers (`0001_…`) — the next number, written
/// with the same width. It is always above every existing version. Spaces and dashes in
/// `name` become underscores.
///
/// # Errors
///
/// An empty name or one with characters other than letters, digits and `_`
/// ([`ErrorKind::Usage`]); the directory's existing layout is wrong ([`ErrorKind::Layout`]);
/// a file cannot be written ([`ErrorKind::Io`]).
pub fn add(dir: &Path, name: &str, reversible: bool) -> Result<Vec<PathBuf>, Error> {
    let name: String = name
        .trim()
        .chars()
        .map(|c| {
            if c.is_whitespace() || c == '-' {
                '_'
            } else {
                c
            }
        })
        .collect();
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Err(Error::new(
            ErrorKind::Usage,
            format!(
                "`{name}` cannot name a migration; use letters, digits and underscores, e.g. \
                 `create_users`"
            ),
        ));
    }
    fs::create_dir_all(dir).map_err(|e| io(dir, "create the migrations directory", e))?;
    let existing = read(dir)?;
    let digits = match existing.last() {
        Some(last) if last.version < SEQUENCE_LIMIT => {
            let width = parse_name(&last.up.file).map_or(0, |n| n.digits.len());
            format!("{:0width$}", last.version + 1)
        }
        last => {
            let now = timestamp(SystemTime::now());
            let version = match last {
                Some(last) if last.version >= now => last.version + 1,
                _ => now,
            };
            version.to_string()
        }
    };
    let files: Vec<(String, String)> = if reversible {
        vec![
            (
                format!("{digits}_{name}.up.sql"),
                format!("-- {name}: the change `run` applies.\n"),
            ),
            (
                format!("{digits}_{name}.down.sql"),
                format!("-- {name}: undoes the .up.sql file, for `revert`.\n"),
            ),
        ]
    } else {
        vec![(format!("{digits}_{name}.sql"), format!("-- {name}\n"))]
    };
    let mut written = Vec::new();
    for (file, body) in files {
        let path = dir.join(file);
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io(&path, "create", e))?;
        f.write_all(body.as_bytes())
            .map_err(|e| io(&path, "write", e))?;
        written.push(path);
    }
    Ok(written)
}

/// `time` in UTC as the number `YYYYMMDDHHMMSS`.
fn timestamp(time: SystemTime) -> Version {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| {
        Version::try_from(d.as_secs()).unwrap_or(Version::MAX)
    });
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + Version::from(month <= 2);
    let (hour, minute, second) = (rem / 3600, rem % 3600 / 60, rem % 60);
    ((((year * 100 + month) * 100 + day) * 100 + hour) * 100 + minute) * 100 + second
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn files(names: &[&str]) -> Vec<(String, String)> {
        names
            .iter()
            .map(|n| ((*n).to_owned(), format!("-- {n}\n")))
            .collect()
    }

    #[test]
    fn reads_sqlx_layouts() {
        let migrations = parse(files(&[
            "20240102000000_second.up.sql",
            "README.md",
            "20240101000000_first.sql",
            "20240102000000_second.down.sql",
            ".hidden.sql",
        ]))
        .expect("a valid layout");
        let versions: Vec<_> = migrations
            .iter()
            .map(|m| (m.version, m.name.as_str()))
            .collect();
        assert_eq!(
            versions,
            [(20240101000000, "first"), (20240102000000, "second")]
        );
        assert!(migrations[0].down().is_none());
        assert_eq!(migrations[1].up().file(), "20240102000000_second.up.sql");
        assert_eq!(
            migrations[1].down().map(Script::file),
            Some("20240102000000_second.down.sql")
        );
    }

    #[test]
    fn layout_errors_name_the_file() {
        let e = parse(files(&["create_users.sql"])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Layout);
        assert!(e.to_string().contains("`create_users.sql`"), "{e}");
        let e = parse(files(&["1_a.sql", "1_b.sql"])).unwrap_err();
        assert!(e.to_string().contains("version 1"), "{e}");
        let e = parse(files(&["2_a.down.sql"])).unwrap_err();
        assert!(e.to_string().contains("add `2_a.up.sql`"), "{e}");
        let e = parse(files(&["3_a.sql", "3_a.up.sql"])).unwrap_err();
        assert!(e.to_string().contains("keep one"), "{e}");
        let e = parse(files(&["4_.sql"])).unwrap_err();
        assert!(e.to_string().contains("rename it"), "{e}");
    }

    #[test]
    fn timestamps_are_utc_calendar_time() {
        let at = |secs| timestamp(UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), 19700101000000);
        // 2024-02-29T23:59:59Z, a leap day.
        assert_eq!(at(1_709_251_199), 20240229235959);
        // 2026-11-28T06:17:50Z
        assert_eq!(at(1_795_846_670), 20261128061750);
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("qail-migrate-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn add_uses_timestamps_or_the_next_sequence_number() {
        let dir = temp_dir("add-ts");
        let first = add(&dir, "create users", false).expect("added");
        let name = first[0]
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        assert!(
            name.ends_with("_create_users.sql") && name.len() == 14 + 17,
            "{name}"
        );
        let second = add(&dir, "add-email", true).expect("added");
        assert_eq!(second.len(), 2);
        let migrations = read(&dir).expect("readable");
        assert_eq!(migrations.len(), 2);
        assert!(migrations[1].version > migrations[0].version);
        assert!(migrations[1].down().is_some());
        fs::remove_dir_all(&dir).expect("removed");

        let dir = temp_dir("add-seq");
        fs::create_dir_all(&dir).expect("created");
        fs::write(dir.join("0001_init.sql"), "SELECT 1;\n").expect("written");
        let next = add(&dir, "second", false).expect("added");
        assert_eq!(next, [dir.join("0002_second.sql")]);
        let e = add(&dir, "bad/name", false).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Usage);
        fs::remove_dir_all(&dir).expect("removed");
    }
}
