//! Where a shared client's replies go: each request carries a [`Reply`], fed by the I/O task
//! as the request's rows arrive, which sends the result to the waiting caller once the
//! request's last query has ended. A caller that stopped waiting (its future was dropped)
//! has dropped the receiving end: its rows are still read, in turn, and then dropped.

use tokio::sync::oneshot;

use crate::conn::Statement;
use crate::error::{Error, Kind};
use crate::proto::message::DataRow;
use crate::row::Row;
use crate::template::{Decoder, RawRow};
use crate::types::Oid;

/// The I/O task's view of a request's reply.
pub(crate) trait Reply: Send {
    /// A row of query `query` of the request (counted from 0).
    fn row(&mut self, query: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error>;
    /// The end of query `query`: the rows affected or returned, or its error.
    fn done(&mut self, query: usize, result: Result<u64, Error>);
    /// The request failed as a whole before all its queries ended.
    fn fail(&mut self, e: Error);
    /// Whether the caller stopped waiting (nothing needs to be sent for it any more).
    fn is_abandoned(&self) -> bool;
}

/// Gathers the rows of one query into what its caller gets back.
pub(crate) trait Gather: Send + 'static {
    /// What the caller gets.
    type Output: Send + 'static;
    fn row(&mut self, data: DataRow<'_>, statement: &Statement) -> Result<(), Error>;
    /// The result of a query that ended well, with `count` rows returned or affected.
    fn finish(self, count: u64) -> Result<Self::Output, Error>;
}

/// The reply of a request of one query.
pub(crate) struct One<G: Gather> {
    gather: Option<G>,
    to: Option<oneshot::Sender<Result<G::Output, Error>>>,
}

impl<G: Gather> One<G> {
    pub(crate) fn new(gather: G) -> (One<G>, oneshot::Receiver<Result<G::Output, Error>>) {
        let (to, from) = oneshot::channel();
        let one = One {
            gather: Some(gather),
            to: Some(to),
        };
        (one, from)
    }

    fn send(&mut self, result: Result<G::Output, Error>) {
        if let Some(to) = self.to.take() {
            // Note: an error means the caller stopped waiting; the result is dropped.
            let _ = to.send(result);
        }
    }
}

impl<G: Gather> Reply for One<G> {
    fn row(&mut self, _: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        match &mut self.gather {
            Some(gather) if self.to.is_some() => gather.row(data, statement),
            _ => Ok(()),
        }
    }

    fn done(&mut self, _: usize, result: Result<u64, Error>) {
        let result = match (result, self.gather.take()) {
            (Ok(count), Some(gather)) => gather.finish(count),
            (Err(e), _) => Err(e),
            (Ok(_), None) => return,
        };
        self.send(result);
    }

    fn fail(&mut self, e: Error) {
        self.send(Err(e));
    }

    fn is_abandoned(&self) -> bool {
        self.to.as_ref().is_none_or(oneshot::Sender::is_closed)
    }
}

/// The reply of a pipeline: each query's result, sent once the last one ended.
pub(crate) struct Each<G: Gather> {
    gathers: Vec<Option<G>>,
    results: Vec<Option<Result<G::Output, Error>>>,
    left: usize,
    to: Option<oneshot::Sender<EachResult<G::Output>>>,
}

/// A pipeline's result: each query's, or the error that failed them all.
pub(crate) type EachResult<O> = Result<Vec<Result<O, Error>>, Error>;

/// The receiving end of a pipeline's reply.
pub(crate) type EachReceiver<O> = oneshot::Receiver<EachResult<O>>;

impl<G: Gather> Each<G> {
    pub(crate) fn new(gathers: Vec<G>) -> (Each<G>, EachReceiver<G::Output>) {
        let (to, from) = oneshot::channel();
        let left = gathers.len();
        let each = Each {
            results: gathers.iter().map(|_| None).collect(),
            gathers: gathers.into_iter().map(Some).collect(),
            left,
            to: Some(to),
        };
        (each, from)
    }
}

impl<G: Gather> Reply for Each<G> {
    fn row(&mut self, query: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        match self.gathers.get_mut(query) {
            Some(Some(gather)) if self.to.is_some() => gather.row(data, statement),
            _ => Ok(()),
        }
    }

    fn done(&mut self, query: usize, result: Result<u64, Error>) {
        let gather = self.gathers.get_mut(query).and_then(Option::take);
        let result = match (result, gather) {
            (Ok(count), Some(gather)) => gather.finish(count),
            (Err(e), _) => Err(e),
            (Ok(_), None) => return,
        };
        if let Some(slot) = self.results.get_mut(query) {
            *slot = Some(result);
            self.left = self.left.saturating_sub(1);
        }
        if self.left == 0
            && let Some(to) = self.to.take()
        {
            let results = std::mem::take(&mut self.results)
                .into_iter()
                .map(|r| r.unwrap_or_else(|| Err(lost())))
                .collect();
            let _ = to.send(Ok(results));
        }
    }

    fn fail(&mut self, e: Error) {
        if let Some(to) = self.to.take() {
            let _ = to.send(Err(e));
        }
    }

    fn is_abandoned(&self) -> bool {
        self.to.as_ref().is_none_or(oneshot::Sender::is_closed)
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
}

impl<R> Rows<R> {
    /// The rows of a query decoded by `D`.
    pub(crate) fn of<D: Decoder<Row = R>>() -> Rows<R> {
        Rows {
            rows: Vec::new(),
            decode: D::decode,
        }
    }
}

impl<R: Send + 'static> Gather for Rows<R> {
    type Output = Vec<R>;
    fn row(&mut self, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        if self.rows.is_empty() {
            self.rows.reserve(statement.rows_hint());
        }
        match (self.decode)(&mut RawRow::new(data), statement.column_oids()) {
            Ok(row) => {
                self.rows.push(row);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
    fn finish(self, _: u64) -> Result<Vec<R>, Error> {
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
