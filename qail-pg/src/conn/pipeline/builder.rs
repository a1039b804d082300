//! [`PipelineBuilder`]: one pipeline of queries with different row types, per query or atomic.

use std::any::Any;
use std::marker::PhantomData;

use super::api::{Pipeline, SqlQueries};
use super::{Job, Mode, Sink, Source};
use crate::conn::{Connection, Statement};
use crate::error::{Error, Kind};
use crate::proto::message::DataRow;
use crate::row::Row;
use crate::template::{Arg, Decoder, Query, RawRow};
use crate::types::Encode;

impl Connection {
    /// Starts a pipeline: many queries in one round trip. The one entry point for every kind
    /// of pipeline; choose on the builder
    ///
    /// - the **mode**: each query its own cycle (the default, [`PerQuery`]: an error is that
    ///   query's result and the others still run), or [`atomic`](PipelineBuilder::atomic)
    ///   ([`Atomic`]: one transaction, all or nothing);
    /// - the **queries**: a batch of compiled queries of one row type
    ///   ([`queries`](PipelineBuilder::queries)) or of run-time SQL
    ///   ([`sql`](PipelineBuilder::sql)), which gives a [`Pipeline`] run with
    ///   [`rows`](Pipeline::rows) (collected), [`for_each`](Pipeline::for_each) (each row
    ///   borrowed, as it is read) or [`count`](Pipeline::count) (rows returned or affected);
    ///   or queries of different kinds added one by one ([`add`](PipelineBuilder::add),
    ///   [`add_count`](PipelineBuilder::add_count), [`add_sql`](PipelineBuilder::add_sql)),
    ///   run with [`run`](PipelineBuilder::run) and read back with their [`Handle`]s.
    ///
    /// A batch allocates nothing per query beyond its results; queries added one by one are
    /// boxed each. [`Connection::pipeline`] and [`Connection::pipeline_atomic`] are the
    /// shorthands of `.queries(qs).rows()` in either mode.
    ///
    /// ```no_run
    /// # async fn run(conn: &mut qail_pg::Connection,
    /// #     inserts: Vec<qail_pg::Query<'_, qail_pg::NoRows>>,
    /// #     q1: qail_pg::Query<'_, qail_pg::NoRows>, q2: qail_pg::Query<'_, qail_pg::NoRows>)
    /// # -> Result<(), qail_pg::Error> {
    /// // A batch: all the inserts or none, their counts.
    /// let inserted: Vec<u64> = conn.pipeline_builder().atomic().queries(inserts).count().await?;
    /// // Run-time SQL, each query on its own.
    /// let sql: [(&str, &[&(dyn qail_pg::Encode + Sync)]); 2] =
    ///     [("SELECT $1::int4", &[&7i32]), ("SELECT now()", &[])];
    /// for rows in conn.pipeline_builder().sql(&sql).rows().await? {
    ///     println!("{} rows", rows?.len());
    /// }
    /// // Queries of different kinds.
    /// let mut p = conn.pipeline_builder();
    /// let a = p.add_count(q1);
    /// let b = p.add_sql("SELECT $1::int4", &[&7i32]);
    /// let mut results = p.run().await?;
    /// let inserted: u64 = results.get(a)?;
    /// let rows = results.get(b)?;
    /// # Ok(()) }
    /// ```
    pub fn pipeline_builder<'q>(&mut self) -> PipelineBuilder<'_, 'q> {
        PipelineBuilder {
            conn: self,
            items: Vec::new(),
            mode: Mode::PerQuery,
            _mode: PhantomData,
        }
    }
}

/// The default mode of a pipeline: every query is its own Bind + Execute + Sync cycle, so
/// an error affects only the query that caused it (its result), and the others still run.
/// Outside a transaction block each query commits on its own; inside one, an error aborts
/// the block, so the queries after it fail with SQLSTATE 25P02 until it is rolled back.
#[derive(Debug, Clone, Copy, Default)]
pub struct PerQuery;

