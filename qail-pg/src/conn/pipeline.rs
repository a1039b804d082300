//! Pipelining: many queries in one round trip.
//!
//! By default ([`Mode::PerQuery`]) every query is its own Bind + Execute + Sync cycle, so an
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
//! An atomic pipeline ([`Mode::Atomic`], see [`atomic`]) writes one Sync after the last query:
//! the whole batch is one implicit transaction, and the server flushes its replies once per
//! batch instead of once per query.
//!
//! Messages are encoded lazily, a chunk at a time, and sent while the replies are read
//! ([`Stream::receive_sending`](super::stream::Stream::receive_sending)), so a batch far
//! larger than the socket buffers cannot deadlock, and memory stays bounded by the chunk
//! size plus the results.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use super::compiled::{
    bind_named, check_bind_prefix, check_count, check_drift, template_statement,
};
use super::prepare::close_statement;
use super::stream::{Received, release};
use super::{Connection, Statement, described_columns, server_error};
use crate::error::{Error, Kind};
use crate::proto::message::{Backend, DataRow, EncodeError, bind_execute, flush, sync};
use crate::row::Column;
use crate::template::Template;
use crate::types::{Oid, Param};
use atomic::{end_batch_query, fail_batch};

mod api;
mod atomic;
mod builder;
mod output;

pub use api::{Pipeline, SqlQueries};
pub use builder::{Atomic, Handle, PerQuery, PipelineBuilder, PipelineResults};
pub use output::QueryOutput;

/// How many unsent bytes to encode ahead of the socket.
const CHUNK: usize = 64 * 1024;

/// The most results reserved up front, whatever the iterator claims.
const RESERVE_LIMIT: usize = 1 << 16;

/// The most bytes [`Run::owed`] counts: more than one wait asks for.
const MAX_OWED: usize = 32 * 1024;

/// Where a pipeline's Syncs go.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mode {
    /// A Sync after every query: each query succeeds or fails alone.
    PerQuery,
    /// One Sync after the last query: all of them, or none.
    Atomic,
}

/// What a pipelined query runs.
pub(crate) enum Source<'s> {
    /// A compiled query.
    Template(&'static Template),
    /// A statement prepared by SQL text.
    Statement(&'s Statement),
}

/// One query of a pipeline.
pub(crate) trait Job {
    /// How the job holds its parameters.
    type Param: Param;
    fn source(&self) -> Source<'_>;
    fn params(&self) -> &[Self::Param];
}

/// A pipeline's jobs as its engine sees them: one job in hand at a time, whose parameters
/// the job encodes itself.
///
/// Note: the engine (the encoding loop, the reply dispatch, the end of a run) takes its jobs
/// and its [`Sink`] as `dyn`, so it is compiled once, not once per query type and sink; the
/// generic part of a run is [`InHand`] and the loop that awaits the socket. The
/// erased values are never held across an `await`, so a run's future is `Send` whenever its
/// jobs and sink are.
trait Jobs {
    /// Takes the next job in hand; false when there is none.
    fn advance(&mut self) -> bool;
    /// What the job in hand runs.
    fn source(&self) -> Source<'_>;
    /// How many parameter values the job in hand has.
    fn param_count(&self) -> usize;
    /// Queues the job in hand's Bind + Execute (without Sync); on an error the buffer may
    /// hold part of them.
    fn write_bind(&self, buf: &mut Vec<u8>, to: BindTo<'_>) -> Result<(), EncodeError>;
    /// A lower bound on the jobs not taken yet.
    fn remaining_hint(&self) -> usize;
}

/// What a job's Bind names.
#[derive(Clone, Copy)]
enum BindTo<'a> {
    /// A template's prepared statement, by the template's pre-encoded Bind prefix (its name
    /// and parameter count), with the statement's parameter types.
    Prefix(&'a [u8], &'a [Oid]),
    /// A statement by name, with its parameter types.
    Named(&'a str, &'a [Oid]),
}

/// The jobs of an iterator, the last one taken in hand.
struct InHand<I: Iterator> {
    jobs: I,
    job: Option<I::Item>,
}

impl<I: Iterator<Item: Job>> Jobs for InHand<I> {
    fn advance(&mut self) -> bool {
        self.job = self.jobs.next();
        self.job.is_some()
    }
    fn source(&self) -> Source<'_> {
        self.job
            .as_ref()
            .expect("a job is in hand when the engine asks for it")
            .source()
    }
    fn param_count(&self) -> usize {
        self.job.as_ref().map_or(0, |job| job.params().len())
    }
    fn write_bind(&self, buf: &mut Vec<u8>, to: BindTo<'_>) -> Result<(), EncodeError> {
        let params = self.job.as_ref().map_or(&[][..], Job::params);
        match to {
            BindTo::Prefix(prefix, types) => bind_execute(buf, prefix, params, types),
            BindTo::Named(name, types) => bind_named(buf, name, types, params),
        }
    }
    fn remaining_hint(&self) -> usize {
        self.jobs.size_hint().0
    }
}

