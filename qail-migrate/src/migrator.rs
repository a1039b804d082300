//! The [`Migrator`]: a set of migrations (read from a directory or embedded in the binary)
//! and the operations on a database's history.

use std::path::Path;
use std::time::Duration;

use qail_pg::{Connection, Pool, TransactionStatus};

use crate::error::{Error, ErrorKind};
use crate::history::{self, Entry, RowState, Table};
use crate::migration::{Migration, Version};
use crate::status::Status;

/// How long a claim on a non-transactional migration may show no sign of life before another
/// runner declares its runner dead and the migration dirty; see [`Migrator::claim_grace`].
const DEFAULT_CLAIM_GRACE: Duration = Duration::from_secs(10);

/// A migration this call applied (for `run`) or reverted (for `revert`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Its version.
    pub version: Version,
    /// Its name.
    pub name: String,
    /// How long its SQL and history row took.
    pub duration: Duration,
}

/// What to record for a dirty migration once it has been fixed by hand; see
/// [`Migrator::resolve`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// Its changes are in place now (finished by hand): record it as applied.
    Applied,
    /// Its changes were undone by hand: forget it, so that the next `run` applies it again.
    Pending,
}

/// Migrations to apply to a database: from a directory ([`Migrator::from_dir`]) or embedded
/// in the binary (`qail::migrate!("migrations")`).
///
/// Every operation takes a connection that is not in a transaction; it may go through a
/// pooler in transaction mode (`pooler=transaction`), since the runner holds no session
/// state: its lock is `pg_advisory_xact_lock`, held for one migration's transaction.
#[derive(Debug, Clone)]
pub struct Migrator {
    pub(crate) migrations: Vec<Migration>,
    pub(crate) claim_grace: Duration,
    pub(crate) ignore_missing: bool,
}

impl Migrator {
    /// A migrator for `migrations` (any order; they run by version).
    ///
    /// # Errors
    ///
    /// Two migrations with one version ([`ErrorKind::Layout`]).
    pub fn new(mut migrations: Vec<Migration>) -> Result<Migrator, Error> {
        migrations.sort_by_key(|m| m.version);
        if let Some(pair) = migrations.windows(2).find(|w| w[0].version == w[1].version) {
            return Err(Error::new(
                ErrorKind::Layout,
                format!(
                    "two migrations have version {} (`{}` and `{}`); give one a new version",
                    pair[0].version, pair[0].up.file, pair[1].up.file
                ),
            ));
        }
        Ok(Migrator {
            migrations,
            claim_grace: DEFAULT_CLAIM_GRACE,
            ignore_missing: false,
        })
    }

    /// The migrations of directory `dir`, read now.
    ///
    /// # Errors
    ///
    /// See [`read`](crate::read).
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Migrator, Error> {
        Migrator::new(crate::dir::read(dir.as_ref())?)
    }

    /// The migrations made of `files`: (file name, contents) pairs as a directory would hold
    /// them.
    ///
    /// # Errors
    ///
    /// See [`parse`](crate::parse).
    pub fn from_files<N, S>(files: impl IntoIterator<Item = (N, S)>) -> Result<Migrator, Error>
    where
        N: Into<String>,
        S: Into<String>,
    {
        Migrator::new(crate::dir::parse(files)?)
    }

    /// What `qail::migrate!` expands to; the macro has checked the file names.
    #[doc(hidden)]
    pub fn embedded(files: &'static [(&'static str, &'static str)]) -> Migrator {
        Migrator::from_files(files.iter().copied())
            .unwrap_or_else(|e| panic!("migrate! checked these files when it expanded, yet: {e}"))
    }

    /// The migrations, by version.
    pub fn migrations(&self) -> &[Migration] {
        &self.migrations
    }

    /// How long another runner's claim on a non-transactional migration may show no sign of
    /// life (no statement of it running on the server, no progress recorded) before this
    /// runner declares that runner dead and the migration dirty. Default 10 seconds.
    ///
    /// Signs of life are read from `pg_stat_activity`: the runners must be able to see each
    /// other's queries (the same role, or one with `pg_read_all_stats`), else a statement
    /// running longer than this is taken for a dead runner (the migration is then reported
    /// dirty, never run twice).
    pub fn claim_grace(mut self, grace: Duration) -> Migrator {
        self.claim_grace = grace;
        self
    }

    /// Whether `run` carries on when the history has applied versions whose files are not in
    /// the directory (an older build beside a newer one's migrations). Default `false`: that
    /// is an error ([`ErrorKind::MissingFile`]).
    pub fn ignore_missing(mut self, ignore: bool) -> Migrator {
        self.ignore_missing = ignore;
        self
    }

    /// Applies every pending migration, on a connection from `pool`: what an application
    /// calls at start-up. Returns the migrations this call applied (none when another runner
    /// applied them first).
    ///
    /// # Errors
    ///
    /// See [`Migrator::run_on`].
    pub async fn run(&self, pool: &Pool) -> Result<Vec<Step>, Error> {
        let mut conn = pool
            .acquire()
            .await
            .map_err(|e| Error::db("taking a connection from the pool", e))?;
        self.run_on(&mut conn, None).await
    }

