//! The methods that run a compiled [`Query`]: `fetch_all`, `fetch_one`, `fetch_optional`,
//! `fetch` (a stream), `for_each` (no allocation per row) and `execute`.

use futures_core::Stream;

use super::cancel::timed;
use super::{Connection, Executor, trace};
use crate::error::{Error, Kind};
use crate::template::{Decoder, Query, RawRow, Template};
use crate::types::Oid;

/// Receives each row of a compiled query, borrowed from the read buffer.
///
/// Every method below hands its per-row work to [`run`] through this one trait-object type,
/// so the I/O, the time-out and the tracing span are compiled once in qail-pg rather than
/// once per row type: the code a `qail!` call site instantiates is a closure and a small
/// future, which keeps the build cost of many queries low.
type Sink<'s> = &'s mut (dyn FnMut(&mut RawRow<'_>, &[Oid]) -> Result<(), Error> + Send);

/// The row type must be `Send` (rows are handed over while the future is suspended in the
/// middle of the result); every type `qail!` generates is.
impl<D: Decoder<Row: Send>> Query<'_, D> {
    /// Runs the query and returns every row.
    pub async fn fetch_all(self, ex: &mut impl Executor) -> Result<Vec<D::Row>, Error> {
        let mut rows = Vec::new();
        run(
            ex.connection(),
            self.template(),
            self.params(),
            &mut |raw, columns| {
                rows.push(D::decode(raw, columns)?);
                Ok(())
            },
        )
        .await?;
        Ok(rows)
    }

    /// Runs the query and returns its only row; an error ([`Error::is_row_count`]) when it
    /// returns none or several.
    pub async fn fetch_one(self, ex: &mut impl Executor) -> Result<D::Row, Error> {
        match self.fetch_optional(ex).await? {
            Some(row) => Ok(row),
            None => Err(Error::new(
                Kind::RowCount,
                "fetch_one expected exactly one row, but the query returned none; use \
                 fetch_optional when the row may be missing",
            )),
        }
    }

    /// Runs the query and returns its row, if any; an error when it returns several.
    pub async fn fetch_optional(self, ex: &mut impl Executor) -> Result<Option<D::Row>, Error> {
        let mut first = None;
        run(
            ex.connection(),
            self.template(),
            self.params(),
            &mut |raw, columns| {
                if first.is_some() {
                    return Err(several_rows());
                }
                first = Some(D::decode(raw, columns)?);
                Ok(())
            },
        )
        .await?;
        Ok(first)
    }

    /// Runs the query and calls `f` with each decoded row as it arrives, without collecting
    /// them; returns the number of rows. An error from `f` stops the calls (the remaining rows
    /// are read and dropped) and is returned.
    pub async fn for_each_row(
        self,
        ex: &mut impl Executor,
        mut f: impl FnMut(D::Row) -> Result<(), Error> + Send,
    ) -> Result<u64, Error> {
        let (template, params) = (self.template(), self.params());
        run(ex.connection(), template, params, &mut |raw, columns| {
            f(D::decode(raw, columns)?)
        })
        .await
    }

    /// Streams the rows: each is decoded as it is read from the socket, so the result is
    /// never buffered whole. Dropping the stream early is safe; the rest of the result is
    /// read and dropped before the connection's next use.
    pub fn fetch<'s>(
        self,
        ex: &'s mut impl Executor,
    ) -> impl Stream<Item = Result<D::Row, Error>> + 's
    where
        Self: 's,
    {
        super::fetch_stream::rows::<D>(ex.connection(), self)
    }
}

impl<D> Query<'_, D> {
    /// Runs the query and returns the number of rows it affected (rows are not decoded).
    pub async fn execute(self, ex: &mut impl Executor) -> Result<u64, Error> {
        let (template, params) = (self.template(), self.params());
        run(ex.connection(), template, params, &mut |_, _| Ok(())).await
    }

    /// Runs the query and calls `f` with each row borrowed from the read buffer, with the
    /// result column type OIDs: nothing is allocated per row. Read columns in order with
    /// [`RawRow::get_next`]. Returns the number of rows.
    pub async fn for_each(
        self,
        ex: &mut impl Executor,
        mut f: impl FnMut(&mut RawRow<'_>, &[Oid]) -> Result<(), Error> + Send,
    ) -> Result<u64, Error> {
        let (template, params) = (self.template(), self.params());
        run(ex.connection(), template, params, &mut f).await
    }
}

/// Runs `template` with `params` under the connection's time-out and the query's tracing
/// span, handing each row to `sink`. Returns the row count the server reported (rows
/// affected, or rows returned).
async fn run(
    conn: &mut Connection,
    template: &'static Template,
    params: &[&(dyn crate::Encode + Sync)],
    sink: Sink<'_>,
) -> Result<u64, Error> {
    let visit = async {
        timed!(conn, async {
            let statement = conn.start_template(template, params).await?;
            conn.read_rows(&statement, true, |data, statement| {
                sink(&mut RawRow::new(data), statement.column_oids())
            })
            .await
        })
    };
    trace::query(template.name, visit, |n| *n).await
}

fn several_rows() -> Error {
    Error::new(
        Kind::RowCount,
        "expected at most one row, but the query returned several; add a WHERE or LIMIT 1, or \
         use fetch_all",
    )
}
