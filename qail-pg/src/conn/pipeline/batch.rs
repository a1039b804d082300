//! [`Pipeline`]: a batch of queries of one kind — compiled queries of one row type, or
//! run-time SQL — run per query or atomically, their results collected as rows, handed over
//! borrowed, or counted. Started from [`Connection::pipeline_builder`] (see
//! [`super::builder`]); [`Connection::pipeline`] and [`Connection::pipeline_atomic`] are its
//! shorthands.

use std::marker::PhantomData;

use super::engine::{Job, Source};
use super::mode::{Atomic, Mode, PerQuery};
use super::output::QueryOutput;
use super::results::{All, Each, QueryResults, take_rows};
use crate::conn::row_sink::RowSink;
use crate::conn::{Connection, Statement};
use crate::error::{Error, Kind};
use crate::proto::message::DataRow;
use crate::row::Row;
use crate::template::Arg;
use crate::template::{Decoder, Query, RawRow};
use crate::types::{Encode, Oid};

/// The parameters of a run-time SQL query.
type Params<'a> = [&'a (dyn Encode + Sync)];

impl<'a, D> Job for Query<'a, D> {
    type Param = Arg<'a>;
    fn source(&self) -> Source<'_> {
        Source::Template(self.template())
    }
    fn params(&self) -> &[Arg<'a>] {
        Query::params(self)
    }
}

/// A run-time SQL query of a pipeline, prepared beforehand.
pub(super) struct SqlJob<'q> {
    pub(super) statement: Statement,
    params: &'q Params<'q>,
}

impl<'q> Job for SqlJob<'q> {
    type Param = &'q (dyn Encode + Sync);
    fn source(&self) -> Source<'_> {
        Source::Statement(&self.statement)
    }
    fn params(&self) -> &[&'q (dyn Encode + Sync)] {
        self.params
    }
}

/// Keeps only the counts.
struct Counts<R>(R);

impl<R: QueryResults<u64>> RowSink for Counts<R> {
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

impl<F, R> Visit<F, R> {
    fn new(f: F, results: R) -> Self {
        Visit {
            f,
            rows: 0,
            results,
        }
    }
}

impl<F, R> RowSink for Visit<F, R>
where
    F: FnMut(usize, &mut RawRow<'_>, &[Oid]) -> Result<(), Error>,
    R: QueryResults<u64>,
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

impl<R: QueryResults<Vec<Row>>> RowSink for Rows<R> {
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

/// A pipeline of queries of one kind, from [`PipelineBuilder::queries`] (compiled queries:
/// `S` is their iterator) or [`PipelineBuilder::sql`] (run-time SQL: `S` is
/// [`SqlQueries`]); `M` is its mode, [`PerQuery`] or [`Atomic`]. Run it with what each query
/// should give back:
///
/// | method | per query ([`PerQuery`]) | atomic ([`Atomic`]) |
/// |---|---|---|
/// | [`rows`](Pipeline::rows) | `Vec<Result<Vec<R>, Error>>` | `Vec<Vec<R>>` |
/// | [`for_each`](Pipeline::for_each) | `Vec<Result<u64, Error>>` | `Vec<u64>` |
/// | [`count`](Pipeline::count) | `Vec<Result<u64, Error>>` | `Vec<u64>` |
///
/// `R` is the compiled query's row type, or [`Row`] for run-time SQL. Nothing is allocated
/// or boxed per query beyond the results themselves.
///
/// A pipeline's future is `Send` when its queries are, so it runs in a spawned task; there,
/// pass the queries as a collection (`Vec`, array) rather than a lazy `map` whose closure
/// borrows into its items: the compiler cannot yet show such an iterator `Send` across an
/// `await` ("implementation of `FnOnce` is not general enough").
///
/// [`PipelineBuilder::queries`]: super::PipelineBuilder::queries
/// [`PipelineBuilder::sql`]: super::PipelineBuilder::sql
#[must_use = "a pipeline does nothing until it is run with rows, for_each or count"]
pub struct Pipeline<'c, S, M = PerQuery> {
    conn: &'c mut Connection,
    queries: S,
    /// How many queries were added to the builder with `add…` before: a batch cannot run them.
    added: usize,
    _mode: PhantomData<M>,
}

impl<S, M> std::fmt::Debug for Pipeline<'_, S, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("mode", &std::any::type_name::<M>())
            .finish_non_exhaustive()
    }
}