    /// Applies the pending migrations up to and including version `target` (all of them with
    /// `None`), in version order, each in its own transaction together with its history row.
    /// Several runners may run at once, also behind a transaction-mode pooler: each migration
    /// is applied exactly once.
    ///
    /// # Errors
    ///
    /// A migration's SQL failed ([`ErrorKind::Migration`]: the ones before it stay applied);
    /// an applied file was edited ([`ErrorKind::Edited`]) or is missing
    /// ([`ErrorKind::MissingFile`]); a migration is dirty ([`ErrorKind::Dirty`]); `target` is
    /// not a version of the directory ([`ErrorKind::Usage`]); the server failed
    /// ([`ErrorKind::Db`]). Nothing runs after the first error.
    pub async fn run_on(
        &self,
        conn: &mut Connection,
        target: Option<Version>,
    ) -> Result<Vec<Step>, Error> {
        idle(conn)?;
        if let Some(target) = target {
            self.known(target)?;
        }
        let table = Table::locate(conn).await?;
        table.create(conn).await?;
        let entries = table.read(conn).await?;
        self.check(&entries)?;
        let mut steps = Vec::new();
        for m in &self.migrations {
            if target.is_some_and(|t| m.version > t) {
                break;
            }
            let done = entries
                .iter()
                .any(|e| e.version == m.version && e.state == RowState::Applied);
            if done {
                continue;
            }
            if let Some(step) = crate::apply::up(self, &table, conn, m).await? {
                steps.push(step);
            }
        }
        Ok(steps)
    }

    /// Reverts applied migrations with their `.down.sql` files, newest first: the latest one
    /// with `None`, or every one above version `target` (`Some(0)` reverts all). Each runs
    /// in its own transaction together with the removal of its history row.
    ///
    /// # Errors
    ///
    /// A migration to revert has no `.down.sql` ([`ErrorKind::Irreversible`]) or no file
    /// ([`ErrorKind::MissingFile`]) — checked before anything is reverted; a down file
    /// failed ([`ErrorKind::Migration`]); a migration is dirty ([`ErrorKind::Dirty`]);
    /// `target` is neither 0 nor a version of the directory ([`ErrorKind::Usage`]).
    pub async fn revert(
        &self,
        conn: &mut Connection,
        target: Option<Version>,
    ) -> Result<Vec<Step>, Error> {
        idle(conn)?;
        if let Some(target) = target.filter(|t| *t != 0) {
            self.known(target)?;
        }
        let table = Table::locate(conn).await?;
        if !table.exists(conn).await? {
            return Ok(Vec::new());
        }
        let entries = table.read(conn).await?;
        if let Some(e) = entries.iter().find(|e| e.state != RowState::Applied) {
            return Err(crate::apply::dirty_error(e));
        }
        let mut applied: Vec<&Entry> = entries.iter().rev().collect();
        match target {
            None => applied.truncate(1),
            Some(t) => applied.retain(|e| e.version > t),
        }
        let mut todo = Vec::new();
        for e in applied {
            let Some(m) = self.migrations.iter().find(|m| m.version == e.version) else {
                return Err(Error::new(
                    ErrorKind::MissingFile,
                    format!(
                        "cannot revert migration {} ({}): its file is not in the migrations \
                         directory; restore it (with its .down.sql) from version control",
                        e.version, e.name
                    ),
                ));
            };
            if m.down.is_none() {
                return Err(Error::new(
                    ErrorKind::Irreversible,
                    format!(
                        "cannot revert `{}`: it has no .down.sql; write a new migration that \
                         undoes it (or rename it to .up.sql and add a .down.sql)",
                        m.up.file
                    ),
                ));
            }
            todo.push(m);
        }
        let mut steps = Vec::new();
        for m in todo {
            if let Some(step) = crate::apply::down(self, &table, conn, m).await? {
                steps.push(step);
            }
        }
        Ok(steps)
    }

    /// Every migration's state: pending, applied, edited, running, dirty or missing its file.
    /// Creates nothing: without a history table every migration is pending.
    ///
    /// # Errors
    ///
    /// The server failed ([`ErrorKind::Db`]).
    pub async fn status(&self, conn: &mut Connection) -> Result<Status, Error> {
        let table = Table::locate(conn).await?;
        let entries = if table.exists(conn).await? {
            table.read(conn).await?
        } else {
            Vec::new()
        };
        Ok(Status::new(&self.migrations, &entries))
    }

