//! The driver's error type.
//!
//! [`Error`] is opaque: ask it what happened with [`Error::code`], [`Error::as_db_error`],
//! [`Error::is_closed`] and friends. Every message says what to do next.

use std::fmt;

/// The error type of every fallible qail-pg operation.
pub struct Error(Box<Inner>);

struct Inner {
    kind: Kind,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
    /// In an atomic pipeline, the position of the query that failed.
    pipeline_index: Option<usize>,
    /// The request was sent and its completion not read: it may have run.
    outcome_unknown: bool,
}

/// What kind of failure an [`Error`] is. Kept private: match with the query methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    not(feature = "runtime"),
    allow(dead_code, reason = "most kinds come from the connection layer")
)]
pub(crate) enum Kind {
    /// A connection string or option is invalid.
    Config,
    /// An I/O error on the socket.
    Io,
    /// TLS could not be negotiated or the certificate was rejected.
    Tls,
    /// Authentication failed on the client side (unsupported method, channel binding, …).
    Auth,
    /// The server sent an ErrorResponse.
    Db,
    /// The server sent something the protocol does not allow.
    Protocol,
    /// The connection is closed or broken; it cannot be used again.
    Closed,
    /// A parameter could not be encoded.
    Encode,
    /// A column could not be decoded.
    Decode,
    /// The server's types differ from what the compiled query expected.
    SchemaDrift,
    /// A time-out elapsed.
    Timeout,
    /// The caller misused the API (wrong parameter count, bad column index, …).
    Usage,
    /// `query_one` / `query_opt` got a number of rows they do not accept.
    RowCount,
    /// The caller's own code (a row callback) failed; the source is its error.
    Caller,
}

impl Kind {
    /// A short name, for the `error.type` of tracing spans.
    #[cfg(feature = "tracing")]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Config => "config",
            Kind::Io => "io",
            Kind::Tls => "tls",
            Kind::Auth => "auth",
            Kind::Db => "db",
            Kind::Protocol => "protocol",
            Kind::Closed => "closed",
            Kind::Encode => "encode",
            Kind::Decode => "decode",
            Kind::SchemaDrift => "schema_drift",
            Kind::Timeout => "timeout",
            Kind::Usage => "usage",
            Kind::RowCount => "row_count",
            Kind::Caller => "caller",
        }
    }
}

