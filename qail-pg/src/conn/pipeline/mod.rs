//! Pipelining: many queries in one round trip.
//!
//! By default ([`PerQuery`]) every query is its own Bind + Execute + Sync cycle, so an
//! error affects only the query that caused it: the server skips to that query's Sync and
//! runs the next ones. Outside a transaction block each query commits on its own; inside one,
//! an error aborts the block and the following queries fail with SQLSTATE 25P02 until it is
//! rolled back.
//!
//! A template not yet prepared on the connection is described before its first query is
//! bound: Parse + Describe + Flush go out, the encoding of further queries pauses until the
//! description is read and checked against the template (replies of earlier queries are read
//! meanwhile), and only then is the query bound, or failed with the drift without running.
//! A drifted write never executes, in either mode.
//!
//! Behind a pooler in transaction mode ([`Pooler::Transaction`](crate::Pooler::Transaction))
//! nothing waits mid-batch and nothing outlives a Sync: every query carries its own Parse +
//! Describe of the unnamed statement before its Bind + Execute, its description is checked
//! when it arrives (before its rows), and a drifted query has run when its drift is reported
//! (in an atomic batch, the rest of the batch is rolled back only if the drift is read before
//! the batch's Sync is written).
//!
//! An atomic pipeline ([`Atomic`], see [`atomic`]) writes one Sync after the last query:
//! the whole batch is one implicit transaction, and the server flushes its replies once per
//! batch instead of once per query.
//!
//! Messages are encoded lazily, a chunk at a time, and sent while the replies are read
//! ([`Stream::receive_sending`](super::stream::Stream::receive_sending)), so a batch far
//! larger than the socket buffers cannot deadlock, and memory stays bounded by the chunk
//! size plus the results.
//!
//! The files: [`engine`] encodes the jobs and dispatches the replies for both modes, keeping
//! a run's state in [`run`]; [`atomic`] is what the atomic mode does differently; [`mode`]
//! holds the modes; a [`Pipeline`] ([`batch`]) runs a batch of queries of one kind, a
//! [`PipelineBuilder`] ([`builder`]) queries of any kinds added one by one. Every kind
//! hands its rows to a [`RowSink`](super::row_sink::RowSink).

mod atomic;
mod batch;
mod builder;
mod engine;
mod mode;
mod output;
mod results;
mod run;

pub use batch::{Pipeline, SqlQueries};
pub use builder::{Handle, PipelineBuilder, PipelineResults};
pub(crate) use engine::{Feed, Job, Source};
pub(crate) use mode::Mode;
pub use mode::{Atomic, PerQuery};
pub use output::QueryOutput;
pub(crate) use run::Slot;
