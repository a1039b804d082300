//! Where rows go: the one interface through which every flow that reads rows hands them
//! on — a compiled query run alone (`fetch_all`, `fetch_optional`, `for_each`, `execute`, …;
//! see [`Connection::read_rows`](super::Connection::read_rows)) and a pipeline, query by
//! query (see [`pipeline`](super::pipeline)).
//!
//! Note: the flows take their sink as `&mut dyn RowSink`, so the reading loops are compiled
//! once, not once per row type; each sink is generic over its row type, so a row is decoded
//! with static dispatch, behind one virtual call per row.

use super::Statement;
use crate::error::Error;
use crate::proto::message::DataRow;

/// Receives the rows of one query, or of a pipeline's queries in order, and the end of
/// each query of a pipeline. Any `FnMut(DataRow, &Statement) -> Result<(), Error>` is one
/// (it ignores the query index).
pub(crate) trait RowSink {
    /// A row of query `query` (its index in a pipeline, counted from 0; 0 for a query run
    /// alone). An error becomes that query's error, and the rest of its rows are skipped.
    fn row(&mut self, query: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error>;

    /// The end of query `query` of a pipeline: the rows affected, or its error. (A query
    /// run alone returns its result itself.)
    fn done(&mut self, query: usize, result: Result<u64, Error>) {
        let _ = (query, result);
    }

    /// Whether [`RowSink::done`] uses the rows affected; when not, the command tag is not
    /// parsed.
    fn wants_counts(&self) -> bool {
        true
    }

    /// Told before the first row of a query run alone: about `rows` rows follow (counting
    /// that first one): the rows already received, or as many as the statement's last
    /// result had, if more. A guess, for reserving room.
    fn expect(&mut self, rows: usize) {
        let _ = rows;
    }

    /// Told before a pipeline runs: room for at least `queries` more results.
    fn reserve(&mut self, queries: usize) {
        let _ = queries;
    }
}

impl<F: FnMut(DataRow<'_>, &Statement) -> Result<(), Error>> RowSink for F {
    fn row(&mut self, _: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        self(data, statement)
    }
}