/// Where a run's engine stopped.
enum Step {
    /// It needs more replies: at least this many bytes are owed (see [`Run::owed`]).
    Receive(usize),
    /// The run ended (its loss, when it failed).
    End(Result<(), Error>),
}

/// Receives a pipeline's results, query by query, in order.
pub(crate) trait Sink {
    /// A row of query `index`; an error is kept as the query's result.
    fn row(&mut self, index: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error>;
    /// The end of query `index`: the rows affected, or its error.
    fn done(&mut self, index: usize, result: Result<u64, Error>);
    /// Whether [`Sink::done`] uses the rows affected; when not, the count is not parsed.
    fn wants_counts(&self) -> bool {
        true
    }
    /// Room for at least `queries` more results, told before the run.
    fn reserve(&mut self, queries: usize) {
        let _ = queries;
    }
}

/// A template's state within one pipeline.
enum Local {
    /// Prepared (from the cache, or described earlier in this pipeline): its statement is
    /// `Run::statements[i]`.
    Ready(u32),
    /// Parse + Describe sent, description not read yet.
    Describing,
    /// Described, but its types differ from the template's (the message).
    Drift(String),
    /// The Parse failed.
    Failed,
}

/// `Slot::statement` of a query whose template is being described in this pipeline.
const UNRESOLVED: u32 = u32::MAX;

/// What [`Connection::encode_template`] queued.
enum Encoded {
    /// Bind + Execute.
    Bound,
    /// Parse + Describe + Flush of the template: the job waits for the description.
    Describing,
}

/// A query whose replies are awaited. Kept small: a pipeline queues one per query.
pub(crate) struct Slot {
    index: usize,
    /// The statement its rows decode with (`Run::statements[i]`), or [`UNRESOLVED`] while
    /// the template whose description this slot or an earlier one reads is described.
    statement: u32,
    template: Option<&'static Template>,
    /// Whether this slot carries the template's Parse + Describe.
    describes: bool,
    error: Option<Error>,
    affected: u64,
    /// Per query: how many bytes the connection must have sent for this query's Sync to
    /// have gone out ([`Stream::queued_total`](super::stream::Stream::queued_total) after
    /// it was queued); `u64::MAX` until it is queued.
    synced_at: u64,
}

/// The templates' states within one pipeline, by name.
type Locals = HashMap<&'static str, Local, BuildHasherDefault<NameHasher>>;

/// FNV-1a over a template name: names come from the program, not from the server, so a
/// cheap hash serves (a lookup per query).
struct NameHasher(u64);

impl Default for NameHasher {
    fn default() -> NameHasher {
        NameHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for NameHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

struct Run {
    mode: Mode,
    queue: VecDeque<Slot>,
    /// The statements the queries run, each once (slots refer to them by index).
    statements: Vec<Statement>,
    /// The template of the previous query and its statement, when ready: consecutive
    /// queries of one template skip the lookup in `local`.
    last: Option<(&'static Template, u32)>,
    /// The ParameterDescription of the template being described, until its RowDescription.
    described_params: Option<Vec<crate::Oid>>,
    /// The template being described for the job that waits to be bound: no other job is
    /// encoded until its description is read and checked.
    waiting: Option<&'static Template>,
    local: Locals,
    /// Templates described by this pipeline, to cache (or close) at the end.
    described: Vec<&'static Template>,
    next_index: usize,
    /// Atomic: the batch's Sync is written and its ReadyForQuery not read yet.
    syncing: bool,
    /// Atomic: the first failure, with the index of the query (none when the commit failed).
    failure: Option<(Option<usize>, Error)>,
    /// Atomic: the server saw an error before the batch committed, so it is rolled back.
    rolled_back: bool,
    /// Jobs may be left to take.
    more: bool,
    /// The job in hand waits for its template's description before it is bound.
    pending: bool,
}

impl Run {
    fn new(mode: Mode, queue: VecDeque<Slot>) -> Run {
        Run {
            mode,
            queue,
            statements: Vec::new(),
            last: None,
            described_params: None,
            waiting: None,
            local: Locals::default(),
            described: Vec::new(),
            next_index: 0,
            syncing: false,
            failure: None,
            rolled_back: false,
            more: true,
            pending: false,
        }
    }
}

impl Connection {
    /// Runs `jobs` as one pipeline, handing the results to `sink`. In [`Mode::Atomic`] the
    /// sink sees only successful queries, and any failure is the returned error.
    ///
    /// The connection's query time-out ([`Connection::set_query_timeout`]) applies to the
    /// whole pipeline.
    pub(crate) async fn run_pipeline<J: Job>(
        &mut self,
        jobs: impl IntoIterator<Item = J>,
        sink: &mut impl Sink,
        mode: Mode,
    ) -> Result<(), Error> {
        super::cancel::timed!(self, self.run_pipeline_untimed(jobs, sink, mode), |fut| fut)
    }

    async fn run_pipeline_untimed<J: Job>(
        &mut self,
        jobs: impl IntoIterator<Item = J>,
        sink: &mut impl Sink,
        mode: Mode,
    ) -> Result<(), Error> {
        self.ready_without_reset().await?;
        let mut jobs = InHand {
            jobs: jobs.into_iter(),
            job: None,
        };
        let mut run = self.start_run(mode, &jobs, sink);
        loop {
            let owed = match self.advance_run(&mut run, &mut jobs, sink) {
                Step::Receive(owed) => owed,
                Step::End(ended) => return self.end_run(run, ended, &mut jobs, sink),
            };
            if let Err(e) = self.stream.receive_sending(owed).await {
                return self.end_run(run, Err(e), &mut jobs, sink);
            }
        }
    }

    fn start_run(&mut self, mode: Mode, jobs: &dyn Jobs, sink: &mut dyn Sink) -> Run {
        sink.reserve(jobs.remaining_hint().min(RESERVE_LIMIT));
        // Note: the queue's memory is the connection's, reused by the next pipeline.
        let mut queue = std::mem::take(&mut self.spare_slots);
        queue.clear();
        Run::new(mode, queue)
    }

    /// Encodes jobs and handles the replies received, until the run needs more replies or
    /// ends.
    fn advance_run(&mut self, run: &mut Run, jobs: &mut dyn Jobs, sink: &mut dyn Sink) -> Step {
        loop {
            if let Some(template) = run.waiting
                && !matches!(run.local.get(template.name), Some(Local::Describing))
                && run.pending
            {
                run.pending = false;
                if let Err(e) = self.finish_described(jobs, run) {
                    return Step::End(Err(e));
                }
            }
            while run.more && !run.pending && run.failure.is_none() && self.stream.unsent() < CHUNK
            {
                if !jobs.advance() {
                    run.more = false;
                } else if !self.encode_job(jobs, run) {
                    run.pending = true;
                }
            }
            if run.failure.is_some() {
                // Note: atomic, and the batch is lost: send no more of it.
                run.more = false;
                run.pending = false;
                run.waiting = None;
            }
            if run.mode == Mode::Atomic && !run.more && !run.pending && self.open_batch {
                self.end_batch(run);
            }
            if run.queue.is_empty() && !run.syncing {
                if run.more {
                    continue;
                }
                return Step::End(Ok(()));
            }
            let message = match self.stream.try_frame() {
                Ok(Some(message)) => message,
                Ok(None) => return Step::Receive(run.owed(self.stream.sent_total())),
                Err(e) => return Step::End(Err(e)),
            };
            // Note: rows are handled in this loop, the other replies out of line: a call
            // per row (saving and restoring the registers `on_reply` needs) costs more than
            // its body.
            let handled = if message.is_data_row() {
                self.on_data_row(message, run, sink)
            } else if message.is_asynchronous() {
                self.on_async(message)
            } else {
                self.on_reply(message, run, sink)
            };
            if let Err(e) = handled {
                return Step::End(Err(e));
            }
        }
    }

    /// Ends a run: on the loss of the connection in a per-query pipeline, each query's own
    /// result says what became of it; otherwise caches what the run prepared and returns
    /// the batch's error, if any.
    fn end_run(
        &mut self,
        mut run: Run,
        ended: Result<(), Error>,
        jobs: &mut dyn Jobs,
        sink: &mut dyn Sink,
    ) -> Result<(), Error> {
        if let Err(e) = ended {
            if run.mode == Mode::PerQuery && e.is_closed() {
                // Note: a job waiting for its template's description has its slot queued.
                report_lost(&e, self.stream.sent_total(), &mut run, jobs, sink);
                return Ok(());
            }
            return Err(e);
        }
        self.finish_pipeline(&run);
        if run.queue.capacity() <= RESERVE_LIMIT {
            self.spare_slots = std::mem::take(&mut run.queue);
        }
        match run.failure {
            Some((index, e)) => Err(self.batch_error(index, e, run.rolled_back)),
            None => Ok(()),
        }
    }

    /// Queues one job's messages, ending with a Sync unless the pipeline is atomic. Returns
    /// false when the job's template is first described: its Parse + Describe + Flush are
    /// queued, and the job waits (`Run::waiting`) until the description has been read and
    /// checked, when [`Connection::finish_described`] binds it.
    fn encode_job(&mut self, job: &dyn Jobs, run: &mut Run) -> bool {
        let mut slot = Slot {
            index: run.next_index,
            statement: UNRESOLVED,
            template: None,
            describes: false,
            error: None,
            affected: 0,
            synced_at: u64::MAX,
        };
        run.next_index += 1;
        let bound = match job.source() {
            Source::Statement(statement) => {
                slot.statement = run.intern(statement);
                self.encode_bind(statement.name(), statement.params(), job)
            }
            Source::Template(template) => {
                match self.encode_template(template, job, run, &mut slot) {
                    Ok(Encoded::Describing) => {
                        // Note: in either mode the Parse + Describe wait for a Sync; should
                        // the pipeline be dropped now, the next flow ends them (a Sync after
                        // a Parse that fails, so nothing of an atomic batch commits).
                        self.open_batch = true;
                        run.queue.push_back(slot);
                        run.waiting = Some(template);
                        return false;
                    }
                    Ok(Encoded::Bound) => Ok(()),
                    Err(e) => Err(e),
                }
            }
        };
        self.end_job(slot, bound, run);
        true
    }

    /// Binds the job that waited for its template's description (its slot is the last in
    /// the queue): a drifted template's query is not run but fails with the drift.
    fn finish_described(&mut self, job: &dyn Jobs, run: &mut Run) -> Result<(), Error> {
        let Some(template) = run.waiting.take() else {
            return Ok(());
        };
        let slot = match run.queue.pop_back() {
            Some(slot)
                if slot.describes && slot.template.is_some_and(|t| std::ptr::eq(t, template)) =>
            {
                slot
            }
            // Note: an atomic batch whose error drained the queue is lost.
            None if run.failure.is_some() => return Ok(()),
            _ => return Err(self.protocol_error("a reply ended a query that was not bound yet")),
        };
        let mut slot = slot;
        let bound = match run.local.get(template.name) {
            Some(Local::Ready(i)) => {
                slot.statement = *i;
                run.last = Some((template, *i));
                self.bind_ready(template, &run.statements[*i as usize], job)
            }
            Some(Local::Drift(message)) => Err(Error::new(Kind::SchemaDrift, message.clone())),
            // Note: the Parse failed; the slot has the server's error.
            _ => Ok(()),
        };
        self.end_job(slot, bound, run);
        Ok(())
    }

    /// Ends a job's messages (a Sync unless atomic) and queues its slot for the replies.
    fn end_job(&mut self, mut slot: Slot, bound: Result<(), Error>, run: &mut Run) {
        if run.mode == Mode::Atomic {
            self.open_batch = true;
            match bound {
                Ok(()) => run.queue.push_back(slot),
                Err(e) => {
                    run.failure.get_or_insert((Some(slot.index), e));
                }
            }
            return;
        }
        if let Err(e) = bound {
            slot.error.get_or_insert(e);
        }
        sync(self.stream.write_buf());
        self.syncs.sent(1);
        slot.synced_at = self.stream.queued_total();
        // Note: per query, a batch is open only while a template is described.
        self.open_batch = false;
        run.queue.push_back(slot);
    }

    fn encode_template(
        &mut self,
        template: &'static Template,
        job: &dyn Jobs,
        run: &mut Run,
        slot: &mut Slot,
    ) -> Result<Encoded, Error> {
        slot.template = Some(template);
        if self.pooled_transactions {
            self.encode_unnamed(template, job)?;
            return Ok(Encoded::Bound);
        }
        if let Some((last, i)) = run.last
            && std::ptr::eq(last, template)
        {
            slot.statement = i;
            self.bind_ready(template, &run.statements[i as usize], job)?;
            return Ok(Encoded::Bound);
        }
        match run.local.get(template.name) {
            Some(Local::Ready(i)) => {
                let i = *i;
                slot.statement = i;
                run.last = Some((template, i));
                self.bind_ready(template, &run.statements[i as usize], job)?;
                return Ok(Encoded::Bound);
            }
            Some(Local::Drift(message)) => {
                return Err(Error::new(Kind::SchemaDrift, message.clone()));
            }
            // Note: the server answers the Bind of a statement whose Parse failed with an
            // error of its own (26000), the query's result.
            Some(Local::Failed | Local::Describing) => {
                self.encode_bind(template.name, template.param_oids, job)?;
                return Ok(Encoded::Bound);
            }
            None => {}
        }
        check_bind_prefix(template)?;
        if let Some(statement) = self.cache.get_template(template.name) {
            let i = run.intern(&statement);
            run.local.insert(template.name, Local::Ready(i));
            run.last = Some((template, i));
            slot.statement = i;
            self.bind_ready(template, &statement, job)?;
            return Ok(Encoded::Bound);
        } else if template.param_oids.contains(&0) || !self.cache.is_enabled() {
            return Err(Error::new(
                Kind::Usage,
                "this compiled query has a parameter of a user type (or the statement cache is \
                 off), so it cannot be prepared inside a pipeline; run it once outside the \
                 pipeline first, or keep the statement cache on",
            ));
        }
        check_count(template, job.param_count())?;
        self.write_parse_describe(template, template.name)?;
        flush(self.stream.write_buf());
        self.unconfirmed.push(template.name.to_owned());
        run.local.insert(template.name, Local::Describing);
        run.described.push(template);
        slot.describes = true;
        Ok(Encoded::Describing)
    }

    /// Behind a pooler in transaction mode: queues Parse + Describe + Bind + Execute of the
    /// unnamed statement (without Sync). The description, read just before the query's rows,
    /// is checked against the template and decodes them (see [`described`]); nothing is
    /// cached, so no later cycle depends on this one's server session.
    fn encode_unnamed(&mut self, template: &'static Template, job: &dyn Jobs) -> Result<(), Error> {
        check_count(template, job.param_count())?;
        let mark = self.stream.write_buf().len();
        self.write_parse_describe(template, "")?;
        if let Err(e) = self.write_job_bind(job, BindTo::Named("", template.param_oids)) {
            self.stream.write_buf().truncate(mark);
            return Err(e);
        }
        Ok(())
    }

    /// Queues Bind + Execute (without Sync) of a template prepared on this connection, with
    /// its pre-encoded Bind prefix (checked by `check_bind_prefix` when the pipeline first met
    /// the template): a template's statement is always prepared under the template's name.
    fn bind_ready(
        &mut self,
        template: &'static Template,
        statement: &Statement,
        job: &dyn Jobs,
    ) -> Result<(), Error> {
        debug_assert_eq!(statement.name(), template.name);
        check_count(template, job.param_count())?;
        job.write_bind(
            self.stream.write_buf(),
            BindTo::Prefix(template.bind_prefix(), statement.params()),
        )
        .map_err(super::prepare::encode_error)
    }

    /// Queues Bind + Execute (without Sync).
    fn encode_bind(&mut self, name: &str, types: &[Oid], job: &dyn Jobs) -> Result<(), Error> {
        if types.len() != job.param_count() {
            return Err(Error::new(
                Kind::Usage,
                format!(
                    "the statement has {} parameters but {} values were given; pass one value \
                     per $n placeholder",
                    types.len(),
                    job.param_count()
                ),
            ));
        }
        self.write_job_bind(job, BindTo::Named(name, types))
    }

    /// Queues the job's Bind + Execute, or nothing when encoding fails.
    fn write_job_bind(&mut self, job: &dyn Jobs, to: BindTo<'_>) -> Result<(), Error> {
        let buf = self.stream.write_buf();
        let mark = buf.len();
        if let Err(e) = job.write_bind(buf, to) {
            buf.truncate(mark);
            return Err(super::prepare::encode_error(e));
        }
        Ok(())
    }

    /// Handles one reply of the pipeline, in either mode. The modes differ only in what ends
    /// a query — its ReadyForQuery per query; its CommandComplete (or EmptyQueryResponse) in
    /// an atomic batch, whose one ReadyForQuery ends the batch — and in what an error fails:
    /// its query, or the whole batch (see [`atomic`]).
    fn on_reply(
        &mut self,
        message: Received,
        run: &mut Run,
        sink: &mut dyn Sink,
    ) -> Result<(), Error> {
        // Note: the decoded reply is matched in place, and every arm consumes it, so no arm
        // copies the message or calls its drop glue on the hot path (DataRow, BindComplete,
        // CommandComplete).
        match self.stream.decode(message) {
            Ok(
                reply @ (Backend::ParseComplete
                | Backend::BindComplete
                | Backend::CloseComplete
                | Backend::PortalSuspended),
            ) => {
                release(reply);
                Ok(())
            }
            // Note: the reply loop gives DataRows to `on_data_row` before this function, so
            // this arm (which decodes the message again) is the rare path; a function shared
            // by both that takes the decoded row measured ~110 instructions more per
            // `pipeline_atomic` query.
            Ok(reply @ Backend::DataRow(_)) => {
                release(reply);
                self.on_data_row(message, run, sink)
            }
            Ok(reply @ Backend::CommandComplete(done)) => {
                release(reply);
                let Some(slot) = run.queue.front_mut() else {
                    return Err(self.reply_to_no_query());
                };
                if sink.wants_counts() {
                    slot.affected = done.rows().unwrap_or(0);
                }
                if run.mode == Mode::Atomic {
                    end_batch_query(run, sink);
                }
                Ok(())
            }
            Ok(reply @ Backend::EmptyQueryResponse) => {
                release(reply);
                if run.queue.is_empty() {
                    return Err(self.reply_to_no_query());
                }
                if run.mode == Mode::Atomic {
                    end_batch_query(run, sink);
                }
                Ok(())
            }
            Ok(reply @ Backend::ReadyForQuery(r)) => {
                release(reply);
                self.on_ready(r);
                match run.mode {
                    Mode::PerQuery => self.end_query(run, sink),
                    Mode::Atomic => self.end_batch_cycle(run),
                }
            }
            Ok(Backend::ErrorResponse(db)) => {
                let e = server_error(db);
                match run.mode {
                    Mode::PerQuery => self.fail_query(e, run),
                    Mode::Atomic => {
                        fail_batch(e, run);
                        Ok(())
                    }
                }
            }
            Ok(Backend::ParameterDescription(p)) => {
                if run.queue.is_empty() {
                    return Err(self.reply_to_no_query());
                }
                run.described_params = Some(p.types);
                Ok(())
            }
            Ok(Backend::RowDescription(d)) => {
                let columns = described_columns(&d);
                drop(d);
                self.on_described(run, columns)
            }
            Ok(reply @ Backend::NoData) => {
                release(reply);
                self.on_described(run, Vec::new())
            }
            Ok(other) => {
                drop(other);
                Err(self.protocol_error("an unexpected message in pipeline results"))
            }
            Err(e) => Err(self.decode_error(e)),
        }
    }

    /// A DataRow of the query at the front of the queue: to the sink, unless the query (or
    /// the atomic batch) already failed.
    #[inline(always)]
    fn on_data_row(
        &mut self,
        message: Received,
        run: &mut Run,
        sink: &mut dyn Sink,
    ) -> Result<(), Error> {
        let data = match self.stream.decode(message) {
            Ok(reply @ Backend::DataRow(data)) => {
                release(reply);
                data
            }
            Ok(other) => {
                drop(other);
                return Err(self.protocol_error("an unexpected message in pipeline results"));
            }
            Err(e) => return Err(self.decode_error(e)),
        };
        let Some(slot) = run.queue.front_mut() else {
            return Err(self.reply_to_no_query());
        };
        // Note: `failure` is only ever set in an atomic batch, which is then lost.
        if slot.error.is_some() || run.failure.is_some() {
            return Ok(());
        }
        let Some(statement) = resolve(slot, &run.local, &run.statements) else {
            return Ok(());
        };
        if let Err(e) = sink.row(slot.index, data, statement) {
            slot.error = Some(e);
        }
        Ok(())
    }

    /// The RowDescription (`columns`) or NoData that ends a template's description.
    fn on_described(&mut self, run: &mut Run, columns: Vec<Column>) -> Result<(), Error> {
        let Some(slot) = run.queue.front_mut() else {
            return Err(self.reply_to_no_query());
        };
        let params = run.described_params.take();
        described(slot, params, &mut run.local, &mut run.statements, columns);
        Ok(())
    }

    #[cold]
    fn reply_to_no_query(&mut self) -> Error {
        self.protocol_error("a reply to no query")
    }

    /// An error fails the query at the front of the queue (per query); the server skips the
    /// rest of its messages up to its Sync.
    fn fail_query(&mut self, e: Error, run: &mut Run) -> Result<(), Error> {
        let Some(slot) = run.queue.front_mut() else {
            return Err(self.reply_to_no_query());
        };
        parse_failed(slot, &mut run.local);
        slot.error.get_or_insert(e);
        Ok(())
    }

    /// A ReadyForQuery ends the query at the front of the queue (per query).
    fn end_query(&mut self, run: &mut Run, sink: &mut dyn Sink) -> Result<(), Error> {
        let Some(slot) = run.queue.pop_front() else {
            return Err(self.reply_to_no_query());
        };
        let index = slot.index;
        sink.done(index, slot_result(slot, &run.local));
        Ok(())
    }

    /// Caches the templates this pipeline prepared, or closes those that drifted.
    fn finish_pipeline(&mut self, run: &Run) {
        for template in &run.described {
            self.unconfirmed.retain(|n| n != template.name);
            match run.local.get(template.name) {
                Some(Local::Ready(i)) => {
                    let statement = run.statements[*i as usize].clone();
                    let evicted = self.cache.insert_template(template.name, statement);
                    for name in evicted {
                        close_statement(&mut self.stream, &name);
                    }
                }
                Some(Local::Drift(_)) => close_statement(&mut self.stream, template.name),
                _ => {}
            }
        }
    }
}

/// The result of a query whose replies are all read.
fn slot_result(slot: Slot, local: &Locals) -> Result<u64, Error> {
    match slot.error {
        Some(e) => Err(e),
        // Note: a slot bound to a ready statement cannot have drifted.
        None if slot.statement != UNRESOLVED => Ok(slot.affected),
        None => match slot.template.map(|t| local.get(t.name)) {
            Some(Some(Local::Drift(message))) => {
                Err(Error::new(Kind::SchemaDrift, message.clone()))
            }
            _ => Ok(slot.affected),
        },
    }
}

/// Marks the template whose Parse + Describe `slot` carries as failed: the server refused
/// the Parse, or skipped it after an earlier error.
fn parse_failed(slot: &Slot, local: &mut Locals) {
    if let (true, Some(template)) = (slot.describes, slot.template)
        && let Some(state @ Local::Describing) = local.get_mut(template.name)
    {
        *state = Local::Failed;
    }
}

/// The statement a slot's rows are decoded with.
#[inline]
fn resolve<'s>(slot: &Slot, local: &Locals, statements: &'s [Statement]) -> Option<&'s Statement> {
    let i = match slot.statement {
        UNRESOLVED => match local.get(slot.template?.name) {
            Some(Local::Ready(i)) => *i,
            _ => return None,
        },
        i => i,
    };
    statements.get(i as usize)
}

/// Records a template's description (`params` from its ParameterDescription), checked
/// against its expectations.
fn described(
    slot: &Slot,
    params: Option<Vec<crate::Oid>>,
    local: &mut Locals,
    statements: &mut Vec<Statement>,
    columns: Vec<Column>,
) {
    let (Some(template), Some(params)) = (slot.template, params) else {
        return;
    };
    let state = match check_drift(template, &params, &columns) {
        Ok(()) => {
            statements.push(template_statement(template, template.name, params, columns));
            Local::Ready(index_of_last(statements))
        }
        Err(e) => Local::Drift(e.to_string()),
    };
    local.insert(template.name, state);
}

/// The index of the last statement, as a slot stores it.
fn index_of_last(statements: &[Statement]) -> u32 {
    // Note: a pipeline has at most one statement per query, and its queries are counted in
    // `usize`; more than `u32::MAX - 1` distinct statements cannot be prepared on one server.
    u32::try_from(statements.len() - 1).unwrap_or(UNRESOLVED - 1)
}

/// The fewest bytes the server answers a per-query cycle with: ReadyForQuery (6 bytes).
const CYCLE_MIN: usize = 6;

/// The fewest bytes the server answers a per-query cycle that carries a Bind with: an
/// ErrorResponse (at least 6 bytes) or BindComplete and an end of the portal (at least 10),
/// then ReadyForQuery.
const BOUND_CYCLE_MIN: usize = 12;

impl Run {
    /// A lower bound on the bytes the server still owes for the cycles sent so far (`sent`
    /// bytes cover them), for [`Stream::receive_sending`](super::stream::Stream::receive_sending)
    /// to wait for: per query, one Sync each, every cycle whose Sync went out and is not
    /// answered yet. The query at the front may have been answered up to its ReadyForQuery;
    /// a query whose Bind was not sent (its error is the client's) is answered by
    /// ReadyForQuery alone. 0 (wake at the first byte) in an atomic batch, and while a
    /// template is described.
    fn owed(&self, sent: u64) -> usize {
        if self.mode != Mode::PerQuery || self.waiting.is_some() {
            return 0;
        }
        let mut owed = 0;
        for (i, slot) in self.queue.iter().enumerate() {
            if slot.synced_at > sent || slot.describes || owed >= MAX_OWED {
                break;
            }
            owed += if i == 0 || slot.error.is_some() {
                CYCLE_MIN
            } else {
                BOUND_CYCLE_MIN
            };
        }
        owed
    }

