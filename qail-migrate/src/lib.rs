//! qail-migrate: a migrations directory as the schema's one source, applied by a runner that
//! is safe with several instances at once and behind a transaction-mode pooler.
//!
//! # The directory
//!
//! One file per version, in sqlx's layouts (so a sqlx project switches without renaming):
//! `<version>_<name>.sql`, or a reversible pair `<version>_<name>.up.sql` +
//! `<version>_<name>.down.sql` (`run` never applies a `.down.sql`; `revert` does). A file
//! whose first line is `-- qail:no-transaction` (or sqlx's `-- no-transaction`) runs outside a
//! transaction, one statement at a time — for `CREATE INDEX CONCURRENTLY` and the like.
//! Any other file runs in a transaction of the runner's, so it must not hold `BEGIN`,
//! `COMMIT` or `ROLLBACK` itself (such a file is refused before it runs). [`add`] creates
//! the next file.
//!
//! # The history
//!
//! The table `_qail_migrations` ([`CREATE_TABLE`]) holds a row per applied migration: its
//! version, name, checksum, when and how long, and its state. Each migration runs in its own
//! transaction together with its history row, under `pg_advisory_xact_lock` — a lock that
//! ends with the transaction, so it works through pgbouncer in transaction mode and cannot
//! outlive a runner. Checksums ignore line endings and trailing whitespace; any other edit
//! of an applied file stops `run` with an error naming the file ([`Migrator::repair`] records
//! an intended edit). A non-transactional file that fails leaves its migration *dirty*, which
//! stops further runs until it is fixed by hand and [resolved](Migrator::resolve).
//!
//! # Example
//!
//! ```no_run
//! use qail_migrate::Migrator;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let pool = qail_pg::Pool::connect("postgres://app@localhost/app").await?;
//! // Or embedded in the binary: `qail::migrate!("migrations")`.
//! let migrator = Migrator::from_dir("migrations")?;
//! for step in migrator.run(&pool).await? {
//!     println!("applied {} {} in {:?}", step.version, step.name, step.duration);
//! }
//! let mut conn = pool.acquire().await?;
//! let status = migrator.status(&mut conn).await?;
//! assert!(status.is_up_to_date());
//! # Ok(()) }
//! ```
//!
//! # Embedding, and rebuilding when a file is added
//!
//! `qail::migrate!("migrations")` embeds the directory's files with `include_str!`, so
//! editing one rebuilds the crate. Stable Rust gives a macro no way to watch a directory for
//! new files; a one-line build script does (`build.rs`, with `qail-migrate` as a
//! build-dependency, `default-features = false`), whose `main` is:
//!
//! ```no_run
//! qail_migrate::rerun_if_migrations_changed("migrations");
//! ```
//!
//! # Features
//!
//! | feature   | default | what it adds |
//! |-----------|---------|--------------|
//! | `runtime` | yes     | [`Migrator`] and running migrations on qail-pg; without it only the directory model (file names, [`checksum`], [`add`]) builds |

#[cfg(feature = "runtime")]
mod apply;
mod dir;
mod error;
#[cfg(feature = "runtime")]
mod history;
mod migration;
#[cfg(feature = "runtime")]
mod migrator;
#[cfg(feature = "runtime")]
mod sqlx;
#[cfg(feature = "runtime")]
mod status;
#[cfg(feature = "runtime")]
pub mod test_db;

pub use dir::{add, files, is_migration_file, parse, read};
pub use error::{Error, ErrorKind};
#[cfg(feature = "runtime")]
pub use history::{CREATE_TABLE, LOCK_KEY, TABLE};
pub use migration::{Migration, Script, Version, checksum};
#[cfg(feature = "runtime")]
pub use migrator::{Migrator, Resolution, Step};
#[cfg(feature = "runtime")]
pub use status::{MigrationStatus, State, Status};

use std::path::Path;

/// For a build script: makes Cargo rebuild the crate when a file in the migrations directory
/// `dir` (relative to the package) is added, edited or removed, so that an embedded
/// `migrate!` never serves a stale list. Prints `cargo:rerun-if-changed=<dir>`.
///
/// Note that once a build script prints any `rerun-if-changed`, Cargo reruns it only for
/// the paths printed (not for every change in the package).
pub fn rerun_if_migrations_changed(dir: impl AsRef<Path>) {
    print!("{}", rerun_lines(dir.as_ref()));
}

fn rerun_lines(dir: &Path) -> String {
    format!("cargo:rerun-if-changed={}\n", dir.display())
}

#[cfg(test)]
mod tests {
    #[test]
    fn rerun_line_names_the_directory() {
        assert_eq!(
            super::rerun_lines(std::path::Path::new("migrations")),
            "cargo:rerun-if-changed=migrations\n"
        );
    }
}
