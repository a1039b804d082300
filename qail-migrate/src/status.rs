//! Where each migration stands: the directory compared with the history table.

use std::fmt;
use std::time::Duration;

use crate::history::{Entry, RowState};
use crate::migration::{Migration, Version};

/// The state of one migration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum State {
    /// In the directory, not applied.
    Pending,
    /// Applied, and its file is unchanged (up to line endings and trailing whitespace).
    Applied,
    /// Applied, but its file changed since: restore the file, or record the new checksum
    /// with [`Migrator::repair`](crate::Migrator::repair) if the edit is intended.
    Edited,
    /// A non-transactional migration claimed by a runner that is running it — or that died
    /// while running it, which the next `run` reports as [`State::Dirty`].
    Running,
    /// A non-transactional migration failed or its runner stopped: the database may hold part
    /// of it. Fix it by hand, then [`Migrator::resolve`](crate::Migrator::resolve) it.
    Dirty,
    /// In the history, but its file is not in the directory (removed, or this is an older
    /// build than the one that applied it).
    MissingFile,
}

impl State {
    /// A word for it, as `status` prints it: `pending`, `applied`, `edited`, `running`,
    /// `dirty`, `missing file`.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Applied => "applied",
            State::Edited => "edited",
            State::Running => "running",
            State::Dirty => "dirty",
            State::MissingFile => "missing file",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One version's line of a [`Status`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationStatus {
    /// The version.
    pub version: Version,
    /// The migration's name (from its file, else from the history).
    pub name: String,
    /// Its state.
    pub state: State,
    /// The file `run` applies, when it is in the directory.
    pub file: Option<String>,
    /// When it was applied (or claimed), as the server prints a `timestamptz`.
    pub applied_at: Option<String>,
    /// How long applying it took.
    pub duration: Option<Duration>,
    /// For a dirty migration, the error that left it so.
    pub error: Option<String>,
}

/// Every migration's state, by version: what [`Migrator::status`](crate::Migrator::status)
/// returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// One entry per version found in the directory or the history, by version.
    pub migrations: Vec<MigrationStatus>,
}

impl Status {
    pub(crate) fn new(migrations: &[Migration], history: &[Entry]) -> Status {
        let mut out: Vec<MigrationStatus> = migrations
            .iter()
            .map(|m| {
                let entry = history.iter().find(|e| e.version == m.version);
                let state = match entry {
                    None => State::Pending,
                    Some(e) => match e.state {
                        RowState::Running => State::Running,
                        RowState::Dirty => State::Dirty,
                        RowState::Applied if e.checksum == m.checksum() => State::Applied,
                        RowState::Applied => State::Edited,
                    },
                };
                MigrationStatus {
                    version: m.version,
                    name: m.name.clone(),
                    state,
                    file: Some(m.up.file.clone()),
                    applied_at: entry.map(|e| e.applied_at.clone()),
                    duration: entry.and_then(duration),
                    error: entry.and_then(|e| e.error.clone()),
                }
            })
            .collect();
        for e in history {
            if migrations.iter().all(|m| m.version != e.version) {
                out.push(MigrationStatus {
                    version: e.version,
                    name: e.name.clone(),
                    state: match e.state {
                        RowState::Running => State::Running,
                        RowState::Dirty => State::Dirty,
                        RowState::Applied => State::MissingFile,
                    },
                    file: None,
                    applied_at: Some(e.applied_at.clone()),
                    duration: duration(e),
                    error: e.error.clone(),
                });
            }
        }
        out.sort_by_key(|m| m.version);
        Status { migrations: out }
    }

    /// The migrations in `state`.
    pub fn with_state(&self, state: State) -> impl Iterator<Item = &MigrationStatus> {
        self.migrations.iter().filter(move |m| m.state == state)
    }

    /// Whether nothing needs doing: no migration is pending, edited, running or dirty (a
    /// missing file alone does not count: an older build may run beside a newer one's
    /// migrations). `status --exit-code` exits non-zero when this is false.
    pub fn is_up_to_date(&self) -> bool {
        self.migrations
            .iter()
            .all(|m| matches!(m.state, State::Applied | State::MissingFile))
    }
}

fn duration(e: &Entry) -> Option<Duration> {
    e.duration_ms
        .and_then(|ms| u64::try_from(ms).ok())
        .map(Duration::from_millis)
}

impl fmt::Display for Status {
    /// One line per migration: version, state, file (or name), and for a dirty one its error.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for m in &self.migrations {
            let file = m.file.as_deref().unwrap_or(&m.name);
            write!(f, "{:>14}  {:<12}  {file}", m.version, m.state.as_str())?;
            if let Some(error) = m.error.as_deref().filter(|_| m.state == State::Dirty) {
                write!(f, "  ({error})")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