    /// The index of `statement` in `statements`, added unless it is the last one added.
    fn intern(&mut self, statement: &Statement) -> u32 {
        if let Some(last) = self.statements.last()
            && last.same(statement)
        {
            return index_of_last(&self.statements);
        }
        self.statements.push(statement.clone());
        index_of_last(&self.statements)
    }
}

/// After a per-query pipeline lost its connection: each query not answered yet fails, as
/// outcome unknown when its Sync went out (`sent` bytes cover it), else as not run. Queries
/// answered before the loss keep their results.
fn report_lost(cause: &Error, sent: u64, run: &mut Run, jobs: &mut dyn Jobs, sink: &mut dyn Sink) {
    let not_run = || {
        Error::new(
            Kind::Closed,
            format!(
                "the query was not sent before the connection was lost ({cause}); it did not run"
            ),
        )
    };
    for slot in run.queue.drain(..) {
        let e = if sent >= slot.synced_at {
            Error::new(
                Kind::Closed,
                format!("the connection was lost before the query's result was read ({cause})"),
            )
            .outcome_unknown()
        } else {
            not_run()
        };
        sink.done(slot.index, Err(e));
    }
    let mut index = run.next_index;
    while jobs.advance() {
        sink.done(index, Err(not_run()));
        index += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(synced_at: u64, error: bool, describes: bool) -> Slot {
        Slot {
            index: 0,
            statement: 0,
            template: None,
            describes,
            error: error.then(|| Error::new(Kind::Usage, "a client-side failure")),
            affected: 0,
            synced_at,
        }
    }

    fn run(mode: Mode, slots: Vec<Slot>) -> Run {
        Run::new(mode, slots.into())
    }

    #[test]
    fn a_per_query_pipeline_is_owed_the_least_its_sent_cycles_are_answered_with() {
        let slots = || {
            vec![
                slot(10, false, false),
                slot(20, false, false),
                slot(30, true, false),
                slot(40, false, false),
                slot(u64::MAX, false, false),
            ]
        };
        // The front: its ReadyForQuery at least; a Bind sent: 12; the client's failure: 6.
        assert_eq!(run(Mode::PerQuery, slots()).owed(40), 6 + 12 + 6 + 12);
        // Only what was sent is owed.
        assert_eq!(run(Mode::PerQuery, slots()).owed(25), 6 + 12);
        assert_eq!(run(Mode::PerQuery, slots()).owed(5), 0);
        // A template being described stops the count; an atomic batch owes one reply.
        let describing = vec![slot(10, false, false), slot(20, false, true)];
        assert_eq!(run(Mode::PerQuery, describing).owed(40), 6);
        assert_eq!(run(Mode::Atomic, slots()).owed(40), 0);
        let mut waiting = run(Mode::PerQuery, slots());
        waiting.waiting = Some(Template::leak("SELECT 1", &[], &[]).unwrap());
        assert_eq!(waiting.owed(40), 0);
    }
}
