//! The methods that run a compiled [`Query`]: `fetch_all`, `fetch_one`, `fetch_optional`,
//! `fetch` (a stream), `for_each` (no allocation per row) and `execute`.

use std::future::Future;

use futures_core::Stream;
use futures_util::FutureExt;

use super::cancel::timed;
use super::compiled::RowSink;
use super::{Connection, Executor, Statement, trace};
use crate::error::{Error, Kind};
use crate::proto::message::DataRow;
use crate::template::{Decoder, Query, RawRow, Template};
use crate::types::Oid;

impl<D: Decoder> Query<'_, D> {
    /// Runs the query and returns every row.
    pub async fn fetch_all(self, ex: &mut impl Executor) -> Result<Vec<D::Row>, Error> {
        let conn = ex.connection();
        let (template, params) = (self.template(), self.params());
        timed!(
            conn,
            trace::query(
                template.name,
                collect::<D>(conn, template, params),
                |rows| { count(rows.len()) }
            )
        )
    }

    /// Runs the query and returns its only row; an error ([`Error::is_row_count`]) when it
    /// returns none or several.
    ///
    /// Note: the future is [`fetch_optional`](Self::fetch_optional)'s, mapped: an `async fn`
    /// awaiting it would hold the query twice.
    pub fn fetch_one(self, ex: &mut impl Executor) -> impl Future<Output = Result<D::Row, Error>> {
        self.fetch_optional(ex).map(|row| match row? {
            Some(row) => Ok(row),
            None => Err(Error::new(
                Kind::RowCount,
                "fetch_one expected exactly one row, but the query returned none; use \
                 fetch_optional when the row may be missing",
            )),
        })
    }

    /// Runs the query and returns its row, if any; an error when it returns several.
    pub async fn fetch_optional(self, ex: &mut impl Executor) -> Result<Option<D::Row>, Error> {
        let conn = ex.connection();
        let (template, params) = (self.template(), self.params());
        timed!(
            conn,
            trace::query(
                template.name,
                at_most_one::<D>(conn, template, params),
                |row| { u64::from(row.is_some()) }
            )
        )
    }

    /// Runs the query and calls `f` with each decoded row as it arrives, without collecting
    /// them; returns the number of rows. An error from `f` stops the calls (the remaining rows
    /// are read and dropped) and is returned.
    pub async fn for_each_row(
        self,
        ex: &mut impl Executor,
        mut f: impl FnMut(D::Row) -> Result<(), Error>,
    ) -> Result<u64, Error> {
        let (template, params) = (self.template(), self.params());
        Query::<D>::visit(ex.connection(), template, params, |raw, columns| {
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
        let visit = Query::<D>::visit(ex.connection(), template, params, |_, _| Ok(()));
        trace::query(template.name, visit, |n| *n).await
    }

    /// Runs the query and calls `f` with each row borrowed from the read buffer, with the
    /// result column type OIDs: nothing is allocated per row. Read columns in order with
    /// [`RawRow::get_next`]. Returns the number of rows.
    pub async fn for_each(
        self,
        ex: &mut impl Executor,
        f: impl FnMut(&mut RawRow<'_>, &[Oid]) -> Result<(), Error>,
    ) -> Result<u64, Error> {
        let (template, params) = (self.template(), self.params());
        Query::<D>::visit(ex.connection(), template, params, f).await
    }

    async fn visit(
        conn: &mut Connection,
        template: &'static Template,
        params: &[&(dyn crate::Encode + Sync)],
        mut f: impl FnMut(&mut RawRow<'_>, &[Oid]) -> Result<(), Error>,
    ) -> Result<u64, Error> {
        timed!(conn, async {
            let statement = conn.start_template(template, params).await?;
            conn.read_rows(
                &statement,
                true,
                |data: DataRow<'_>, statement: &Statement| {
                    f(&mut RawRow::new(data), statement.column_oids())
                },
            )
            .await
        })
    }
}

async fn collect<D: Decoder>(
    conn: &mut Connection,
    template: &'static Template,
    params: &[&(dyn crate::Encode + Sync)],
) -> Result<Vec<D::Row>, Error> {
    let statement = conn.start_template(template, params).await?;
    let mut rows = Collect::<D>(Vec::new());
    conn.read_rows(&statement, false, &mut rows).await?;
    Ok(rows.0)
}

/// The rows of `fetch_all`, reserved for the rows already received.
struct Collect<D: Decoder>(Vec<D::Row>);

impl<D: Decoder> RowSink for &mut Collect<D> {
    fn row(&mut self, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        self.0
            .push(D::decode(&mut RawRow::new(data), statement.column_oids())?);
        Ok(())
    }

    fn expect(&mut self, rows: usize) {
        self.0.reserve(rows);
    }
}

async fn at_most_one<D: Decoder>(
    conn: &mut Connection,
    template: &'static Template,
    params: &[&(dyn crate::Encode + Sync)],
) -> Result<Option<D::Row>, Error> {
    let statement = conn.start_template(template, params).await?;
    let mut first = None;
    conn.read_rows(
        &statement,
        false,
        |data: DataRow<'_>, statement: &Statement| {
            if first.is_some() {
                return Err(Error::new(
                    Kind::RowCount,
                    "expected at most one row, but the query returned several; add a WHERE or \
                 LIMIT 1, or use fetch_all",
                ));
            }
            first = Some(D::decode(&mut RawRow::new(data), statement.column_oids())?);
            Ok(())
        },
    )
    .await?;
    Ok(first)
}

/// A row count for the tracing span.
pub(crate) fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}