/// The atomic mode of a pipeline ([`PipelineBuilder::atomic`]): the queries run as **one
/// transaction**, all of them or none.
///
/// One Sync ends the batch, so the server runs it as one implicit transaction and commits at
/// the end. When a query fails, the server skips the rest of the batch and rolls all of it
/// back — the queries before the failing one too — and the returned error says which query
/// failed ([`Error::pipeline_index`], counted from 0) with the server's error
/// ([`Error::code`], [`Error::as_db_error`]). A failure when the batch commits (a deferred
/// constraint, a serialization failure) has no index. The connection is usable afterwards.
///
/// Inside a transaction block ([`Connection::begin`]) the batch joins the block and commits
/// with it; an error aborts the block like any failed statement, so roll it back.
///
/// A compiled query whose statement is new on this connection is described first (Parse +
/// Describe + Flush, its types checked before any of its queries is bound), so when the
/// server's types drifted from the compiled query's, no query of that template runs and the
/// whole batch is rolled back ([`Error::is_schema_drift`]).
///
/// The client also ends the batch itself, so that it is rolled back, when a parameter cannot
/// be encoded or a row cannot be decoded, provided the Sync has not been sent yet (it goes
/// out with the last query); if it has, the error says that the batch took effect. Dropping
/// the future before it finishes rolls the batch back too (unless the Sync was sent, in which
/// case it commits); the connection stays usable.
///
/// Compared with [`PerQuery`], the server flushes its replies once per batch instead of once
/// per query, which saves client and server CPU on large batches.
#[derive(Debug, Clone, Copy, Default)]
pub struct Atomic;

/// Decodes the rows of one builder item and hands them out type-erased.
trait Collector: Send {
    fn row(&mut self, data: DataRow<'_>, statement: &Statement) -> Result<(), Error>;
    fn finish(self: Box<Self>, affected: u64) -> Box<dyn Any + Send>;
}

struct CollectTyped<D: Decoder>(Vec<D::Row>);

impl<D: Decoder> Collector for CollectTyped<D>
where
    D::Row: Send + 'static,
{
    fn row(&mut self, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        self.0
            .push(D::decode(&mut RawRow::new(data), statement.column_oids())?);
        Ok(())
    }
    fn finish(self: Box<Self>, _: u64) -> Box<dyn Any + Send> {
        Box::new(self.0)
    }
}

struct CollectRows(Vec<Row>);

impl Collector for CollectRows {
    fn row(&mut self, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        let row = Row::new(statement.shared_columns().clone(), data).map_err(Error::from)?;
        self.0.push(row);
        Ok(())
    }
    fn finish(self: Box<Self>, _: u64) -> Box<dyn Any + Send> {
        Box::new(self.0)
    }
}

struct CollectCount;

impl Collector for CollectCount {
    fn row(&mut self, _: DataRow<'_>, _: &Statement) -> Result<(), Error> {
        Ok(())
    }
    fn finish(self: Box<Self>, affected: u64) -> Box<dyn Any + Send> {
        Box::new(affected)
    }
}

enum What<'q> {
    Template(&'static crate::template::Template),
    Sql(&'q str, Option<Statement>),
}

struct Item<'q> {
    what: What<'q>,
    params: Vec<Arg<'q>>,
    collector: Option<Box<dyn Collector + 'q>>,
}

impl<'q> Job for &mut Item<'q> {
    type Param = Arg<'q>;
    fn source(&self) -> Source<'_> {
        match &self.what {
            What::Template(t) => Source::Template(t),
            What::Sql(_, Some(statement)) => Source::Statement(statement),
            What::Sql(_, None) => unreachable!("statements are prepared before the run"),
        }
    }
    fn params(&self) -> &[Arg<'q>] {
        &self.params
    }
}

