//! The public faces of the pipeline: typed queries, counts and run-time SQL, per query or
//! atomic. The builder for queries of different row types is in [`super::builder`].

use super::{Job, Mode, Sink, Source};
use crate::conn::compiled::Params;
use crate::conn::{Connection, Statement};
use crate::error::{Error, Kind};
use crate::proto::message::DataRow;
use crate::row::Row;
use crate::template::{Decoder, Query, RawRow};
use crate::types::{Encode, Oid};

impl<D> Job for Query<'_, D> {
    fn source(&self) -> Source<'_> {
        Source::Template(self.template())
    }
    fn params(&self) -> &Params<'_> {
        Query::params(self)
    }
}

/// A run-time SQL query of a pipeline, prepared beforehand.
pub(super) struct SqlJob<'q> {
    pub(super) statement: Statement,
    params: &'q Params<'q>,
}

impl Job for SqlJob<'_> {
    fn source(&self) -> Source<'_> {
        Source::Statement(&self.statement)
    }
    fn params(&self) -> &Params<'_> {
        self.params
    }
}

/// Where a sink puts each query's result: with its error ([`Each`]), or the values of an
/// atomic pipeline, which has no per-query errors ([`All`]).
trait Results<T> {
    fn push(&mut self, result: Result<T, Error>);
    fn reserve(&mut self, queries: usize);
}

/// Every query's result, errors included.
struct Each<T>(Vec<Result<T, Error>>);

impl<T> Results<T> for Each<T> {
    fn push(&mut self, result: Result<T, Error>) {
        self.0.push(result);
    }
    fn reserve(&mut self, queries: usize) {
        self.0.reserve(queries);
    }
}

/// The values of an atomic pipeline: its sink sees only successful queries.
struct All<T>(Vec<T>);

