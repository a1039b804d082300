//! One migration: its version, name, SQL (up and, when reversible, down), whether it runs
//! outside a transaction, and its checksum.

use sha2::{Digest, Sha256};

/// A migration's version: the number its file name starts with (`20240501120000_…`,
/// `0003_…`).
pub type Version = i64;

/// The first-line markers of a file that runs outside a transaction: qail's own, and sqlx's
/// (read as it is, so a sqlx project switches without editing its files).
const NO_TRANSACTION_MARKERS: [&str; 2] = ["-- qail:no-transaction", "-- no-transaction"];

/// One migration of the directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migration {
    pub(crate) version: Version,
    pub(crate) name: String,
    pub(crate) up: Script,
    pub(crate) down: Option<Script>,
}

impl Migration {
    /// Its version.
    pub fn version(&self) -> Version {
        self.version
    }

    /// Its name: the file name between the version and the extension (`create_users`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file `run` applies: `<version>_<name>.sql` or `<version>_<name>.up.sql`.
    pub fn up(&self) -> &Script {
        &self.up
    }

    /// The `.down.sql` file `revert` applies, when the migration is reversible.
    pub fn down(&self) -> Option<&Script> {
        self.down.as_ref()
    }

    /// The checksum recorded in the history when it is applied: of the `up` file, ignoring
    /// line endings and trailing whitespace; see [`checksum`].
    pub fn checksum(&self) -> &str {
        &self.up.checksum
    }
}

/// One SQL file of a migration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    pub(crate) file: String,
    pub(crate) sql: String,
    pub(crate) no_transaction: bool,
    pub(crate) checksum: String,
}

impl Script {
    pub(crate) fn new(file: String, sql: String) -> Script {
        Script {
            no_transaction: no_transaction(&sql),
            checksum: checksum(&sql),
            file,
            sql,
        }
    }

    /// The file name (without the directory).
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The SQL text as read.
    pub fn sql(&self) -> &str {
        &self.sql
    }

    /// Whether it runs outside a transaction: its first line is `-- qail:no-transaction`
    /// (or sqlx's `-- no-transaction`). Needed for statements such as `CREATE INDEX
    /// CONCURRENTLY`; each statement then runs on its own, and a failure leaves the migration
    /// dirty (see [`ErrorKind::Dirty`](crate::ErrorKind::Dirty)).
    pub fn no_transaction(&self) -> bool {
        self.no_transaction
    }
}

/// Whether the first line of `sql` marks it to run outside a transaction.
fn no_transaction(sql: &str) -> bool {
    let first = sql
        .strip_prefix('\u{feff}')
        .unwrap_or(sql)
        .lines()
        .next()
        .unwrap_or("")
        .trim();
    NO_TRANSACTION_MARKERS
        .iter()
        .any(|marker| first.starts_with(marker))
}

/// The checksum of a migration file's SQL: SHA-256 (lower-case hex) of the text with every
/// line's trailing whitespace (and so `\r` of CRLF line endings) and the trailing blank lines
/// removed. Re-saving a file with other line endings or trimmed spaces keeps it; any other
/// edit changes it.
pub fn checksum(sql: &str) -> String {
    let sql = sql.strip_prefix('\u{feff}').unwrap_or(sql);
    let mut hash = Sha256::new();
    let lines: Vec<&str> = sql.split('\n').map(str::trim_end).collect();
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |i| i + 1);
    for (i, line) in lines[..end].iter().enumerate() {
        if i > 0 {
            hash.update(b"\n");
        }
        hash.update(line.as_bytes());
    }
    hash.finalize()
        .iter()
        .fold(String::with_capacity(64), |mut hex, b| {
            use std::fmt::Write;
            write!(hex, "{b:02x}").expect("writing to a String cannot fail");
            hex
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_ignores_line_endings_and_trailing_whitespace() {
        let unix = "CREATE TABLE t (id int);\nINSERT INTO t VALUES (1);\n";
        let windows = "CREATE TABLE t (id int);  \r\nINSERT INTO t VALUES (1);\r\n\r\n\r\n";
        assert_eq!(checksum(unix), checksum(windows));
        assert_eq!(
            checksum(unix),
            checksum("CREATE TABLE t (id int);\nINSERT INTO t VALUES (1);")
        );
        assert_eq!(checksum(unix).len(), 64);
    }

    #[test]
    fn checksum_sees_other_edits() {
        let base = checksum("CREATE TABLE t (id int);\n");
        assert_ne!(base, checksum("CREATE TABLE t (id bigint);\n"));
        assert_ne!(base, checksum("CREATE TABLE t  (id int);\n"));
        assert_ne!(base, checksum("  CREATE TABLE t (id int);\n"));
        assert_ne!(base, checksum("\nCREATE TABLE t (id int);\n"));
        assert_ne!(base, checksum("CREATE TABLE t\n(id int);\n"));
    }

    #[test]
    fn no_transaction_markers() {
        assert!(no_transaction(
            "-- qail:no-transaction\nCREATE INDEX CONCURRENTLY i ON t (a);"
        ));
        assert!(no_transaction(
            "-- no-transaction\r\nCREATE INDEX CONCURRENTLY i ON t (a);"
        ));
        assert!(!no_transaction(
            "CREATE TABLE t ();\n-- qail:no-transaction\n"
        ));
        assert!(!no_transaction("-- create the table\nCREATE TABLE t ();"));
    }
}
