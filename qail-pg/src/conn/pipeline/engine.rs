//! The engine of every pipeline: it encodes the jobs a chunk at a time, dispatches the
//! replies to the queries they answer and hands the rows to a [`RowSink`], in either mode
//! ([`Mode`]); a run's state is a [`Run`].

use super::atomic::{end_batch_query, fail_batch};
use super::mode::Mode;
use super::run::{Local, Run, Slot, UNRESOLVED, described, parse_failed, resolve, slot_result};
use crate::conn::compiled::bind_named;
use crate::conn::prepare::{close_statement, encode_error};
use crate::conn::row_sink::RowSink;
use crate::conn::stream::{Received, release};
use crate::conn::timeout::timed;
use crate::conn::{Connection, Statement, described_columns, server_error};
use crate::error::{Error, Kind};
use crate::proto::message::{Backend, EncodeError, bind_execute, flush, sync};
use crate::row::Column;
use crate::template::Template;
use crate::template::conformance::{check_bind_prefix, check_count};
use crate::types::{Oid, Param};

/// How many unsent bytes to encode ahead of the socket.
const CHUNK: usize = 64 * 1024;

/// The most results reserved up front, whatever the iterator claims.
const RESERVE_LIMIT: usize = 1 << 16;

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
/// and its [`RowSink`] as `dyn`, so it is compiled once, not once per query type and sink; the
/// generic part of a run is [`InHand`] and the loop that awaits the socket. The
/// erased values are never held across an `await`, so a run's future is `Send` whenever its
/// jobs and sink are.
trait Jobs {
    /// Takes the next job in hand; false when there is none (for a [`Feed`]: none yet).
    fn advance(&mut self, conn: &mut Connection) -> bool;
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

/// The source of the job in hand (the engine asks only while one is).
fn source<J: Job>(job: Option<&J>) -> Source<'_> {
    job.expect("a job is in hand when the engine asks for it")
        .source()
}

/// How many parameters the job in hand has (none without one).
fn param_count<J: Job>(job: Option<&J>) -> usize {
    job.map_or(0, |job| job.params().len())
}

/// Bind + Execute of `job` (the one in hand) to `buf`.
fn write_bind<J: Job>(
    job: Option<&J>,
    buf: &mut Vec<u8>,
    to: BindTo<'_>,
) -> Result<(), EncodeError> {
    let params = job.map_or(&[][..], Job::params);
    match to {
        BindTo::Prefix(prefix, types) => bind_execute(buf, prefix, params, types),
        BindTo::Named(name, types) => bind_named(buf, name, types, params),
    }
}

impl<I: Iterator<Item: Job>> Jobs for InHand<I> {
    fn advance(&mut self, _: &mut Connection) -> bool {
        self.job = self.jobs.next();
        self.job.is_some()
    }
    fn source(&self) -> Source<'_> {
        source(self.job.as_ref())
    }
    fn param_count(&self) -> usize {
        param_count(self.job.as_ref())
    }
    fn write_bind(&self, buf: &mut Vec<u8>, to: BindTo<'_>) -> Result<(), EncodeError> {
        write_bind(self.job.as_ref(), buf, to)
    }
    fn remaining_hint(&self) -> usize {
        self.jobs.size_hint().0
    }
}

/// Jobs that arrive while their pipeline runs (a shared client's requests): the run takes
/// each as it comes, writing it while the replies to earlier jobs are read, and ends when
/// nothing is owed and no job is ready.
pub(crate) trait Feed {
    /// One job.
    type Job: Job;
    /// The next job ready to be written now, if any.
    fn next(&mut self, conn: &mut Connection) -> Option<Self::Job>;
    /// Waits until [`Feed::next`] may have a job; never ends while it will not (so a run
    /// waiting on the socket is not woken for nothing). Cancel safe.
    fn arrival(&mut self) -> impl Future<Output = ()> + Send;
}

/// The jobs of a [`Feed`], the last one taken in hand.
struct Fed<'f, F: Feed> {
    feed: &'f mut F,
    job: Option<F::Job>,
}

impl<F: Feed> Jobs for Fed<'_, F> {
    fn advance(&mut self, conn: &mut Connection) -> bool {
        self.job = self.feed.next(conn);
        self.job.is_some()
    }
    fn source(&self) -> Source<'_> {
        source(self.job.as_ref())
    }
    fn param_count(&self) -> usize {
        param_count(self.job.as_ref())
    }
    fn write_bind(&self, buf: &mut Vec<u8>, to: BindTo<'_>) -> Result<(), EncodeError> {
        write_bind(self.job.as_ref(), buf, to)
    }
    fn remaining_hint(&self) -> usize {
        0
    }
}

/// Where a run's engine stopped.
enum Step {
    /// It needs more replies: at least this many bytes are owed (see [`Run::owed`]).
    Receive(usize),
    /// The run ended (its loss, when it failed).
    End(Result<(), Error>),
}