/// Typed access to one query's result in [`PipelineResults`]; `T` is `Vec<row type>`,
/// `Vec<Row>` or `u64`.
pub struct Handle<T> {
    index: usize,
    _result: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("index", &self.index)
            .finish()
    }
}

/// A pipeline being set up, in mode `M` ([`PerQuery`] or [`Atomic`]): see
/// [`Connection::pipeline_builder`]. It takes a batch of queries of one kind
/// ([`queries`](Self::queries), [`sql`](Self::sql)), or queries of any row types one by one
/// ([`add`](Self::add) and friends, then [`run`](Self::run)).
#[must_use = "a pipeline does nothing until it is run"]
pub struct PipelineBuilder<'c, 'q, M = PerQuery> {
    conn: &'c mut Connection,
    items: Vec<Item<'q>>,
    mode: Mode,
    _mode: PhantomData<M>,
}

impl<M> std::fmt::Debug for PipelineBuilder<'_, '_, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PipelineBuilder")
            .field("queries", &self.items.len())
            .field("atomic", &(self.mode == Mode::Atomic))
            .finish_non_exhaustive()
    }
}

impl<'c, 'q, M> PipelineBuilder<'c, 'q, M> {
    /// Makes the pipeline **one transaction**, all or nothing ([`Atomic`]). For queries added
    /// one by one: if a query fails, every query of the batch is rolled back and
    /// [`PipelineBuilder::run`] returns that error ([`Error::pipeline_index`] says which
    /// query); otherwise every handle's result is `Ok`.
    ///
    /// ```no_run
    /// # async fn run(conn: &mut qail_pg::Connection,
    /// #     debit: qail_pg::Query<'_, qail_pg::NoRows>, credit: qail_pg::Query<'_, qail_pg::NoRows>)
    /// # -> Result<(), qail_pg::Error> {
    /// let mut p = conn.pipeline_builder().atomic();
    /// let a = p.add_count(debit);
    /// let b = p.add_count(credit);
    /// let mut results = p.run().await?; // both or neither
    /// assert_eq!((results.get(a)?, results.get(b)?), (1, 1));
    /// # Ok(()) }
    /// ```
    pub fn atomic(self) -> PipelineBuilder<'c, 'q, Atomic> {
        PipelineBuilder {
            conn: self.conn,
            items: self.items,
            mode: Mode::Atomic,
            _mode: PhantomData,
        }
    }

    /// A batch of compiled queries of one row type, in order; run it with
    /// [`rows`](Pipeline::rows), [`for_each`](Pipeline::for_each) or
    /// [`count`](Pipeline::count). Queries are encoded as the batch is sent: nothing is
    /// collected or allocated per query beyond its result.
    pub fn queries<'b, D, I>(self, queries: I) -> Pipeline<'c, I, M>
    where
        I: IntoIterator<Item = Query<'b, D>>,
    {
        Pipeline::new(self.conn, queries, self.items.len())
    }