impl<T> Results<T> for All<T> {
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
fn take_rows<T>(buffer: &mut Vec<T>) -> Vec<T> {
    if buffer.len() > COPY_LIMIT {
        std::mem::take(buffer)
    } else {
        // Note: not `mem::take`, which would give the buffer away with its spare room.
        let mut rows = Vec::with_capacity(buffer.len());
        rows.append(buffer);
        rows
    }
}

/// Collects typed rows per query.
struct Typed<D: Decoder, R> {
    /// The current query's rows; the buffer is reused (see [`take_rows`]).
    rows: Vec<D::Row>,
    results: R,
}

impl<D: Decoder, R> Typed<D, R> {
    fn new(results: R) -> Self {
        Typed {
            rows: Vec::new(),
            results,
        }
    }
}

impl<D: Decoder, R: Results<Vec<D::Row>>> Sink for Typed<D, R> {
    fn row(&mut self, _: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        let row = D::decode(&mut RawRow::new(data), statement.column_oids())?;
        self.rows.push(row);
        Ok(())
    }
    fn done(&mut self, _: usize, result: Result<u64, Error>) {
        let rows = take_rows(&mut self.rows);
        self.results.push(result.map(|_| rows));
    }
    fn wants_counts(&self) -> bool {
        false
    }
    fn reserve(&mut self, queries: usize) {
        self.results.reserve(queries);
    }
}

/// Keeps only the counts.
struct Counts<R>(R);

impl<R: Results<u64>> Sink for Counts<R> {
    fn row(&mut self, _: usize, _: DataRow<'_>, _: &Statement) -> Result<(), Error> {
        Ok(())
    }
    fn done(&mut self, _: usize, result: Result<u64, Error>) {
        self.0.push(result);
    }
    fn reserve(&mut self, queries: usize) {
        self.0.reserve(queries);
    }
}

/// Hands each row, borrowed, to a closure; keeps the row counts.
struct Visit<F, R> {
    f: F,
    rows: u64,
    results: R,
}

impl<F, R> Sink for Visit<F, R>
where
    F: FnMut(usize, &mut RawRow<'_>, &[Oid]) -> Result<(), Error>,
    R: Results<u64>,
{
    fn row(&mut self, index: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        self.rows += 1;
        (self.f)(index, &mut RawRow::new(data), statement.column_oids())
    }
    fn done(&mut self, _: usize, result: Result<u64, Error>) {
        let rows = std::mem::take(&mut self.rows);
        self.results.push(result.map(|_| rows));
    }
    fn wants_counts(&self) -> bool {
        false
    }
    fn reserve(&mut self, queries: usize) {
        self.results.reserve(queries);
    }
}

/// Collects run-time rows per query.
struct Rows<R> {
    /// The current query's rows; the buffer is reused (see [`take_rows`]).
    rows: Vec<Row>,
    results: R,
}

impl<R> Rows<R> {
    fn new(results: R) -> Self {
        Rows {
            rows: Vec::new(),
            results,
        }
    }
}

impl<R: Results<Vec<Row>>> Sink for Rows<R> {
    fn row(&mut self, _: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        let row = Row::new(statement.shared_columns().clone(), data).map_err(Error::from)?;
        self.rows.push(row);
        Ok(())
    }
    fn done(&mut self, _: usize, result: Result<u64, Error>) {
        let rows = take_rows(&mut self.rows);
        self.results.push(result.map(|_| rows));
    }
    fn wants_counts(&self) -> bool {
        false
    }
    fn reserve(&mut self, queries: usize) {
        self.results.reserve(queries);
    }
}

impl Connection {
    /// Runs compiled queries in one round trip and returns each query's rows, in order.
    ///
    /// Each query is a cycle of its own: an error is that query's result, and the others
    /// still run; inside a transaction block an error aborts the block, so the queries after
    /// it fail with SQLSTATE 25P02 until it is rolled back. The outer error means the
    /// connection failed. For all-or-nothing batches (and fewer wake-ups on both sides) see
    /// [`Connection::pipeline_atomic`].
    pub async fn pipeline<'q, D: Decoder>(
        &mut self,
        queries: impl IntoIterator<Item = Query<'q, D>>,
    ) -> Result<Vec<Result<Vec<D::Row>, Error>>, Error> {
        let mut sink = Typed::<D, _>::new(Each(Vec::new()));
        self.run_pipeline(queries, &mut sink, Mode::PerQuery)
            .await?;
        Ok(sink.results.0)
    }

    /// Runs compiled queries in one round trip as **one transaction**: all of them take
    /// effect, or none. Returns each query's rows, in order.
    ///
    /// One Sync ends the batch, so the server runs it as one implicit transaction and
    /// commits at the end. When a query fails, the server skips the rest of the batch and
    /// rolls all of it back — the queries before the failing one too — and the returned
    /// error says which query failed ([`Error::pipeline_index`], counted from 0) with the
    /// server's error ([`Error::code`], [`Error::as_db_error`]). A failure when the batch
    /// commits (a deferred constraint, a serialization failure) has no index. The
    /// connection is usable afterwards.
    ///
    /// Inside a transaction block ([`Connection::begin`]) the batch joins the block and
    /// commits with it; an error aborts the block like any failed statement, so roll it
    /// back.
    ///
    /// A compiled query whose statement is new on this connection is described first
    /// (Parse + Describe + Flush, its types checked before any of its queries is bound), so
    /// when the server's types drifted from the compiled query's, no query of that template
    /// runs and the whole batch is rolled back ([`Error::is_schema_drift`]).
    ///
    /// The client also ends the batch itself, so that it is rolled back, when a parameter
    /// cannot be encoded or a row cannot be decoded, provided the Sync has not been sent yet
    /// (it goes out with the last query); if it has, the error says that the batch took
    /// effect. Dropping the future before it finishes rolls the batch back too (unless the
    /// Sync was sent, in which case it commits); the connection stays usable.
    ///
    /// Compared with [`Connection::pipeline`], the server flushes its replies once per batch
    /// instead of once per query, which saves client and server CPU on large batches.
    ///
    /// ```no_run
    /// # async fn run(conn: &mut qail_pg::Connection,
    /// #     moves: Vec<qail_pg::Query<'_, qail_pg::NoRows>>) -> Result<(), qail_pg::Error> {
    /// // Rows are returned by `pipeline_atomic`; UPDATEs only need their counts.
    /// match conn.pipeline_atomic_count(moves).await {
    ///     Ok(updated) => println!("{} queries committed", updated.len()),
    ///     Err(e) => match e.pipeline_index() {
    ///         // Nothing of the batch took effect.
    ///         Some(i) => eprintln!("query {i} failed, batch rolled back: {e}"),
    ///         None => return Err(e),
    ///     },
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn pipeline_atomic<'q, D: Decoder>(
        &mut self,
        queries: impl IntoIterator<Item = Query<'q, D>>,
    ) -> Result<Vec<Vec<D::Row>>, Error> {
        let mut sink = Typed::<D, _>::new(All(Vec::new()));
        self.run_pipeline(queries, &mut sink, Mode::Atomic).await?;
        Ok(sink.results.0)
    }

    /// Runs compiled queries in one round trip and calls `f` with each row as it is read,
    /// borrowed from the read buffer: `f(query_index, row, column_types)`, where the query
    /// index counts from 0 in the order given. Nothing is allocated per row or per query
    /// (read columns in order with [`RawRow::get_next`]; `&str` and `&[u8]` borrow).
    /// Returns each query's number of rows, or its error.
    ///
    /// Per-query semantics as [`Connection::pipeline`]; an error returned by `f` becomes that
    /// query's error (the rest of its rows are skipped). [`Error::caller`] wraps an error of
    /// your own.
    pub async fn pipeline_for_each<'q, D>(
        &mut self,
        queries: impl IntoIterator<Item = Query<'q, D>>,
        f: impl FnMut(usize, &mut RawRow<'_>, &[Oid]) -> Result<(), Error>,
    ) -> Result<Vec<Result<u64, Error>>, Error> {
        let mut sink = Visit {
            f,
            rows: 0,
            results: Each(Vec::new()),
        };
        self.run_pipeline(queries, &mut sink, Mode::PerQuery)
            .await?;
        Ok(sink.results.0)
    }

