//! `tracing` spans for connecting and for every query (feature `tracing`), with the fields of
//! OpenTelemetry's database semantic conventions, so an OpenTelemetry exporter
//! (`tracing-opentelemetry`) shows them as a database client's spans:
//!
//! | field | value |
//! |-------|-------|
//! | `db.system.name` | `postgresql` |
//! | `db.namespace` | the database name |
//! | `db.operation.name` | the statement's first keyword: `SELECT`, `INSERT`, `WITH`, … |
//! | `db.query.text` | the SQL: a compiled query's text, or run-time SQL as the caller wrote it (parameters are never recorded) |
//! | `server.address`, `server.port` | the server the connection reached (a host name or address, or a Unix socket directory) |
//! | `db.response.status_code` | on a server error, its SQLSTATE |
//! | `error.type` | on failure, the SQLSTATE, else the kind of failure (`closed`, `io`, `timeout`, …) |
//! | `otel.name`, `otel.kind`, `otel.status_code` | the span's name (the operation), `client`, and `ERROR` on failure, as `tracing-opentelemetry` reads them |
//! | `rows`, `duration_us` | rows returned (or affected), and the time taken |
//!
//! Query spans are `qail.query` (run-time SQL and compiled queries), connection attempts
//! `qail.connect`, both at DEBUG level; a failure also emits a DEBUG event with the error.
//! Without the feature these functions only await the future they are given, and a
//! [`QuerySpan`] is an empty value: no field is computed.

use std::future::Future;

use super::Connection;
use crate::config::Config;
use crate::error::Error;

/// The span a query runs in, made before the query borrows its connection
/// ([`query_span`]); empty without the `tracing` feature.
#[cfg(feature = "tracing")]
pub(crate) type QuerySpan = tracing::Span;

/// The span a query runs in: nothing without the `tracing` feature.
#[cfg(not(feature = "tracing"))]
#[derive(Debug, Clone, Copy)]
pub(crate) struct QuerySpan;

/// Runs a connection attempt inside a `qail.connect` span, recording the server reached.
pub(crate) async fn connect(
    config: &Config,
    fut: impl Future<Output = Result<Connection, Error>>,
) -> Result<Connection, Error> {
    #[cfg(feature = "tracing")]
    {
        use tracing::Instrument;
        let span = tracing::debug_span!(
            "qail.connect",
            otel.kind = "client",
            otel.status_code = tracing::field::Empty,
            db.system.name = "postgresql",
            db.namespace = config.dbname.as_str(),
            server.address = tracing::field::Empty,
            server.port = tracing::field::Empty,
            "error.type" = tracing::field::Empty,
            duration_us = tracing::field::Empty,
        );
        let start = std::time::Instant::now();
        let result = fut.instrument(span.clone()).await;
        span.record("duration_us", elapsed_us(start));
        match &result {
            Ok(conn) => {
                if let Some(target) = conn.cancel_target.as_deref() {
                    span.record("server.address", address(&target.host).as_ref());
                    span.record("server.port", target.port);
                }
            }
            Err(e) => failed(&span, e, "connect failed"),
        }
        result
    }
    #[cfg(not(feature = "tracing"))]
    {
        let _ = config;
        fut.await
    }
}

/// The `qail.query` span of the SQL `sql` gives on `conn` (see the module's table of
/// fields).
///
/// Note: `sql` is called, and the fields computed, only when a subscriber takes the span:
/// tracing's span macro evaluates the field values only for an enabled span, so a query
/// without a subscriber reads neither its SQL nor its server here.
#[cfg(feature = "tracing")]
pub(crate) fn query_span<'s>(conn: &Connection, sql: impl Fn() -> &'s str) -> QuerySpan {
    let target = conn.cancel_target.as_deref();
    tracing::debug_span!(
        "qail.query",
        otel.name = operation(sql()),
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        db.system.name = "postgresql",
        db.namespace = target.map(|t| t.config.dbname.as_str()),
        db.operation.name = operation(sql()),
        db.query.text = sql(),
        server.address = target.map(|t| address(&t.host)).as_deref(),
        server.port = target.map(|t| t.port),
        db.response.status_code = tracing::field::Empty,
        "error.type" = tracing::field::Empty,
        rows = tracing::field::Empty,
        duration_us = tracing::field::Empty,
    )
}

/// Without the `tracing` feature: nothing; `sql` is not called.
#[cfg(not(feature = "tracing"))]
#[inline(always)]
pub(crate) fn query_span<'s>(conn: &Connection, sql: impl Fn() -> &'s str) -> QuerySpan {
    let _ = (conn, sql);
    QuerySpan
}