    /// A batch of run-time SQL queries, each an SQL text and its parameters; run it with
    /// [`rows`](Pipeline::rows), [`for_each`](Pipeline::for_each) or
    /// [`count`](Pipeline::count). The statements not yet cached are prepared first, in a
    /// round trip of their own.
    pub fn sql<'s>(
        self,
        queries: &'s [(&'s str, &'s [&'s (dyn Encode + Sync)])],
    ) -> Pipeline<'c, SqlQueries<'s>, M> {
        Pipeline::new(self.conn, SqlQueries::new(queries), self.items.len())
    }

    fn push<T>(&mut self, item: Item<'q>) -> Handle<T> {
        self.items.push(item);
        Handle {
            index: self.items.len() - 1,
            _result: PhantomData,
        }
    }

    /// Adds a compiled query whose rows are returned.
    pub fn add<D: Decoder + 'q>(&mut self, query: Query<'q, D>) -> Handle<Vec<D::Row>>
    where
        D::Row: Send + 'static,
    {
        self.push(Item {
            what: What::Template(query.template()),
            params: query.params().to_vec(),
            collector: Some(Box::new(CollectTyped::<D>(Vec::new()))),
        })
    }

    /// Adds a compiled query whose number of rows (returned or affected) is returned.
    pub fn add_count<D>(&mut self, query: Query<'q, D>) -> Handle<u64> {
        self.push(Item {
            what: What::Template(query.template()),
            params: query.params().to_vec(),
            collector: Some(Box::new(CollectCount)),
        })
    }

    /// Adds a run-time SQL query whose rows are returned.
    pub fn add_sql(
        &mut self,
        sql: &'q str,
        params: &[&'q (dyn Encode + Sync)],
    ) -> Handle<Vec<Row>> {
        self.push(Item {
            what: What::Sql(sql, None),
            params: params.iter().map(|&p| Arg::Ref(p)).collect(),
            collector: Some(Box::new(CollectRows(Vec::new()))),
        })
    }

    /// Runs every query in one round trip (after preparing run-time SQL not yet cached).
    pub async fn run(mut self) -> Result<PipelineResults, Error> {
        let sql: Vec<(&'q str, usize)> = self
            .items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| match item.what {
                What::Sql(sql, _) => Some((sql, i)),
                What::Template(_) => None,
            })
            .collect();
        if !sql.is_empty() {
            let none: &[&(dyn Encode + Sync)] = &[];
            let prepared = self
                .conn
                .prepare_all(sql.iter().map(|(sql, _)| (*sql, none)))
                .await?;
            for (job, (sql, i)) in prepared.into_iter().zip(sql) {
                self.items[i].what = What::Sql(sql, Some(job.statement));
            }
        }
        let mut sink = Erased {
            collectors: self.items.iter_mut().map(|i| i.collector.take()).collect(),
            results: Vec::with_capacity(self.items.len()),
        };
        self.conn
            .run_pipeline(self.items.iter_mut(), &mut sink, self.mode)
            .await?;
        Ok(PipelineResults {
            results: sink.results.into_iter().map(Some).collect(),
        })
    }
}

struct Erased<'q> {
    collectors: Vec<Option<Box<dyn Collector + 'q>>>,
    results: Vec<Result<Box<dyn Any + Send>, Error>>,
}

impl Sink for Erased<'_> {
    fn row(&mut self, index: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        match self.collectors.get_mut(index) {
            Some(Some(c)) => c.row(data, statement),
            _ => Ok(()),
        }
    }
    fn done(&mut self, index: usize, result: Result<u64, Error>) {
        let collector = self.collectors.get_mut(index).and_then(Option::take);
        self.results.push(match (result, collector) {
            (Ok(n), Some(c)) => Ok(c.finish(n)),
            (Ok(_), None) => Err(Error::new(
                Kind::Usage,
                "the query's result was already taken",
            )),
            (Err(e), _) => Err(e),
        });
    }
}

/// The results of a [`PipelineBuilder`] run, taken out with the handles.
pub struct PipelineResults {
    results: Vec<Option<Result<Box<dyn Any + Send>, Error>>>,
}

impl std::fmt::Debug for PipelineResults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PipelineResults")
            .field("queries", &self.results.len())
            .finish()
    }
}

impl PipelineResults {
    /// Takes the result of the query `handle` stands for: its rows (or count), or its error.
    pub fn get<T: 'static>(&mut self, handle: Handle<T>) -> Result<T, Error> {
        let taken = self.results.get_mut(handle.index).and_then(Option::take);
        match taken {
            Some(Ok(value)) => value.downcast::<T>().map(|b| *b).map_err(|_| {
                Error::new(
                    Kind::Usage,
                    "the handle belongs to another pipeline; use the handles of this run",
                )
            }),
            Some(Err(e)) => Err(e),
            None => Err(Error::new(
                Kind::Usage,
                "this query's result was already taken, or the handle belongs to another pipeline",
            )),
        }
    }
}