/// The run-time SQL queries of a [`Pipeline`] (from [`PipelineBuilder::sql`]): each an SQL
/// text and its parameters.
///
/// [`PipelineBuilder::sql`]: super::PipelineBuilder::sql
#[derive(Clone, Copy)]
pub struct SqlQueries<'s>(&'s [(&'s str, &'s Params<'s>)]);

impl std::fmt::Debug for SqlQueries<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlQueries")
            .field("queries", &self.0.len())
            .finish()
    }
}

impl<'c, S, M> Pipeline<'c, S, M> {
    pub(super) fn new(conn: &'c mut Connection, queries: S, added: usize) -> Self {
        Pipeline {
            conn,
            queries,
            added,
            _mode: PhantomData,
        }
    }

    /// Refuses to run when queries were also added to the builder one by one.
    fn check_alone(&self) -> Result<(), Error> {
        if self.added == 0 {
            return Ok(());
        }
        Err(Error::new(
            Kind::Usage,
            format!(
                "{} queries were added to the pipeline builder with add…, and a batch was given \
                 with queries or sql: run one or the other (add every query with add…, or pass \
                 them all to queries)",
                self.added
            ),
        ))
    }
}

impl<'s> SqlQueries<'s> {
    /// Wraps run-time SQL queries.
    pub(super) fn new(queries: &'s [(&'s str, &'s Params<'s>)]) -> Self {
        SqlQueries(queries)
    }
}

impl<'q, D, I, M> Pipeline<'_, I, M>
where
    I: IntoIterator<Item = Query<'q, D>>,
{
    async fn run_compiled(self, sink: &mut impl RowSink, mode: Mode) -> Result<(), Error> {
        self.check_alone()?;
        self.conn.run_pipeline(self.queries, sink, mode).await
    }

    /// Runs the queries, collecting each query's typed rows as `R` (which `wrap` makes of a
    /// results vector and `unwrap` gives back): [`Connection::outputs`], after the check that
    /// nothing else is queued on the connection.
    async fn typed_rows<R, T>(
        self,
        mode: Mode,
        wrap: fn(Vec<T>) -> R,
        unwrap: fn(R) -> Vec<T>,
    ) -> Result<Vec<T>, Error>
    where
        D: QueryOutput,
        R: QueryResults<D::Output>,
        T: Send + 'static,
    {
        self.check_alone()?;
        let Pipeline { conn, queries, .. } = self;
        conn.outputs(queries, mode, wrap, unwrap).await
    }
}

impl<M> Pipeline<'_, SqlQueries<'_>, M> {
    async fn run_sql(self, sink: &mut impl RowSink, mode: Mode) -> Result<(), Error> {
        self.check_alone()?;
        let jobs = self
            .conn
            .prepare_all(self.queries.0.iter().copied())
            .await?;
        self.conn.run_pipeline(jobs, sink, mode).await
    }
}

