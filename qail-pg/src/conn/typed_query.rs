//! The methods that run a compiled [`Query`]: `fetch_all`, `fetch_one`, `fetch_optional`,
//! `fetch` (a stream), `for_each` (no allocation per row) and `execute`.
//!
//! Every method hands its rows to one non-generic function, [`run`], through a
//! `&mut dyn RowSink`: the I/O, the time-out and the tracing span are compiled once in qail-pg
//! rather than once per row type, so what each `qail!` call site instantiates is a small
//! future and a sink, which keeps the build cost of many queries low.

use futures_core::Stream;

use super::client::reply::{Affected, AtMostOne as OneAtMost, Rows};
use super::row_sink::RowSink;
use super::timeout::timed;
use super::{Connection, RunTarget, Runner, Statement, trace};
use crate::Acquire;
use crate::error::{Error, Kind};
use crate::proto::message::DataRow;
use crate::template::{Decoder, Query, RawRow, Template};
use crate::types::Oid;

/// The row type must be `Send` (rows are handed over while the future is suspended in the
/// middle of the result); every type `qail!` generates is.
impl<D: Decoder<Row: Send>> Query<'_, D> {
    /// Runs the query and returns every row.
    ///
    /// `ex` is where it runs ([`Runner`], as for `fetch_one`, `fetch_optional` and `execute`):
    /// `&mut` a connection, transaction or pooled connection; `&mut` a
    /// [`Client`](crate::Client), shared with other tasks; or `&mut` a [`Pool`](crate::Pool)
    /// (`&mut &pool` from a shared reference), which lends a connection for the call.
    pub async fn fetch_all(self, ex: &mut impl Runner) -> Result<Vec<D::Row>, Error>
    where
        D::Row: 'static,
    {
        let mut lent;
        let conn = match ex.target() {
            RunTarget::Connection(conn) => conn,
            RunTarget::Pool(pool) => {
                lent = pool.acquire().await?;
                &mut *lent
            }
            RunTarget::Client(client) => {
                let (template, params) = (self.template, self.params.as_slice());
                return client.run_template(template, params, Rows::of::<D>()).await;
            }
        };
        let mut rows = Collect::<D>(conn.spare_rows.take());
        run(
            conn,
            self.template,
            self.params.as_slice(),
            false,
            &mut rows,
        )
        .await?;
        let mut rows = rows.0;
        conn.spare_rows.refill::<D::Row>(rows.len());
        // Note: room was reserved for as many rows as the statement's last result had.
        if rows.capacity() > 2 * rows.len().max(16) {
            rows.shrink_to_fit();
        }
        Ok(rows)
    }

    /// Runs the query and returns its only row; an error ([`Error::is_row_count`]) when it
    /// returns none or several.
    pub async fn fetch_one(self, ex: &mut impl Runner) -> Result<D::Row, Error>
    where
        D::Row: 'static,
    {
        // Note: the body of `fetch_optional`, not a call to it: awaiting it would compile a
        // second future per row type, in every crate with `qail!` queries.
        let mut lent;
        let conn = match ex.target() {
            RunTarget::Connection(conn) => conn,
            RunTarget::Pool(pool) => {
                lent = pool.acquire().await?;
                &mut *lent
            }
            RunTarget::Client(client) => {
                let (template, params) = (self.template, self.params.as_slice());
                let gather = OneAtMost::of::<D>();
                let row = client.run_template(template, params, gather).await?;
                return row.ok_or_else(no_row);
            }
        };
        let mut first = AtMostOne::<D>(None);
        run(
            conn,
            self.template,
            self.params.as_slice(),
            false,
            &mut first,
        )
        .await?;
        match first.0 {
            Some(row) => Ok(row),
            None => Err(no_row()),
        }
    }

    /// Runs the query and returns its row, if any; an error when it returns several.
    pub async fn fetch_optional(self, ex: &mut impl Runner) -> Result<Option<D::Row>, Error>
    where
        D::Row: 'static,
    {
        let mut lent;
        let conn = match ex.target() {
            RunTarget::Connection(conn) => conn,
            RunTarget::Pool(pool) => {
                lent = pool.acquire().await?;
                &mut *lent
            }
            RunTarget::Client(client) => {
                let (template, params) = (self.template, self.params.as_slice());
                let gather = OneAtMost::of::<D>();
                return client.run_template(template, params, gather).await;
            }
        };
        let mut first = AtMostOne::<D>(None);
        run(
            conn,
            self.template,
            self.params.as_slice(),
            false,
            &mut first,
        )
        .await?;
        Ok(first.0)
    }

    /// Runs the query and calls `f` with each decoded row as it arrives, without collecting
    /// them; returns the number of rows. An error from `f` stops the calls (the remaining rows
    /// are read and dropped) and is returned; [`Error::caller`] wraps an error of your own.
    pub async fn for_each_row(
        self,
        ex: impl Acquire,
        mut f: impl FnMut(D::Row) -> Result<(), Error> + Send,
    ) -> Result<u64, Error> {
        let mut sink = |data: DataRow<'_>, statement: &Statement| {
            f(D::decode(&mut RawRow::new(data), statement.column_oids())?)
        };
        run(
            &mut *ex.acquire().await?,
            self.template,
            self.params.as_slice(),
            false,
            &mut sink,
        )
        .await
    }

    /// Streams the rows: each is decoded as it is read from the socket, so the result is
    /// never buffered whole. Dropping the stream early is safe; the rest of the result is
    /// read and dropped before the connection's next use.
    pub fn fetch<'s, A: Acquire + 's>(self, ex: A) -> impl Stream<Item = Result<D::Row, Error>> + 's
    where
        Self: 's,
    {
        super::fetch_stream::rows::<D, A>(ex, self)
    }
}