impl Error {
    #[cfg_attr(
        not(feature = "runtime"),
        allow(dead_code, reason = "errors are made by the connection layer")
    )]
    pub(crate) fn new(kind: Kind, message: impl Into<String>) -> Error {
        Error(Box::new(Inner {
            kind,
            message: message.into(),
            source: None,
            pipeline_index: None,
            outcome_unknown: false,
        }))
    }

    pub(crate) fn with_source(
        kind: Kind,
        message: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Error {
        Error(Box::new(Inner {
            kind,
            message: message.into(),
            source: Some(source.into()),
            pipeline_index: None,
            outcome_unknown: false,
        }))
    }

    /// An authentication error with `note` appended (why a password file was not used).
    #[cfg_attr(
        not(feature = "runtime"),
        allow(dead_code, reason = "used by the connection layer")
    )]
    pub(crate) fn with_auth_note(mut self, note: &str) -> Error {
        if self.0.kind == Kind::Auth {
            self.0.message = format!("{}; {note}", self.0.message);
        }
        self
    }

    /// The same error, as the failure of an atomic pipeline: `context` says what happened to
    /// the batch; the kind, the server's fields and `index` stay queryable.
    #[cfg_attr(
        not(feature = "runtime"),
        allow(dead_code, reason = "used by the connection layer")
    )]
    pub(crate) fn in_pipeline(mut self, index: Option<usize>, context: String) -> Error {
        self.0.message = if self.0.kind == Kind::Db {
            // Note: Display appends the server's message.
            context
        } else {
            format!("{context}: {}", self.0.message)
        };
        self.0.pipeline_index = index;
        self
    }

    /// The same error, for a request that was sent and whose completion was not read.
    #[cfg_attr(
        not(feature = "runtime"),
        allow(dead_code, reason = "used by the connection layer")
    )]
    pub(crate) fn outcome_unknown(mut self) -> Error {
        if !self.0.outcome_unknown {
            self.0.outcome_unknown = true;
            self.0.message.push_str(
                "; the request was sent but its reply was lost, so it may or may not have run \
                 (and committed): check before retrying a write",
            );
        }
        self
    }

    /// A copy of this error for another caller that the same failure ended (the callers
    /// of a shared client's batch): the kind, the message, the outcome and the server's
    /// fields are kept; another source is kept as text.
    #[cfg(feature = "runtime")]
    pub(crate) fn for_another_caller(&self) -> Error {
        let inner = &self.0;
        let source: Option<Box<dyn std::error::Error + Send + Sync>> = match inner.source.as_deref()
        {
            None => None,
            Some(source) => match source.downcast_ref::<DbError>() {
                Some(db) => Some(Box::new(db.clone())),
                None => Some(source.to_string().into()),
            },
        };
        Error(Box::new(Inner {
            kind: inner.kind,
            message: inner.message.clone(),
            source,
            pipeline_index: inner.pipeline_index,
            outcome_unknown: inner.outcome_unknown,
        }))
    }

    #[cfg_attr(
        not(feature = "runtime"),
        allow(dead_code, reason = "used by the connection layer")
    )]
    pub(crate) fn kind(&self) -> Kind {
        self.0.kind
    }

    /// The SQLSTATE code when the server reported the error (`"23505"`, `"28P01"`…).
    pub fn code(&self) -> Option<&str> {
        self.as_db_error().map(DbError::code)
    }

    /// Every field of the server's ErrorResponse, when the server reported the error.
    pub fn as_db_error(&self) -> Option<&DbError> {
        self.0.source.as_ref()?.downcast_ref::<DbError>()
    }

    /// Whether the connection is closed or broken and must be discarded.
    pub fn is_closed(&self) -> bool {
        matches!(self.0.kind, Kind::Closed | Kind::Io | Kind::Protocol)
    }

    /// Whether the request was sent and its completion never read, so the server may or may
    /// not have run it: a COMMIT, an autocommit statement or an atomic pipeline whose reply
    /// was lost to a broken connection or a time-out may have committed. The driver cannot
    /// tell reads from writes, so a read in that state says the same. Never retried by the
    /// driver; before retrying a write, check whether it took effect (an idempotency key, a
    /// unique constraint). When `false` on a [closed](Error::is_closed) connection, the
    /// request did not reach the server, or its outcome was read.
    ///
    /// In a per-query pipeline ([`Connection::pipeline`](crate::Connection::pipeline)) that
    /// loses its connection, each query's own result says done (its rows), not run (closed,
    /// not outcome unknown) or unknown.
    pub fn is_outcome_unknown(&self) -> bool {
        self.0.outcome_unknown
    }

    /// Whether the server's types differ from those the compiled query expected.
    pub fn is_schema_drift(&self) -> bool {
        self.0.kind == Kind::SchemaDrift
    }

    /// Whether `query_one` found no row or several, or `query_opt` several.
    pub fn is_row_count(&self) -> bool {
        self.0.kind == Kind::RowCount
    }

    /// Whether a time-out elapsed.
    pub fn is_timeout(&self) -> bool {
        self.0.kind == Kind::Timeout
    }

    /// For the error of an atomic pipeline (`Connection::pipeline_atomic`, or any pipeline
    /// built with `.atomic()`), the
    /// position, counted from 0, of the query that failed; `None` for any other error, and
    /// when the batch failed as it committed (a deferred constraint, a serialization failure).
    pub fn pipeline_index(&self) -> Option<usize> {
        self.0.pipeline_index
    }

    /// Wraps an error of the caller's own, for a row callback (`for_each` of a query or of a
    /// pipeline, …) to stop with: the call stops reading rows (an atomic
    /// pipeline is rolled back if its Sync was not sent yet) and returns this error, whose
    /// [`source`](std::error::Error::source) is `error` (downcast it to get it back).
    ///
    /// ```
    /// use std::error::Error as _;
    /// let e = qail_pg::Error::caller("quota exceeded");
    /// assert!(e.is_caller());
    /// assert_eq!(e.source().unwrap().to_string(), "quota exceeded");
    /// ```
    pub fn caller(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
        Error::with_source(Kind::Caller, "the row callback stopped the query", error)
    }

    /// Whether this is an error of the caller's own code, made by [`Error::caller`].
    pub fn is_caller(&self) -> bool {
        self.0.kind == Kind::Caller
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.0.kind)
            .field("message", &self.0.message)
            .field("source", &self.0.source)
            .field("pipeline_index", &self.0.pipeline_index)
            .field("outcome_unknown", &self.0.outcome_unknown)
            .finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)?;
        if let Some(db) = self.as_db_error() {
            write!(f, ": {db}")?;
        } else if let Some(source) = &self.0.source {
            write!(f, ": {source}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .source
            .as_ref()
            .map(|s| &**s as &(dyn std::error::Error + 'static))
    }
}

impl From<crate::proto::message::EncodeError> for Error {
    fn from(e: crate::proto::message::EncodeError) -> Error {
        Error::with_source(Kind::Encode, "the message cannot be sent", e)
    }
}

impl From<crate::proto::message::DecodeError> for Error {
    fn from(e: crate::proto::message::DecodeError) -> Error {
        Error::with_source(Kind::Protocol, "the server sent an invalid message", e)
    }
}

/// Whether `e` says a cached statement is gone (26000) or its result type changed (0A000).
#[cfg_attr(
    not(feature = "runtime"),
    allow(dead_code, reason = "used by the connection layer")
)]
pub(crate) fn is_stale(e: &Error) -> bool {
    e.as_db_error().is_some_and(|db| {
        db.code == "26000"
            || (db.code == "0A000" && db.message.contains("cached plan must not change"))
    })
}