    /// Records the current checksum of every applied migration whose file was edited — on
    /// purpose: the edit changed nothing the database needs (a comment, formatting), or the
    /// database was changed to match it by hand. Returns the versions repaired.
    ///
    /// # Errors
    ///
    /// The server failed ([`ErrorKind::Db`]).
    pub async fn repair(&self, conn: &mut Connection) -> Result<Vec<Version>, Error> {
        idle(conn)?;
        let table = Table::locate(conn).await?;
        if !table.exists(conn).await? {
            return Ok(Vec::new());
        }
        let what = "recording new checksums in _qail_migrations";
        let mut tx = conn.begin().await.map_err(|e| Error::db(what, e))?;
        history::lock(&mut tx).await?;
        let entries = table.read(&mut tx).await?;
        let mut repaired = Vec::new();
        for e in entries.iter().filter(|e| e.state == RowState::Applied) {
            let Some(m) = self.migrations.iter().find(|m| m.version == e.version) else {
                continue;
            };
            if m.checksum() != e.checksum {
                tx.execute(
                    &table.sql("UPDATE _qail_migrations SET checksum = $2 WHERE version = $1"),
                    &[&m.version, &m.checksum()],
                )
                .await
                .map_err(|e| Error::db(what, e))?;
                repaired.push(m.version);
            }
        }
        tx.commit().await.map_err(|e| Error::db(what, e))?;
        Ok(repaired)
    }

    /// Records how a dirty migration (or one whose runner is known to be dead, still marked
    /// running) was fixed by hand: [`Resolution::Applied`] when its changes are in place,
    /// [`Resolution::Pending`] when they were undone so that `run` applies it again.
    ///
    /// # Errors
    ///
    /// `version` is not dirty or running ([`ErrorKind::Usage`]); the server failed
    /// ([`ErrorKind::Db`]).
    pub async fn resolve(
        &self,
        conn: &mut Connection,
        version: Version,
        resolution: Resolution,
    ) -> Result<(), Error> {
        idle(conn)?;
        let what = "resolving a dirty migration in _qail_migrations";
        let table = Table::locate(conn).await?;
        table.create(conn).await?;
        let mut tx = conn.begin().await.map_err(|e| Error::db(what, e))?;
        history::lock(&mut tx).await?;
        let checksum = self
            .migrations
            .iter()
            .find(|m| m.version == version)
            .map(|m| m.checksum().to_owned());
        let n = match resolution {
            Resolution::Applied => {
                tx.execute(
                    &table.sql(
                        "UPDATE _qail_migrations SET state = 'applied', claim = NULL, \
                     heartbeat_at = NULL, error = NULL, checksum = coalesce($2, checksum) \
                     WHERE version = $1 AND state IN ('dirty', 'running')",
                    ),
                    &[&version, &checksum],
                )
                .await
            }
            Resolution::Pending => {
                tx.execute(
                    &table.sql(
                        "DELETE FROM _qail_migrations \
                     WHERE version = $1 AND state IN ('dirty', 'running')",
                    ),
                    &[&version],
                )
                .await
            }
        }
        .map_err(|e| Error::db(what, e))?;
        tx.commit().await.map_err(|e| Error::db(what, e))?;
        if n == 0 {
            return Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "migration {version} is not dirty; `status` shows which migrations need \
                     resolving"
                ),
            ));
        }
        Ok(())
    }

    fn known(&self, target: Version) -> Result<(), Error> {
        if self.migrations.iter().any(|m| m.version == target) {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::Usage,
            format!(
                "no migration has version {target}; `status` lists the versions of the \
                 directory"
            ),
        ))
    }

    /// The errors that stop `run` before it applies anything: dirty, edited, missing.
    pub(crate) fn check(&self, entries: &[Entry]) -> Result<(), Error> {
        if let Some(e) = entries.iter().find(|e| e.state == RowState::Dirty) {
            return Err(crate::apply::dirty_error(e));
        }
        for e in entries.iter().filter(|e| e.state == RowState::Applied) {
            match self.migrations.iter().find(|m| m.version == e.version) {
                Some(m) if m.checksum() != e.checksum => return Err(edited(m)),
                Some(_) => {}
                None if self.ignore_missing => {}
                None => {
                    return Err(Error::new(
                        ErrorKind::MissingFile,
                        format!(
                            "migration {} ({}) was applied, but its file is not in the \
                             migrations directory; restore it from version control, or — when \
                             an older build runs beside a newer one's migrations — set \
                             ignore_missing",
                            e.version, e.name
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

pub(crate) fn edited(m: &Migration) -> Error {
    Error::new(
        ErrorKind::Edited,
        format!(
            "migration file `{}` was edited after it was applied (its checksum differs from the \
             one recorded); restore its applied content from version control and put the change \
             in a new migration, or — when the edit is intended and the database already \
             matches it — run `repair` to record the new checksum",
            m.up.file
        ),
    )
}

pub(crate) fn idle(conn: &Connection) -> Result<(), Error> {
    if conn.transaction_status() == TransactionStatus::Idle {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::Usage,
        "the connection is inside a transaction; migrations run their own transactions, so \
         commit or roll back first (or use another connection)",
    ))
}
