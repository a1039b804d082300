//! Where a pipeline puts each query's result when the query ends: every result with its
//! error ([`Each`], per query), or only the values ([`All`], atomic); and the reuse of a
//! query's row buffer ([`take_rows`]). The sinks of compiled queries, run-time SQL and counts
//! all fill these.

use crate::error::Error;

/// The results a pipeline returns, one per query (its rows, or its count): each with its
/// error ([`Each`], per query), or the values of an atomic pipeline, which has no per-query
/// errors ([`All`]). A sink puts each query's result here when the query ends.
pub(super) trait QueryResults<T> {
    fn push(&mut self, result: Result<T, Error>);
    fn reserve(&mut self, queries: usize);
}

/// Every query's result, errors included.
pub(super) struct Each<T>(pub(super) Vec<Result<T, Error>>);

impl<T> QueryResults<T> for Each<T> {
    fn push(&mut self, result: Result<T, Error>) {
        self.0.push(result);
    }
    fn reserve(&mut self, queries: usize) {
        self.0.reserve(queries);
    }
}

/// The values of an atomic pipeline: its sink sees only successful queries.
pub(super) struct All<T>(pub(super) Vec<T>);

impl<T> QueryResults<T> for All<T> {
    fn push(&mut self, result: Result<T, Error>) {
        if let Ok(value) = result {
            self.0.push(value);
        }
    }
    fn reserve(&mut self, queries: usize) {
        self.0.reserve(queries);
    }
}

/// Above this many rows a query's buffer becomes its result as it is, instead of a copy.
const COPY_LIMIT: usize = 64;

/// Takes a query's rows out of the sink's buffer: a few rows are moved into a vector of
/// exactly their size (one allocation, none for no rows) and the buffer, which has grown to
/// the largest query so far, is kept for the next query; many rows take the buffer itself.
pub(super) fn take_rows<T>(buffer: &mut Vec<T>) -> Vec<T> {
    if buffer.len() > COPY_LIMIT {
        std::mem::take(buffer)
    } else {
        // Note: not `mem::take`, which would give the buffer away with its spare room.
        let mut rows = Vec::with_capacity(buffer.len());
        rows.append(buffer);
        rows
    }
}
