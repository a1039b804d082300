//! Where a shared client's replies go: each request has a [`Slot`], one allocation shared by
//! the waiting caller ([`Waiting`]) and the I/O task ([`ReplyTo`]). The I/O task gathers the
//! request's rows into it as they arrive ([`Collect`]), leaves the result there once the
//! request's last query has ended, and wakes the caller. A caller that stopped waiting (its
//! future was dropped) marks the slot abandoned: its rows are still read, in turn, and
//! dropped, and its result is dropped where it would have been left.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use crate::conn::Statement;
use crate::error::{Error, Kind};
use crate::proto::message::DataRow;
use crate::row::Row;
use crate::template::{Decoder, RawRow};
use crate::types::Oid;

/// The I/O task's view of a request's slot.
pub(crate) trait Reply: Send + Sync {
    /// A row of query `query` of the request (counted from 0).
    fn row(&self, query: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error>;
    /// The end of query `query`: the rows affected or returned, or its error.
    fn done(&self, query: usize, result: Result<u64, Error>);
    /// The request failed as a whole before all its queries ended.
    fn fail(&self, e: Error);
    /// Whether the caller stopped waiting (nothing needs to be sent for it any more).
    fn is_abandoned(&self) -> bool;
    /// Whether the result was left, or the caller has gone: nothing more is owed to it.
    fn is_settled(&self) -> bool;
}

/// A request's rows, gathered into what its caller gets back.
pub(crate) trait Collect: Send + 'static {
    /// What the caller gets.
    type Output: Send + 'static;
    fn row(&mut self, query: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error>;
    /// The end of query `query`; the request's result once its last query has ended.
    fn done(&mut self, query: usize, result: Result<u64, Error>) -> Option<Self::Output>;
    /// The result of a request that failed as a whole.
    fn failed(e: Error) -> Self::Output;
}

/// Gathers the rows of one query into what its caller gets back.
pub(crate) trait Gather: Send + 'static {
    /// What the caller gets.
    type Output: Send + 'static;
    fn row(&mut self, data: DataRow<'_>, statement: &Statement) -> Result<(), Error>;
    /// The result of a query that ended well, with `count` rows returned or affected.
    fn finish(self, count: u64) -> Result<Self::Output, Error>;
}

/// Where one request's result is gathered and left for its caller.
pub(crate) struct Slot<C: Collect> {
    state: Mutex<State<C>>,
    /// Set once the result was left or the caller has gone; read without the lock when the
    /// I/O task lets go of the slot.
    settled: AtomicBool,
}

struct State<C: Collect> {
    collect: C,
    /// The result, left for the caller.
    result: Option<C::Output>,
    /// The caller to wake when the result is left.
    waker: Option<Waker>,
    /// The caller stopped waiting.
    abandoned: bool,
}

impl<C: Collect> Slot<C> {
    /// A slot gathering with `collect`: the I/O task's end and the caller's.
    pub(crate) fn open(collect: C) -> (ReplyTo, Waiting<C>) {
        let slot = Arc::new(Slot {
            state: Mutex::new(State {
                collect,
                result: None,
                waker: None,
                abandoned: false,
            }),
            settled: AtomicBool::new(false),
        });
        let waiting = Waiting {
            slot: Arc::clone(&slot),
            finished: false,
        };
        (ReplyTo(slot), waiting)
    }