/// Compiled queries, each its own cycle.
impl<'q, D, I> Pipeline<'_, I, PerQuery>
where
    I: IntoIterator<Item = Query<'q, D>>,
{
    /// Runs the queries in one round trip and returns each query's rows, or its error.
    ///
    /// Each query is a cycle of its own: an error is that query's result, and the others
    /// still run; inside a transaction block an error aborts the block, so the queries after
    /// it fail with SQLSTATE 25P02 until it is rolled back. The outer error means the
    /// connection failed.
    pub async fn rows(self) -> Result<Vec<Result<Vec<D::Row>, Error>>, Error>
    where
        D: Decoder<Row: Send + 'static>,
    {
        self.typed_rows(Mode::PerQuery, Each, |each| each.0).await
    }

    /// Runs the queries in one round trip and calls `f` with each row as it is read,
    /// borrowed from the read buffer: `f(query_index, row, column_types)`, where the query
    /// index counts from 0 in the order given. Nothing is allocated per row or per query
    /// (read columns in order with [`RawRow::get_next`]; `&str` and `&[u8]` borrow).
    /// Returns each query's number of rows, or its error; an error returned by `f` becomes
    /// that query's error (the rest of its rows are skipped). [`Error::caller`] wraps an
    /// error of your own.
    pub async fn for_each(
        self,
        f: impl FnMut(usize, &mut RawRow<'_>, &[Oid]) -> Result<(), Error>,
    ) -> Result<Vec<Result<u64, Error>>, Error> {
        let mut sink = Visit::new(f, Each(Vec::new()));
        self.run_compiled(&mut sink, Mode::PerQuery).await?;
        Ok(sink.results.0)
    }

    /// Runs the queries in one round trip without decoding their rows; returns each query's
    /// number of rows (returned or affected), or its error.
    pub async fn count(self) -> Result<Vec<Result<u64, Error>>, Error> {
        let mut sink = Counts(Each(Vec::new()));
        self.run_compiled(&mut sink, Mode::PerQuery).await?;
        Ok(sink.0.0)
    }
}

/// Compiled queries, all or nothing.
impl<'q, D, I> Pipeline<'_, I, Atomic>
where
    I: IntoIterator<Item = Query<'q, D>>,
{
    /// Runs the queries in one round trip as **one transaction** (see [`Atomic`]) and returns
    /// each query's rows.
    pub async fn rows(self) -> Result<Vec<Vec<D::Row>>, Error>
    where
        D: Decoder<Row: Send + 'static>,
    {
        self.typed_rows(Mode::Atomic, All, |all| all.0).await
    }

    /// Runs the queries as one transaction, handing each row to `f` borrowed, as it is read
    /// (as [`Pipeline::for_each`] per query does); returns each query's number of rows. An
    /// error returned by `f` fails the batch (rolled back unless its Sync was already sent,
    /// as the error then says).
    ///
    /// ```no_run
    /// # async fn run(conn: &mut qail_pg::Connection,
    /// #     lookups: Vec<qail_pg::Query<'_, qail_pg::NoRows>>) -> Result<(), qail_pg::Error> {
    /// // Each query returns (id int8, name text); copy the names out without a String per row.
    /// let mut names = vec![String::new(); lookups.len()];
    /// conn.pipeline_builder()
    ///     .atomic()
    ///     .queries(lookups)
    ///     .for_each(|query, row, columns| {
    ///         let _id: i64 = row.get_next(columns)?;
    ///         let name: &str = row.get_next(columns)?;
    ///         names[query].push_str(name);
    ///         Ok(())
    ///     })
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn for_each(
        self,
        f: impl FnMut(usize, &mut RawRow<'_>, &[Oid]) -> Result<(), Error>,
    ) -> Result<Vec<u64>, Error> {
        let mut sink = Visit::new(f, All(Vec::new()));
        self.run_compiled(&mut sink, Mode::Atomic).await?;
        Ok(sink.results.0)
    }

    /// Runs the queries as one transaction without decoding their rows; returns each query's
    /// number of rows (returned or affected).
    ///
    /// ```no_run
    /// # async fn run(conn: &mut qail_pg::Connection,
    /// #     moves: Vec<qail_pg::Query<'_, qail_pg::NoRows>>) -> Result<(), qail_pg::Error> {
    /// match conn.pipeline_builder().atomic().queries(moves).count().await {
    ///     Ok(updated) => println!("{} queries committed", updated.len()),
    ///     Err(e) => match e.pipeline_index() {
    ///         // Nothing of the batch took effect.
    ///         Some(i) => eprintln!("query {i} failed, batch rolled back: {e}"),
    ///         None => return Err(e),
    ///     },
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn count(self) -> Result<Vec<u64>, Error> {
        let mut sink = Counts(All(Vec::new()));
        self.run_compiled(&mut sink, Mode::Atomic).await?;
        Ok(sink.0.0)
    }
}

/// Run-time SQL, each query its own cycle. The statements not yet cached are prepared
/// first, in a round trip of their own.
impl Pipeline<'_, SqlQueries<'_>, PerQuery> {
    /// Runs the queries in one round trip and returns each query's rows, or its error.
    pub async fn rows(self) -> Result<Vec<Result<Vec<Row>, Error>>, Error> {
        let mut sink = Rows::new(Each(Vec::new()));
        self.run_sql(&mut sink, Mode::PerQuery).await?;
        Ok(sink.results.0)
    }

    /// Runs the queries in one round trip, handing each row to `f` borrowed, as it is read
    /// (see the compiled queries' [`for_each`](Pipeline::for_each)); returns each query's
    /// number of rows, or its error.
    pub async fn for_each(
        self,
        f: impl FnMut(usize, &mut RawRow<'_>, &[Oid]) -> Result<(), Error>,
    ) -> Result<Vec<Result<u64, Error>>, Error> {
        let mut sink = Visit::new(f, Each(Vec::new()));
        self.run_sql(&mut sink, Mode::PerQuery).await?;
        Ok(sink.results.0)
    }

    /// Runs the queries in one round trip without decoding their rows; returns each query's
    /// number of rows (returned or affected), or its error.
    pub async fn count(self) -> Result<Vec<Result<u64, Error>>, Error> {
        let mut sink = Counts(Each(Vec::new()));
        self.run_sql(&mut sink, Mode::PerQuery).await?;
        Ok(sink.0.0)
    }
}

/// Run-time SQL, all or nothing. The statements not yet cached are prepared first, in a
/// round trip of their own.
impl Pipeline<'_, SqlQueries<'_>, Atomic> {
    /// Runs the queries as one transaction (see [`Atomic`]) and returns each query's rows.
    pub async fn rows(self) -> Result<Vec<Vec<Row>>, Error> {
        let mut sink = Rows::new(All(Vec::new()));
        self.run_sql(&mut sink, Mode::Atomic).await?;
        Ok(sink.results.0)
    }

    /// Runs the queries as one transaction, handing each row to `f` borrowed, as it is read;
    /// returns each query's number of rows.
    pub async fn for_each(
        self,
        f: impl FnMut(usize, &mut RawRow<'_>, &[Oid]) -> Result<(), Error>,
    ) -> Result<Vec<u64>, Error> {
        let mut sink = Visit::new(f, All(Vec::new()));
        self.run_sql(&mut sink, Mode::Atomic).await?;
        Ok(sink.results.0)
    }

    /// Runs the queries as one transaction without decoding their rows; returns each query's
    /// number of rows (returned or affected).
    pub async fn count(self) -> Result<Vec<u64>, Error> {
        let mut sink = Counts(All(Vec::new()));
        self.run_sql(&mut sink, Mode::Atomic).await?;
        Ok(sink.0.0)
    }
}

impl Connection {
    /// Runs compiled queries in one round trip and returns each query's rows, or its error:
    /// the shorthand of `conn.pipeline_builder().queries(queries).rows()`
    /// ([`Pipeline::rows`]; see [`Connection::pipeline_builder`] for the other modes).
    ///
    /// Each query is a cycle of its own: an error is that query's result, and the others
    /// still run; inside a transaction block an error aborts the block, so the queries after
    /// it fail with SQLSTATE 25P02 until it is rolled back. The outer error means the
    /// connection failed. For all-or-nothing batches (and fewer wake-ups on both sides) see
    /// [`Connection::pipeline_atomic`].
    ///
    /// A statement without rows (INSERT, UPDATE or DELETE without RETURNING) gives the number
    /// of rows it affected instead of rows ([`QueryOutput`]).
    pub async fn pipeline<'q, D: QueryOutput>(
        &mut self,
        queries: impl IntoIterator<Item = Query<'q, D>>,
    ) -> Result<Vec<Result<D::Output, Error>>, Error> {
        self.outputs(queries, Mode::PerQuery, Each, |each| each.0)
            .await
    }

    /// Runs compiled queries in one round trip as **one transaction**: all of them take
    /// effect, or none (see [`Atomic`]). Returns each query's rows, in order. The shorthand of
    /// `conn.pipeline_builder().atomic().queries(queries).rows()`.
    ///
    /// Statements without rows (INSERT, UPDATE or DELETE without RETURNING) give the number
    /// of rows each affected instead of rows, as `.count()` does ([`QueryOutput`]).
    pub async fn pipeline_atomic<'q, D: QueryOutput>(
        &mut self,
        queries: impl IntoIterator<Item = Query<'q, D>>,
    ) -> Result<Vec<D::Output>, Error> {
        self.outputs(queries, Mode::Atomic, All, |all| all.0).await
    }

    /// Prepares the statements of run-time SQL queries, all kept in the cache at once.
    pub(super) async fn prepare_all<'q>(
        &mut self,
        queries: impl Iterator<Item = (&'q str, &'q Params<'q>)> + Clone,
    ) -> Result<Vec<SqlJob<'q>>, Error> {
        self.ready().await?;
        if self.pooled_transactions {
            // Note: the statements are prepared in round trips of their own before the
            // pipeline binds them, which a pooler in transaction mode may run on another
            // server session.
            return Err(Error::new(
                Kind::Usage,
                "pipelines of run-time SQL prepare their statements first, which cannot work behind \
                 a pooler in transaction mode (pooler=transaction); run the queries one by one \
                 with query/execute, or use compiled (qail!) queries in the pipeline",
            ));
        }
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