/// Runs a query inside `span`, recording the number of rows (`rows` reads it from the
/// result), the duration, and on failure the error's SQLSTATE and type.
#[cfg(feature = "tracing")]
pub(crate) async fn query<T>(
    span: QuerySpan,
    fut: impl Future<Output = Result<T, Error>>,
    rows: impl FnOnce(&T) -> u64,
) -> Result<T, Error> {
    use tracing::Instrument;
    if span.is_disabled() {
        // Note: no subscriber takes the span: nothing to time or record.
        return fut.await;
    }
    let start = std::time::Instant::now();
    let result = fut.instrument(span.clone()).await;
    span.record("duration_us", elapsed_us(start));
    match &result {
        Ok(value) => {
            span.record("rows", rows(value));
        }
        Err(e) => failed(&span, e, "query failed"),
    }
    result
}

/// Without the `tracing` feature: `fut` itself.
///
/// Note: not an `async fn`, which would keep `fut` twice in its state (as its argument and
/// as the future it awaits) and so double the size every query future moves.
#[cfg(not(feature = "tracing"))]
#[inline(always)]
pub(crate) fn query<T, F: Future<Output = Result<T, Error>>>(
    span: QuerySpan,
    fut: F,
    rows: impl FnOnce(&T) -> u64,
) -> F {
    let _ = (span, rows);
    fut
}

/// Records a failure on `span`: the SQLSTATE, the error's type, the status; and an event.
#[cfg(feature = "tracing")]
fn failed(span: &tracing::Span, e: &Error, what: &str) {
    span.record("otel.status_code", "ERROR");
    match e.code() {
        Some(code) => {
            span.record("db.response.status_code", code);
            span.record("error.type", code);
        }
        None => {
            span.record("error.type", e.kind().name());
        }
    }
    tracing::debug!(parent: span, error = %e, "{what}");
}

/// `server.address`: the host name or address, or the Unix socket directory.
#[cfg(feature = "tracing")]
fn address(host: &crate::config::Host) -> std::borrow::Cow<'_, str> {
    match host {
        crate::config::Host::Tcp(name) => std::borrow::Cow::Borrowed(name),
        crate::config::Host::Unix(dir) => dir.to_string_lossy(),
    }
}

#[cfg(feature = "tracing")]
fn elapsed_us(start: std::time::Instant) -> u64 {
    u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// The keywords [`operation`] names in upper case, however the SQL spells them.
#[cfg_attr(
    not(feature = "tracing"),
    allow(dead_code, reason = "only spans read it; unit-tested either way")
)]
const KEYWORDS: &[&str] = &[
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "MERGE",
    "WITH",
    "VALUES",
    "TABLE",
    "COPY",
    "CALL",
    "DO",
    "BEGIN",
    "START",
    "COMMIT",
    "END",
    "ROLLBACK",
    "SAVEPOINT",
    "RELEASE",
    "PREPARE",
    "EXECUTE",
    "DEALLOCATE",
    "CREATE",
    "ALTER",
    "DROP",
    "TRUNCATE",
    "GRANT",
    "REVOKE",
    "SET",
    "RESET",
    "SHOW",
    "EXPLAIN",
    "ANALYZE",
    "VACUUM",
    "LISTEN",
    "NOTIFY",
    "UNLISTEN",
    "LOCK",
    "DECLARE",
    "FETCH",
    "MOVE",
    "CLOSE",
    "DISCARD",
    "COMMENT",
    "REFRESH",
    "REINDEX",
    "CLUSTER",
    "CHECKPOINT",
];

/// `db.operation.name`: the statement's first keyword, after white space, comments and
/// opening parentheses; in upper case when it is one of [`KEYWORDS`], else as written.
/// `None` for an empty statement. Reads a few bytes; allocates nothing.
#[cfg_attr(
    not(feature = "tracing"),
    allow(dead_code, reason = "only spans read it; unit-tested either way")
)]
fn operation(sql: &str) -> Option<&str> {
    let mut rest = sql;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
        if let Some(after) = rest.strip_prefix("--") {
            rest = after.split_once('\n').map_or("", |(_, line)| line);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, tail)| tail);
        } else {
            break;
        }
    }
    let end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    let word = rest.get(..end).filter(|word| !word.is_empty())?;
    Some(
        KEYWORDS
            .iter()
            .find(|keyword| keyword.eq_ignore_ascii_case(word))
            .map_or(word, |keyword| keyword),
    )
}

#[cfg(test)]
mod tests {
    use super::operation;

    #[test]
    fn operation_is_the_first_keyword_in_upper_case() {
        assert_eq!(operation("SELECT 1"), Some("SELECT"));
        assert_eq!(operation("  insert into t values ($1)"), Some("INSERT"));
        assert_eq!(
            operation("-- a note\n/* and another */ (select 1) union (select 2)"),
            Some("SELECT")
        );
        assert_eq!(
            operation("with x as (select 1) delete from t"),
            Some("WITH")
        );
        assert_eq!(operation("frobnicate now"), Some("frobnicate"));
        assert_eq!(operation("  -- only a comment"), None);
        assert_eq!(operation(""), None);
        assert_eq!(operation("/* unterminated"), None);
    }
}