impl<D> Query<'_, D> {
    /// Runs the query and returns the number of rows it affected (rows are not decoded).
    pub async fn execute(self, ex: &mut impl Runner) -> Result<u64, Error> {
        let mut lent;
        let conn = match ex.target() {
            RunTarget::Connection(conn) => conn,
            RunTarget::Pool(pool) => {
                lent = pool.acquire().await?;
                &mut *lent
            }
            RunTarget::Client(client) => {
                let (template, params) = (self.template, self.params.as_slice());
                return client.run_template(template, params, Affected).await;
            }
        };
        let mut sink = |_: DataRow<'_>, _: &Statement| Ok(());
        run(conn, self.template, self.params.as_slice(), true, &mut sink).await
    }

    /// Runs the query and calls `f` with each row borrowed from the read buffer, with the
    /// result column type OIDs: nothing is allocated per row. Read columns in order with
    /// [`RawRow::get_next`]. Returns the number of rows. An error from `f` stops the calls and
    /// is returned; [`Error::caller`] wraps an error of your own.
    pub async fn for_each(
        self,
        ex: impl Acquire,
        mut f: impl FnMut(&mut RawRow<'_>, &[Oid]) -> Result<(), Error> + Send,
    ) -> Result<u64, Error> {
        let mut sink = |data: DataRow<'_>, statement: &Statement| {
            f(&mut RawRow::new(data), statement.column_oids())
        };
        run(
            &mut *ex.acquire().await?,
            self.template,
            self.params.as_slice(),
            false,
            &mut sink,
        )
        .await
    }
}

/// The error of `fetch_one` when the query returned no row.
#[cold]
fn no_row() -> Error {
    Error::new(
        Kind::RowCount,
        "fetch_one expected exactly one row, but the query returned none; use fetch_optional \
         when the row may be missing",
    )
}

/// Runs `template` with `params` under the connection's time-out and the query's tracing
/// span, handing each row to `sink`. Returns the number of rows handed to `sink`, or with
/// `affected` the count in the command tag (rows inserted, updated or deleted), which is only
/// parsed then.
async fn run(
    conn: &mut Connection,
    template: &'static Template,
    params: &[crate::template::Arg<'_>],
    affected: bool,
    sink: &mut (dyn RowSink + Send),
) -> Result<u64, Error> {
    let span = trace::query_span(conn, || template.sql());
    let visit = async { timed!(conn, run_untimed(conn, template, params, affected, sink)) };
    trace::query(span, visit, |n| *n).await
}

/// [`run`] without the time-out and the span.
async fn run_untimed(
    conn: &mut Connection,
    template: &'static Template,
    params: &[crate::template::Arg<'_>],
    affected: bool,
    sink: &mut (dyn RowSink + Send),
) -> Result<u64, Error> {
    // Note: room for as many rows as last time is reserved while the server runs the query,
    // not after its rows arrived.
    let statement = conn
        .start_template_then(template, params, &mut |statement| {
            sink.expect(statement.rows_hint());
        })
        .await?;
    conn.read_rows(&statement, affected, sink).await
}

/// The rows of `fetch_all`, with room reserved for the rows expected.
struct Collect<D: Decoder>(Vec<D::Row>);

impl<D: Decoder> RowSink for Collect<D> {
    fn row(&mut self, _: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        // Note: a `match`, not `?`: this is compiled for every row type, and `?` would add
        // two functions per row type (`Try::branch`, `FromResidual::from_residual`).
        match D::decode(&mut RawRow::new(data), statement.column_oids()) {
            Ok(row) => {
                self.0.push(row);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    fn expect(&mut self, rows: usize) {
        self.0.reserve(rows);
    }
}

/// The row of `fetch_optional`; a second row is an error.
struct AtMostOne<D: Decoder>(Option<D::Row>);

impl<D: Decoder> RowSink for AtMostOne<D> {
    fn row(&mut self, _: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        if self.0.is_some() {
            return Err(Error::new(
                Kind::RowCount,
                "expected at most one row, but the query returned several; add a WHERE or \
                 LIMIT 1, or use fetch_all",
            ));
        }
        match D::decode(&mut RawRow::new(data), statement.column_oids()) {
            Ok(row) => {
                self.0 = Some(row);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
}
