//! A pipeline's modes: each query its own cycle ([`PerQuery`]), or one transaction for the
//! batch ([`Atomic`]). The public types choose a mode in the types of [`PipelineBuilder`] and
//! [`Pipeline`]; the engine reads it as a [`Mode`].
//!
//! [`PipelineBuilder`]: super::PipelineBuilder
//! [`Pipeline`]: super::Pipeline

/// Where a pipeline's Syncs go.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mode {
    /// A Sync after every query: each query succeeds or fails alone.
    PerQuery,
    /// One Sync after the last query: all of them, or none.
    Atomic,
}

/// The default mode of a pipeline: every query is its own Bind + Execute + Sync cycle, so
/// an error affects only the query that caused it (its result), and the others still run.
/// Outside a transaction block each query commits on its own; inside one, an error aborts
/// the block, so the queries after it fail with SQLSTATE 25P02 until it is rolled back.
#[derive(Debug, Clone, Copy, Default)]
pub struct PerQuery;

/// The atomic mode of a pipeline ([`PipelineBuilder::atomic`]): the queries run as **one
/// transaction**, all of them or none.
///
/// One Sync ends the batch, so the server runs it as one implicit transaction and commits at
/// the end. When a query fails, the server skips the rest of the batch and rolls all of it
/// back — the queries before the failing one too — and the returned error says which query
/// failed ([`Error::pipeline_index`], counted from 0) with the server's error
/// ([`Error::code`], [`Error::as_db_error`]). A failure when the batch commits (a deferred
/// constraint, a serialization failure) has no index. The connection is usable afterwards.
///
/// Inside a transaction block ([`Connection::begin`]) the batch joins the block and commits
/// with it; an error aborts the block like any failed statement, so roll it back.
///
/// A compiled query whose statement is new on this connection is described first (Parse +
/// Describe + Flush, its types checked before any of its queries is bound), so when the
/// server's types drifted from the compiled query's, no query of that template runs and the
/// whole batch is rolled back ([`Error::is_schema_drift`]).
///
/// The client also ends the batch itself, so that it is rolled back, when a parameter cannot
/// be encoded or a row cannot be decoded, provided the Sync has not been sent yet (it goes
/// out with the last query); if it has, the error says that the batch took effect. Dropping
/// the future before it finishes rolls the batch back too (unless the Sync was sent, in which
/// case it commits); the connection stays usable.
///
/// Compared with [`PerQuery`], the server flushes its replies once per batch instead of once
/// per query, which saves client and server CPU on large batches.
///
/// [`PipelineBuilder::atomic`]: super::PipelineBuilder::atomic
/// [`Error::pipeline_index`]: crate::Error::pipeline_index
/// [`Error::code`]: crate::Error::code
/// [`Error::as_db_error`]: crate::Error::as_db_error
/// [`Error::is_schema_drift`]: crate::Error::is_schema_drift
/// [`Connection::begin`]: crate::Connection::begin
#[derive(Debug, Clone, Copy, Default)]
pub struct Atomic;
