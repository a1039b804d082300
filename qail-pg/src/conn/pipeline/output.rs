//! [`QueryOutput`]: what each compiled query of [`Connection::pipeline`] and
//! [`Connection::pipeline_atomic`] gives back — its rows, or for a statement without rows
//! the number of rows it affected.

use super::mode::Mode;
use super::results::{QueryResults, take_rows};
use crate::conn::row_sink::RowSink;
use crate::conn::{Connection, Statement};
use crate::error::Error;
use crate::proto::message::DataRow;
use crate::template::{Decoder, NoRows, Query, RawRow};
use crate::types::Oid;

/// What one compiled query of a pipeline gives back: for a query with rows (its row type is
/// a [`Decoder`]) the rows, `Vec<Row>`; for a statement without rows ([`NoRows`]: an
/// INSERT, UPDATE or DELETE without RETURNING) the number of rows it affected, `u64`, as
/// [`Pipeline::count`](super::Pipeline::count) returns.
///
/// ```no_run
/// # async fn run(conn: &mut qail_pg::Connection,
/// #     inserts: Vec<qail_pg::Query<'_, qail_pg::NoRows>>) -> Result<(), qail_pg::Error> {
/// let inserted: Vec<u64> = conn.pipeline_atomic(inserts).await?; // one count per INSERT
/// # Ok(()) }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is neither a row type nor `NoRows`, so a pipeline cannot run its queries",
    note = "pipeline queries made with `qail!`, whose row type is generated, or derive `QailRow` for the row type"
)]
pub trait QueryOutput {
    /// `Vec` of the rows, or `u64` rows affected.
    type Output: Send + 'static;
    /// The rows of the query being read.
    #[doc(hidden)]
    type Rows: Default + Send;
    /// Whether the output uses the count of rows affected (else it is not parsed).
    #[doc(hidden)]
    const AFFECTED: bool;
    /// Adds a row of the query being read.
    #[doc(hidden)]
    fn row(rows: &mut Self::Rows, row: &mut RawRow<'_>, columns: &[Oid]) -> Result<(), Error>;
    /// The output of the query just read, `affected` the count in its command tag (0 unless
    /// [`AFFECTED`](QueryOutput::AFFECTED)); leaves `rows` empty.
    #[doc(hidden)]
    fn output(rows: &mut Self::Rows, affected: u64) -> Self::Output;
}

#[diagnostic::do_not_recommend]
impl<D: Decoder<Row: Send + 'static>> QueryOutput for D {
    type Output = Vec<D::Row>;
    type Rows = Vec<D::Row>;
    const AFFECTED: bool = false;

    #[inline]
    fn row(rows: &mut Vec<D::Row>, row: &mut RawRow<'_>, columns: &[Oid]) -> Result<(), Error> {
        // Note: a `match`, not `?`, as in the other sinks compiled per row type.
        match D::decode(row, columns) {
            Ok(row) => {
                rows.push(row);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    #[inline]
    fn output(rows: &mut Vec<D::Row>, _: u64) -> Vec<D::Row> {
        take_rows(rows)
    }
}

impl QueryOutput for NoRows {
    type Output = u64;
    type Rows = ();
    const AFFECTED: bool = true;

    fn row(_: &mut (), _: &mut RawRow<'_>, _: &[Oid]) -> Result<(), Error> {
        Ok(())
    }

    fn output(_: &mut (), affected: u64) -> u64 {
        affected
    }
}

/// Collects each query's [`QueryOutput`].
struct Outputs<D: QueryOutput, R> {
    rows: D::Rows,
    results: R,
}

impl<D: QueryOutput, R: QueryResults<D::Output>> RowSink for Outputs<D, R> {
    fn row(&mut self, _: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        D::row(
            &mut self.rows,
            &mut RawRow::new(data),
            statement.column_oids(),
        )
    }
    fn done(&mut self, _: usize, result: Result<u64, Error>) {
        // Note: the rows are taken also when the query failed, so none is left for the next.
        let output = D::output(&mut self.rows, *result.as_ref().unwrap_or(&0));
        self.results.push(result.map(|_| output));
    }
    fn wants_counts(&self) -> bool {
        D::AFFECTED
    }
    fn reserve(&mut self, queries: usize) {
        self.results.reserve(queries);
    }
}

impl Connection {
    /// Runs compiled queries in `mode`, collecting each query's output into `R` (which
    /// `wrap` makes of a results vector and `unwrap` gives back) in the vector the connection
    /// kept from its last pipeline, and keeps that vector's memory for the next one.
    pub(super) async fn outputs<'q, D, R, T>(
        &mut self,
        queries: impl IntoIterator<Item = Query<'q, D>>,
        mode: Mode,
        wrap: fn(Vec<T>) -> R,
        unwrap: fn(R) -> Vec<T>,
    ) -> Result<Vec<T>, Error>
    where
        D: QueryOutput,
        R: QueryResults<D::Output>,
        T: Send + 'static,
    {
        let mut sink = Outputs::<D, R> {
            rows: D::Rows::default(),
            results: wrap(self.spare_results.take()),
        };
        self.run_pipeline(queries, &mut sink, mode).await?;
        let results = unwrap(sink.results);
        self.spare_results.refill::<T>(results.len());
        Ok(results)
    }
}
