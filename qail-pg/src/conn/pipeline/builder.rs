//! [`PipelineBuilder`]: one pipeline of queries with different row types, per query or atomic.

use std::any::Any;
use std::marker::PhantomData;

use super::batch::{Pipeline, SqlQueries};
use super::engine::{Job, Source};
use super::mode::{Atomic, Mode, PerQuery};
use crate::conn::row_sink::RowSink;
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

/// What a query added to a [`PipelineBuilder`] collects for its [`Handle`]: its rows, taken
/// as any [`RowSink`] takes them, then, when the query ends, the value the handle takes out
/// (its rows or its count), type-erased. Boxed per query, so queries of different row types
/// share one pipeline.
trait HandleValue: RowSink + Send {
    /// The value of a query that succeeded with `affected` rows.
    fn finish(self: Box<Self>, affected: u64) -> Box<dyn Any + Send>;
}

/// The typed rows of a compiled query.
struct CollectTyped<D: Decoder>(Vec<D::Row>);

impl<D: Decoder> RowSink for CollectTyped<D> {
    fn row(&mut self, _: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        self.0
            .push(D::decode(&mut RawRow::new(data), statement.column_oids())?);
        Ok(())
    }
}

impl<D: Decoder> HandleValue for CollectTyped<D>
where
    D::Row: Send + 'static,
{
    fn finish(self: Box<Self>, _: u64) -> Box<dyn Any + Send> {
        Box::new(self.0)
    }
}

/// The rows of a run-time SQL query.
struct CollectRows(Vec<Row>);

impl RowSink for CollectRows {
    fn row(&mut self, _: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        let row = Row::new(statement.shared_columns().clone(), data).map_err(Error::from)?;
        self.0.push(row);
        Ok(())
    }
}

impl HandleValue for CollectRows {
    fn finish(self: Box<Self>, _: u64) -> Box<dyn Any + Send> {
        Box::new(self.0)
    }
}

/// The count of a query whose rows are not read.
struct CollectCount;

impl RowSink for CollectCount {
    fn row(&mut self, _: usize, _: DataRow<'_>, _: &Statement) -> Result<(), Error> {
        Ok(())
    }
}

impl HandleValue for CollectCount {
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
    collector: Option<Box<dyn HandleValue + 'q>>,
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
    collectors: Vec<Option<Box<dyn HandleValue + 'q>>>,
    results: Vec<Result<Box<dyn Any + Send>, Error>>,
}

impl RowSink for Erased<'_> {
    fn row(&mut self, index: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        match self.collectors.get_mut(index) {
            Some(Some(c)) => c.row(index, data, statement),
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