/// The error for a stale statement inside a transaction, which cannot be retried.
#[cfg_attr(
    not(feature = "runtime"),
    allow(dead_code, reason = "used by the connection layer")
)]
pub(crate) fn stale_in_transaction(e: Error) -> Error {
    match e.as_db_error() {
        Some(db) => Error::with_source(
            Kind::Db,
            "a cached statement became invalid inside a transaction because the schema changed \
             (or the statement was deallocated); the transaction is aborted: roll it back and \
             run it again, the statement is prepared afresh",
            db.clone(),
        ),
        None => e,
    }
}

/// An error or notice reported by the server, with every field it sent.
///
/// See <https://www.postgresql.org/docs/current/protocol-error-fields.html>.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DbError {
    /// `S`: ERROR, FATAL, PANIC, WARNING, NOTICE, … (localized).
    pub severity: String,
    /// `V`: the severity, never localized.
    pub severity_nonlocalized: Option<String>,
    /// `C`: the SQLSTATE code.
    pub code: String,
    /// `M`: the primary message.
    pub message: String,
    /// `D`: detail.
    pub detail: Option<String>,
    /// `H`: hint.
    pub hint: Option<String>,
    /// `P`: 1-based character position in the query text.
    pub position: Option<u32>,
    /// `p`: position in an internally generated query.
    pub internal_position: Option<u32>,
    /// `q`: the internally generated query.
    pub internal_query: Option<String>,
    /// `W`: context (call stack).
    pub where_: Option<String>,
    /// `s`: schema name.
    pub schema: Option<String>,
    /// `t`: table name.
    pub table: Option<String>,
    /// `c`: column name.
    pub column: Option<String>,
    /// `d`: data type name.
    pub data_type: Option<String>,
    /// `n`: constraint name.
    pub constraint: Option<String>,
    /// `F`: source file of the server.
    pub file: Option<String>,
    /// `L`: source line of the server.
    pub line: Option<u32>,
    /// `R`: source routine of the server.
    pub routine: Option<String>,
}

impl DbError {
    /// The SQLSTATE code.
    pub fn code(&self) -> &str {
        &self.code
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.severity, self.code, self.message)?;
        if let Some(detail) = &self.detail {
            write!(f, "\nDETAIL: {detail}")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "\nHINT: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DbError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(code: &str, message: &str) -> Error {
        let db = DbError {
            code: code.to_owned(),
            message: message.to_owned(),
            ..DbError::default()
        };
        Error::with_source(Kind::Db, "the server reported an error", db)
    }

    #[test]
    fn stale_statements_are_recognised() {
        assert!(is_stale(&db(
            "26000",
            "prepared statement \"q1\" does not exist"
        )));
        assert!(is_stale(&db(
            "0A000",
            "cached plan must not change result type"
        )));
        assert!(!is_stale(&db("0A000", "feature not supported")));
        assert!(!is_stale(&db("23505", "duplicate key")));
        assert!(!is_stale(&Error::new(Kind::Usage, "26000")));
    }

    #[test]
    fn a_stale_statement_in_a_transaction_keeps_the_server_error() {
        let e = stale_in_transaction(db("26000", "gone"));
        assert_eq!(e.code(), Some("26000"));
        assert!(e.to_string().contains("roll it back"), "{e}");
        let usage = stale_in_transaction(Error::new(Kind::Usage, "x"));
        assert_eq!(usage.to_string(), "x");
    }
}