    /// [`Connection::pipeline_for_each`] as one transaction, all or nothing, with the
    /// semantics of [`Connection::pipeline_atomic`]: rows are handed to `f` borrowed, as they
    /// are read; returns each query's number of rows. An error returned by `f` fails the
    /// batch (rolled back unless its Sync was already sent, as the error then says).
    ///
    /// ```no_run
    /// # async fn run(conn: &mut qail_pg::Connection,
    /// #     lookups: Vec<qail_pg::Query<'_, qail_pg::NoRows>>) -> Result<(), qail_pg::Error> {
    /// // Each query returns (id int8, name text); copy the names out without a String per row.
    /// let mut names = vec![String::new(); lookups.len()];
    /// conn.pipeline_atomic_for_each(lookups, |query, row, columns| {
    ///     let _id: i64 = row.get_next(columns)?;
    ///     let name: &str = row.get_next(columns)?;
    ///     names[query].push_str(name);
    ///     Ok(())
    /// })
    /// .await?;
    /// # Ok(()) }
    /// ```
    pub async fn pipeline_atomic_for_each<'q, D>(
        &mut self,
        queries: impl IntoIterator<Item = Query<'q, D>>,
        f: impl FnMut(usize, &mut RawRow<'_>, &[Oid]) -> Result<(), Error>,
    ) -> Result<Vec<u64>, Error> {
        let mut sink = Visit {
            f,
            rows: 0,
            results: All(Vec::new()),
        };
        self.run_pipeline(queries, &mut sink, Mode::Atomic).await?;
        Ok(sink.results.0)
    }

    /// Runs compiled queries in one round trip without decoding their rows; returns each
    /// query's number of rows (returned or affected).
    pub async fn pipeline_count<'q, D>(
        &mut self,
        queries: impl IntoIterator<Item = Query<'q, D>>,
    ) -> Result<Vec<Result<u64, Error>>, Error> {
        let mut sink = Counts(Each(Vec::new()));
        self.run_pipeline(queries, &mut sink, Mode::PerQuery)
            .await?;
        Ok(sink.0.0)
    }

    /// [`Connection::pipeline_atomic`] without decoding rows: runs compiled queries as one
    /// transaction and returns each query's number of rows (returned or affected).
    pub async fn pipeline_atomic_count<'q, D>(
        &mut self,
        queries: impl IntoIterator<Item = Query<'q, D>>,
    ) -> Result<Vec<u64>, Error> {
        let mut sink = Counts(All(Vec::new()));
        self.run_pipeline(queries, &mut sink, Mode::Atomic).await?;
        Ok(sink.0.0)
    }

    /// Runs run-time SQL queries in one round trip (after preparing the statements not yet
    /// cached) and returns each query's rows.
    pub async fn pipeline_sql(
        &mut self,
        queries: &[(&str, &[&(dyn Encode + Sync)])],
    ) -> Result<Vec<Result<Vec<Row>, Error>>, Error> {
        let jobs = self.prepare_all(queries.iter().copied()).await?;
        let mut sink = Rows::new(Each(Vec::new()));
        self.run_pipeline(jobs, &mut sink, Mode::PerQuery).await?;
        Ok(sink.results.0)
    }

    /// [`Connection::pipeline_sql`] as one transaction, all or nothing, with the semantics of
    /// [`Connection::pipeline_atomic`]. The statements not yet cached are prepared first, in
    /// a round trip of their own.
    pub async fn pipeline_sql_atomic(
        &mut self,
        queries: &[(&str, &[&(dyn Encode + Sync)])],
    ) -> Result<Vec<Vec<Row>>, Error> {
        let jobs = self.prepare_all(queries.iter().copied()).await?;
        let mut sink = Rows::new(All(Vec::new()));
        self.run_pipeline(jobs, &mut sink, Mode::Atomic).await?;
        Ok(sink.results.0)
    }

    /// Prepares the statements of run-time SQL queries, all kept in the cache at once.
    pub(super) async fn prepare_all<'q>(
        &mut self,
        queries: impl Iterator<Item = (&'q str, &'q Params<'q>)> + Clone,
    ) -> Result<Vec<SqlJob<'q>>, Error> {
        self.ready().await?;
        let mut jobs = Vec::new();
        for (sql, params) in queries.clone() {
            let statement = self.prepare_cached(sql).await?;
            jobs.push(SqlJob { statement, params });
        }
        for (job, (sql, _)) in jobs.iter().zip(queries) {
            let cached = self.cache.get(sql);
            if cached.is_none_or(|s| s.name() != job.statement.name()) {
                return Err(Error::new(
                    Kind::Usage,
                    "the pipeline has more distinct statements than the statement cache holds; \
                     raise it with set_statement_cache_size, or split the pipeline",
                ));
            }
        }
        Ok(jobs)
    }
}