    fn lock(&self) -> MutexGuard<'_, State<C>> {
        // Note: every change to the state is complete before any call that could panic (a
        // row's decoder runs on `collect` alone), so a poisoned lock's data is consistent.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Leaves `result` for the caller (or drops it when the caller has gone) and wakes it.
    fn settle(&self, mut state: MutexGuard<'_, State<C>>, result: C::Output) {
        self.settled.store(true, Ordering::Release);
        if state.abandoned {
            drop(state);
            drop(result);
            return;
        }
        state.result = Some(result);
        let waker = state.waker.take();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<C: Collect> Reply for Slot<C> {
    fn row(&self, query: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        let mut state = self.lock();
        if state.abandoned {
            return Ok(());
        }
        state.collect.row(query, data, statement)
    }

    fn done(&self, query: usize, result: Result<u64, Error>) {
        let mut state = self.lock();
        if let Some(result) = state.collect.done(query, result) {
            self.settle(state, result);
        }
    }

    fn fail(&self, e: Error) {
        if self.is_settled() {
            return;
        }
        let state = self.lock();
        self.settle(state, C::failed(e));
    }

    fn is_abandoned(&self) -> bool {
        self.lock().abandoned
    }

    fn is_settled(&self) -> bool {
        self.settled.load(Ordering::Acquire)
    }
}

/// The I/O task's end of a request's slot. Dropped before the result was left (the request
/// was never run: the client closed), it leaves the caller the error of a closed client, so
/// no caller waits for a reply that will not come.
pub(crate) struct ReplyTo(Arc<dyn Reply>);

impl std::ops::Deref for ReplyTo {
    type Target = dyn Reply;
    fn deref(&self) -> &(dyn Reply + 'static) {
        &*self.0
    }
}

impl Drop for ReplyTo {
    fn drop(&mut self) {
        if !self.0.is_settled() {
            self.0.fail(super::closed());
        }
    }
}

/// The caller's end of a request's slot: a future of the request's result. Dropping it
/// abandons the request (see the module's docs).
pub(crate) struct Waiting<C: Collect> {
    slot: Arc<Slot<C>>,
    /// The result was taken: nothing is left to abandon.
    finished: bool,
}

impl<C: Collect> Future for Waiting<C> {
    type Output = C::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<C::Output> {
        let this = self.get_mut();
        let mut state = this.slot.lock();
        if let Some(result) = state.result.take() {
            drop(state);
            this.finished = true;
            return Poll::Ready(result);
        }
        match &state.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => state.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

impl<C: Collect> Drop for Waiting<C> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let mut state = self.slot.lock();
        state.abandoned = true;
        self.slot.settled.store(true, Ordering::Release);
        let waker = state.waker.take();
        let result = state.result.take();
        drop(state);
        drop((waker, result));
    }
}

/// The rows of a request of one query.
pub(crate) struct One<G: Gather> {
    gather: Option<G>,
}

impl<G: Gather> One<G> {
    pub(crate) fn new(gather: G) -> One<G> {
        One {
            gather: Some(gather),
        }
    }
}

impl<G: Gather> Collect for One<G> {
    type Output = Result<G::Output, Error>;

    fn row(&mut self, _: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        match &mut self.gather {
            Some(gather) => gather.row(data, statement),
            None => Ok(()),
        }
    }

    fn done(&mut self, _: usize, result: Result<u64, Error>) -> Option<Self::Output> {
        match (result, self.gather.take()) {
            (Ok(count), Some(gather)) => Some(gather.finish(count)),
            (Err(e), _) => Some(Err(e)),
            (Ok(_), None) => None,
        }
    }

    fn failed(e: Error) -> Self::Output {
        Err(e)
    }
}

/// The rows of a pipeline: each query's result, left once the last one ended.
pub(crate) struct Each<G: Gather> {
    parts: Vec<Part<G>>,
    left: usize,
}

/// One query of a pipeline: gathering its rows, or ended.
enum Part<G: Gather> {
    Gathering(G),
    Ended(Result<G::Output, Error>),
    /// Its gatherer taken, its result being made.
    Finishing,
}

/// A pipeline's result: each query's, or the error that failed them all.
pub(crate) type EachResult<O> = Result<Vec<Result<O, Error>>, Error>;

impl<G: Gather> Each<G> {
    /// The rows of `count` queries, each gathered by a gatherer `gather` makes.
    pub(crate) fn new(count: usize, gather: impl Fn() -> G) -> Each<G> {
        Each {
            parts: (0..count).map(|_| Part::Gathering(gather())).collect(),
            left: count,
        }
    }
}

impl<G: Gather> Collect for Each<G> {
    type Output = EachResult<G::Output>;

    fn row(&mut self, query: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        match self.parts.get_mut(query) {
            Some(Part::Gathering(gather)) => gather.row(data, statement),
            _ => Ok(()),
        }
    }

    fn done(&mut self, query: usize, result: Result<u64, Error>) -> Option<Self::Output> {
        let part = self.parts.get_mut(query)?;
        let ended = match (result, std::mem::replace(part, Part::Finishing)) {
            (Ok(count), Part::Gathering(gather)) => gather.finish(count),
            (Err(e), Part::Gathering(_)) => Err(e),
            (_, ended) => {
                // Note: the query had ended already; its result stays.
                *part = ended;
                return None;
            }
        };
        *part = Part::Ended(ended);
        self.left = self.left.saturating_sub(1);
        if self.left > 0 {
            return None;
        }
        let results = std::mem::take(&mut self.parts)
            .into_iter()
            .map(|part| match part {
                Part::Ended(result) => result,
                Part::Gathering(_) | Part::Finishing => Err(lost()),
            })
            .collect();
        Some(Ok(results))
    }

    fn failed(e: Error) -> Self::Output {
        Err(e)
    }
}

#[cold]
fn lost() -> Error {
    Error::new(
        Kind::Closed,
        "the query's result was lost; open a new client",
    )
}

/// How a compiled query's row is decoded: its decoder's `decode`, as a function pointer so a
/// gatherer is `'static` whatever lifetimes the decoder type carries.
pub(crate) type DecodeRow<R> = fn(&mut RawRow<'_>, &[Oid]) -> Result<R, Error>;

/// The rows of a compiled query, decoded.
pub(crate) struct Rows<R> {
    rows: Vec<R>,
    decode: DecodeRow<R>,
    /// The statement of the rows, kept from the first row: the count of a result that ends
    /// well becomes its rows hint, so the next result reserves room for as many rows at once
    /// (as a connection's `fetch_all` does) instead of growing its `Vec` row by row.
    statement: Option<Statement>,
}

impl<R> Rows<R> {
    /// The rows of a query decoded by `D`.
    pub(crate) fn of<D: Decoder<Row = R>>() -> Rows<R> {
        Rows {
            rows: Vec::new(),
            decode: D::decode,
            statement: None,
        }
    }
}

impl<R: Send + 'static> Gather for Rows<R> {
    type Output = Vec<R>;
    fn row(&mut self, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        if self.statement.is_none() {
            self.rows.reserve(statement.rows_hint());
            self.statement = Some(statement.clone());
        }
        match (self.decode)(&mut RawRow::new(data), statement.column_oids()) {
            Ok(row) => {
                self.rows.push(row);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
    fn finish(mut self, _: u64) -> Result<Vec<R>, Error> {
        // Note: stored only when it changed, so requests of the same statement on other
        // threads do not write its cache line each time.
        if let Some(statement) = &self.statement
            && statement.rows_hint() != self.rows.len()
        {
            statement.set_rows_hint(u64::try_from(self.rows.len()).unwrap_or(u64::MAX));
        }
        // Note: room was reserved for as many rows as the statement's last result had (as
        // a connection's `fetch_all` does, a much smaller result gives the room back).
        if self.rows.capacity() > 2 * self.rows.len().max(16) {
            self.rows.shrink_to_fit();
        }
        Ok(self.rows)
    }
}

/// The row of a compiled query that returns at most one; a second is an error.
pub(crate) struct AtMostOne<R> {
    row: Option<R>,
    decode: DecodeRow<R>,
}

impl<R> AtMostOne<R> {
    /// The row of a query decoded by `D`.
    pub(crate) fn of<D: Decoder<Row = R>>() -> AtMostOne<R> {
        AtMostOne {
            row: None,
            decode: D::decode,
        }
    }
}

impl<R: Send + 'static> Gather for AtMostOne<R> {
    type Output = Option<R>;
    fn row(&mut self, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        if self.row.is_some() {
            return Err(Error::new(
                Kind::RowCount,
                "expected at most one row, but the query returned several; add a WHERE or \
                 LIMIT 1, or use fetch_all",
            ));
        }
        self.row = Some((self.decode)(
            &mut RawRow::new(data),
            statement.column_oids(),
        )?);
        Ok(())
    }
    fn finish(self, _: u64) -> Result<Option<R>, Error> {
        Ok(self.row)
    }
}

/// The rows of run-time SQL.
pub(crate) struct SqlRows(pub(crate) Vec<Row>);

impl Gather for SqlRows {
    type Output = Vec<Row>;
    fn row(&mut self, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        match Row::new(statement.shared_columns().clone(), data) {
            Ok(row) => {
                self.0.push(row);
                Ok(())
            }
            Err(e) => Err(Error::with_source(
                Kind::Decode,
                "the server sent a row that does not match its description",
                e,
            )),
        }
    }
    fn finish(self, _: u64) -> Result<Vec<Row>, Error> {
        Ok(self.0)
    }
}

/// The number of rows affected; rows are not decoded.
pub(crate) struct Affected;

impl Gather for Affected {
    type Output = u64;
    fn row(&mut self, _: DataRow<'_>, _: &Statement) -> Result<(), Error> {
        Ok(())
    }
    fn finish(self, count: u64) -> Result<u64, Error> {
        Ok(count)
    }
}