/// What [`Connection::encode_template`] queued.
enum Encoded {
    /// Bind + Execute.
    Bound,
    /// Parse + Describe + Flush of the template: the job waits for the description.
    Describing,
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
        sink: &mut impl RowSink,
        mode: Mode,
    ) -> Result<(), Error> {
        timed!(self, self.run_pipeline_untimed(jobs, sink, mode), |fut| fut)
    }

    async fn run_pipeline_untimed<J: Job>(
        &mut self,
        jobs: impl IntoIterator<Item = J>,
        sink: &mut impl RowSink,
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

    /// Runs the jobs of `feed` as one per-query pipeline, handing the results to `sink`:
    /// jobs that become ready while replies are awaited are written at once (while the
    /// server has [`Run::busy`] queries in hand: after the other tasks ready to run had their
    /// turn, with the jobs they made ready), and the run
    /// ends when every reply is read and no job is ready. The connection's query time-out
    /// applies to the whole run (the feed bounds how long it takes jobs).
    pub(crate) async fn run_feed<F: Feed>(
        &mut self,
        feed: &mut F,
        sink: &mut impl RowSink,
    ) -> Result<(), Error> {
        timed!(self, self.run_feed_untimed(feed, sink), |fut| fut)
    }

    async fn run_feed_untimed<F: Feed>(
        &mut self,
        feed: &mut F,
        sink: &mut impl RowSink,
    ) -> Result<(), Error> {
        self.ready_without_reset().await?;
        let mut jobs = Fed { feed, job: None };
        let mut run = self.start_run(Mode::PerQuery, &jobs, sink);
        let mut held_back = false;
        loop {
            // Note: jobs that were not ready at the last step may be now.
            run.more = true;
            let owed = match self.advance_run(&mut run, &mut jobs, sink) {
                Step::Receive(owed) => owed,
                Step::End(ended) => return self.end_run(run, ended, &mut jobs, sink),
            };
            if !held_back && self.stream.unsent() > 0 && run.busy(self.stream.sent_total()) {
                // Note: the server is still busy with queries written earlier, so the new
                // ones would wait there anyway: let the tasks ready to run queue theirs
                // first, and write them all in one system call. Written at once, every
                // arrival cost a write (and a wake-up of the server's backend) of its own.
                held_back = true;
                tokio::task::yield_now().await;
                continue;
            }
            held_back = false;
            let received = tokio::select! {
                biased;
                received = self.stream.receive_sending(owed) => received,
                () = jobs.feed.arrival() => Ok(()),
            };
            if let Err(e) = received {
                return self.end_run(run, Err(e), &mut jobs, sink);
            }
        }
    }

    fn start_run(&mut self, mode: Mode, jobs: &dyn Jobs, sink: &mut dyn RowSink) -> Run {
        sink.reserve(jobs.remaining_hint().min(RESERVE_LIMIT));
        // Note: the queue's memory is the connection's, reused by the next pipeline.
        let mut queue = std::mem::take(&mut self.spare_slots);
        queue.clear();
        Run::new(mode, queue)
    }

    /// Encodes jobs and handles the replies received, until the run needs more replies or
    /// ends.
    fn advance_run(&mut self, run: &mut Run, jobs: &mut dyn Jobs, sink: &mut dyn RowSink) -> Step {
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
                if !jobs.advance(self) {
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
        sink: &mut dyn RowSink,
    ) -> Result<(), Error> {
        if let Err(e) = ended {
            if run.mode == Mode::PerQuery && e.is_closed() {
                // Note: a job waiting for its template's description has its slot queued.
                let sent = self.stream.sent_total();
                report_lost(&e, sent, &mut run, jobs, sink, self);
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
                self.session_changed = true;
                slot.statement = run.intern(statement);
                self.encode_bind(statement.name(), statement.params(), job)
            }
            Source::Template(template) => {
                self.session_changed |= template.changes_session;
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
        .map_err(encode_error)
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
            return Err(encode_error(e));
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
        sink: &mut dyn RowSink,
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
        sink: &mut dyn RowSink,
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
    fn end_query(&mut self, run: &mut Run, sink: &mut dyn RowSink) -> Result<(), Error> {
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

/// After a per-query pipeline lost its connection: each query not answered yet fails, as
/// outcome unknown when its Sync went out (`sent` bytes cover it), else as not run. Queries
/// answered before the loss keep their results.
fn report_lost(
    cause: &Error,
    sent: u64,
    run: &mut Run,
    jobs: &mut dyn Jobs,
    sink: &mut dyn RowSink,
    conn: &mut Connection,
) {
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
    while jobs.advance(conn) {
        sink.done(index, Err(not_run()));
        index += 1;
    }
}
