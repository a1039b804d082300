//! The one error type: what went wrong, with what to do next.

use std::fmt;

/// What kind of failure an [`Error`] is; see [`Error::kind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading or writing the migrations directory failed.
    Io,
    /// A file name or the directory's layout is not one the runner reads (a name without a
    /// version, two files with one version, a `.down.sql` without its `.up.sql`, …).
    Layout,
    /// An applied migration's file was edited after it was applied (its checksum differs).
    Edited,
    /// An applied migration's file is missing from the directory.
    MissingFile,
    /// A migration run outside a transaction failed or its runner stopped: the database may
    /// hold part of it, and nothing runs until someone resolves it by hand.
    Dirty,
    /// A migration to revert has no `.down.sql` file.
    Irreversible,
    /// A migration's own SQL failed (in a transaction: nothing of it was applied).
    Migration,
    /// Talking to the server failed outside a migration's own SQL (connecting, the history
    /// table, the lock).
    Db,
    /// The arguments do not fit the history (an unknown version, a connection inside a
    /// transaction, …).
    Usage,
}

/// An error of the migrations runner. Its message says what happened and what to do next.
pub struct Error {
    kind: ErrorKind,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn with_source(
        mut self,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Error {
        self.source = Some(source.into());
        self
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The driver's error underneath, when a statement or the connection failed — for its
    /// SQLSTATE ([`qail_pg::Error::code`]) and the server's fields.
    #[cfg(feature = "runtime")]
    pub fn db_error(&self) -> Option<&qail_pg::Error> {
        self.source.as_deref()?.downcast_ref()
    }

    /// An error of the driver while doing `what` (outside a migration's own SQL).
    #[cfg(feature = "runtime")]
    pub(crate) fn db(what: &str, e: qail_pg::Error) -> Error {
        let next = if e.is_closed() {
            "check that the server is reachable and run again"
        } else {
            "check the server's message and the role's privileges, then run again"
        };
        Error::new(ErrorKind::Db, format!("{what} failed: {e}; {next}")).with_source(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.kind)
            .field("message", &self.message)
            .field("source", &self.source)
            .finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}
