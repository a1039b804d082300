//! The I/O task of a shared client: it owns the connection and runs the requests as one
//! continuous per-query pipeline ([`feed`]: each query its own Sync, requests written as
//! they arrive while replies to earlier ones are read), each reply routed to the request it
//! answers, in order. A request whose statement needs a round trip of its own first runs as
//! a batch of its own ([`Connection::run_batch`]) once the pipeline has drained.
//!
//! While nothing is queued it watches the idle socket, so a connection the server ended
//! (a terminated backend, a restart) fails the client at once, not at its next query.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc;

use super::feed;
use super::reply::ReplyTo;
use super::wire::{Wire, Wires};
use crate::conn::pipeline::{Job, Mode, Source};
use crate::conn::row_sink::RowSink;
use crate::conn::timeout::timed;
use crate::conn::{Connection, Statement};
use crate::error::{Error, Kind, is_stale};
use crate::proto::message::{DataRow, TransactionStatus};
use crate::template::Template;
use crate::types::Oid;

/// The most queries in flight (or in one batch); more wait in the queue.
pub(super) const MAX_BATCH: usize = 4096;

/// One caller's request: its queries, in order, and where their results go.
pub(crate) struct Request {
    pub(crate) queries: Queries,
    pub(crate) reply: ReplyTo,
}

/// The queries of a request: most requests have one, kept in place.
pub(crate) enum Queries {
    One(Query),
    Many(Vec<Query>),
}

impl Queries {
    /// The queries, in order.
    pub(crate) fn as_slice(&self) -> &[Query] {
        match self {
            Queries::One(query) => std::slice::from_ref(query),
            Queries::Many(queries) => queries,
        }
    }
}

impl IntoIterator for Queries {
    type Item = Query;
    type IntoIter = QueriesIter;
    fn into_iter(self) -> QueriesIter {
        // Note: an empty `Vec` does not allocate, so a request of one query stays in place.
        let (one, many) = match self {
            Queries::One(query) => (Some(query), Vec::new()),
            Queries::Many(queries) => (None, queries),
        };
        one.into_iter().chain(many)
    }
}

/// The queries of a request, by value.
pub(crate) type QueriesIter =
    std::iter::Chain<std::option::IntoIter<Query>, std::vec::IntoIter<Query>>;

/// One query of a request, its parameters encoded by the caller.
pub(crate) struct Query {
    pub(crate) statement: Prepare,
    pub(crate) params: Wires,
}

/// What a query runs.
pub(crate) enum Prepare {
    /// A compiled query, prepared once per connection under its template's name.
    Template(&'static Template),
    /// Run-time SQL, prepared with its parameters typed by their values.
    Sql { sql: Box<str>, types: Vec<Oid> },
}

/// The state the handles and the I/O task share.
#[derive(Default)]
pub(crate) struct State {
    /// Set once the I/O task has stopped taking requests.
    pub(crate) closed: AtomicBool,
}

/// Serves the requests of a client's handles until they are all dropped or the connection
/// fails; then fails what is still queued and closes the connection.
pub(crate) async fn serve(
    mut conn: Connection,
    mut requests: mpsc::UnboundedReceiver<Request>,
    state: Arc<State>,
) {
    let mut leftover: Option<Request> = None;
    let end = loop {
        let first = tokio::select! {
            biased;
            request = requests.recv() => match request {
                Some(request) => request,
                None => break None,
            },
            e = conn.watch_idle() => break Some(e),
        };
        leftover = conn.run_continuous(first, &mut requests).await;
        if conn.is_closed() {
            break Some(Error::new(
                Kind::Closed,
                "the shared client's connection failed; take a new client from the pool",
            ));
        }
        if conn.transaction_status() != TransactionStatus::Idle {
            // Note: a statement the guard did not recognise opened a transaction block; the
            // other tasks' queries would run inside it. End the session instead.
            break Some(Error::new(
                Kind::Closed,
                "a statement opened a transaction on a shared client, so its connection was \
                 closed; run transactions on a connection of their own (pool.acquire())",
            ));
        }
    };
    state.closed.store(true, Ordering::Release);
    requests.close();
    while let Some(request) = leftover.take().or_else(|| requests.try_recv().ok()) {
        let cause = end
            .as_ref()
            .map_or_else(|| "the client was closed".to_owned(), ToString::to_string);
        request.reply.fail(Error::new(
            Kind::Closed,
            format!("the query was not sent ({cause}); it did not run"),
        ));
    }
    conn.close().await;
}

/// A query of a batch as the pipeline engine takes it.
struct Ready<'b> {
    source: Source<'b>,
    params: &'b [Wire],
}

impl Job for Ready<'_> {
    type Param = Wire;
    fn source(&self) -> Source<'_> {
        match self.source {
            Source::Template(t) => Source::Template(t),
            Source::Statement(s) => Source::Statement(s),
        }
    }
    fn params(&self) -> &[Wire] {
        self.params
    }
}

/// Hands each reply of a batch to the request it answers.
struct Route<'b> {
    replies: &'b [ReplyTo],
    /// For each query of the batch (by its index in the pipeline): its request, and its
    /// index within that request.
    map: &'b [(usize, usize)],
    /// Queries of the batch whose statement was gone or changed (see [`is_stale`]).
    stale: Vec<usize>,
}

impl RowSink for Route<'_> {
    fn row(&mut self, query: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        match self.map.get(query) {
            Some(&(r, q)) => self.replies[r].row(q, data, statement),
            None => Ok(()),
        }
    }

    fn done(&mut self, query: usize, result: Result<u64, Error>) {
        if let Err(e) = &result
            && is_stale(e)
        {
            self.stale.push(query);
        }
        if let Some(&(r, q)) = self.map.get(query) {
            self.replies[r].done(q, result);
        }
    }
}

impl Connection {
    /// Runs `first` and the requests that keep arriving as one continuous per-query
    /// pipeline ([`feed`]), until every reply is read and none is queued (with a query
    /// time-out: none is taken after half of it has passed, so the time-out bounds the
    /// run). A request whose statement needs a round trip of its own first (run-time SQL
    /// not prepared yet, a compiled query with a parameter of a user type on its first use)
    /// waits for the pipeline to drain and then runs as a batch of its own. Returns a request
    /// taken but not run because the connection failed or is inside a transaction block.
    async fn run_continuous(
        &mut self,
        first: Request,
        requests: &mut mpsc::UnboundedReceiver<Request>,
    ) -> Option<Request> {
        let (held, stale) = feed::run(self, first, requests).await;
        for prepare in stale {
            match prepare {
                Prepare::Template(t) => self.evict_template(t.name),
                Prepare::Sql { sql, types } => self.evict(&typed_key(&sql, &types)),
            }
        }
        let held = held?;
        if self.is_closed() || self.transaction_status() != TransactionStatus::Idle {
            return Some(held);
        }
        self.run_batch(&mut vec![held]).await;
        None
    }

    /// Runs a batch of requests as one per-query pipeline; every request gets its result.
    async fn run_batch(&mut self, batch: &mut Vec<Request>) {
        // Note: a caller that stopped waiting before its query was written costs nothing.
        let (queries, replies): (Vec<_>, Vec<_>) = batch
            .drain(..)
            .filter(|request| !request.reply.is_abandoned())
            .map(|request| (request.queries, request.reply))
            .unzip();
        let mut statements: Vec<Vec<Option<Statement>>> = Vec::with_capacity(queries.len());
        for (request, reply) in queries.iter().zip(&replies) {
            let request = request.as_slice();
            let mut prepared = Vec::with_capacity(request.len());
            for query in request {
                let described = match &query.statement {
                    Prepare::Template(t) => self.describe_user_typed(t).await.map(|()| None),
                    Prepare::Sql { sql, types } => self.prepare_typed(sql, types).await.map(Some),
                };
                match described {
                    Ok(statement) => prepared.push(statement),
                    Err(e) => {
                        reply.fail(e);
                        prepared.clear();
                        break;
                    }
                }
            }
            if self.is_closed() {
                fail_all(
                    &replies,
                    "the connection failed while preparing a statement",
                );
                return;
            }
            statements.push(prepared);
        }
        let mut jobs = Vec::new();
        let mut map = Vec::new();
        for (r, (request, prepared)) in queries.iter().zip(&statements).enumerate() {
            let request = request.as_slice();
            if prepared.len() != request.len() {
                // Note: a statement of this request could not be prepared; it has failed.
                continue;
            }
            for (q, (query, statement)) in request.iter().zip(prepared).enumerate() {
                let source = match (&query.statement, statement) {
                    (Prepare::Template(t), _) => Source::Template(t),
                    (Prepare::Sql { .. }, Some(s)) => Source::Statement(s),
                    (Prepare::Sql { .. }, None) => continue,
                };
                jobs.push(Ready {
                    source,
                    params: query.params.as_slice(),
                });
                map.push((r, q));
            }
        }
        let mut route = Route {
            replies: &replies,
            map: &map,
            stale: Vec::new(),
        };
        let ran = self.run_pipeline(jobs, &mut route, Mode::PerQuery).await;
        let stale = route.stale;
        if let Err(e) = ran {
            for reply in &replies {
                reply.fail(e.for_another_caller());
            }
        }
        for query in stale {
            let Some(&(r, q)) = map.get(query) else {
                continue;
            };
            match queries.get(r).and_then(|request| request.as_slice().get(q)) {
                Some(Query {
                    statement: Prepare::Template(t),
                    ..
                }) => self.evict_template(t.name),
                Some(Query {
                    statement: Prepare::Sql { sql, types },
                    ..
                }) => self.evict(&typed_key(sql, types)),
                None => {}
            }
        }
    }

    /// Describes a compiled query with a parameter of a user type (OID 0) on its first use
    /// on this connection, in a round trip of its own: it is bound with the server's OID for
    /// that type, which a pipeline cannot wait for mid-batch. Other templates are described
    /// by the pipeline itself.
    async fn describe_user_typed(&mut self, template: &'static Template) -> Result<(), Error> {
        if !template.param_oids.contains(&0) || self.cache.get_template(template.name).is_some() {
            return Ok(());
        }
        timed!(self, self.describe_user_typed_untimed(template))
    }

    async fn describe_user_typed_untimed(
        &mut self,
        template: &'static Template,
    ) -> Result<(), Error> {
        self.ready_without_reset().await?;
        crate::template::conformance::check_bind_prefix(template)?;
        self.describe_template(template, template.name).await?;
        Ok(())
    }

    /// The statement for `sql` with parameters of `types`, prepared once per connection.
    async fn prepare_typed(&mut self, sql: &str, types: &[Oid]) -> Result<Statement, Error> {
        let key = typed_key(sql, types);
        if let Some(statement) = self.cache.get(&key) {
            return Ok(statement);
        }
        timed!(self, self.prepare_typed_untimed(&key, sql, types))
    }

    async fn prepare_typed_untimed(
        &mut self,
        key: &str,
        sql: &str,
        types: &[Oid],
    ) -> Result<Statement, Error> {
        self.ready_without_reset().await?;
        if !self.cache.is_enabled() {
            return Err(Error::new(
                Kind::Usage,
                "a shared client prepares run-time SQL once per connection, which needs the \
                 statement cache; keep its size above 0",
            ));
        }
        let name = self.cache.next_name();
        self.unconfirmed.push(name.clone());
        let prepared = self.prepare_with_types(name.clone(), sql, types).await;
        self.unconfirmed.retain(|n| *n != name);
        let statement = prepared?;
        for evicted in self.cache.insert(key, statement.clone()) {
            crate::conn::prepare::close_statement(&mut self.stream, &evicted);
        }
        Ok(statement)
    }

    /// Waits while no request is queued: returns the error that ended the connection when
    /// the server closes it (or sends anything but a notice, a parameter report or a
    /// notification). Cancel safe: reads only append to the read buffer.
    async fn watch_idle(&mut self) -> Error {
        if self.syncs.pending() > 0 || self.is_closed() {
            // Note: replies are owed (the next batch reads them first), or the connection
            // failed (the next batch reports it).
            return std::future::pending().await;
        }
        loop {
            loop {
                match self.stream.try_frame() {
                    Ok(Some(message)) if message.is_asynchronous() => {
                        if let Err(e) = self.on_async(message) {
                            return e;
                        }
                    }
                    Ok(Some(_)) => return self.protocol_error("a reply while no query was sent"),
                    Ok(None) => break,
                    Err(e) => return e,
                }
            }
            if let Err(e) = self.stream.fill().await {
                return e;
            }
        }
    }
}

/// The statement cache's key for run-time SQL prepared with parameter types `types`.
pub(super) fn typed_key(sql: &str, types: &[Oid]) -> String {
    use std::fmt::Write;
    let mut key = String::with_capacity(sql.len() + 4 + 6 * types.len());
    key.push_str(sql);
    key.push('\0');
    for ty in types {
        let _ = write!(key, "{ty},");
    }
    key
}

/// Fails every request of `batch` not answered yet.
fn fail_all(replies: &[ReplyTo], why: &str) {
    for reply in replies {
        reply.fail(Error::new(
            Kind::Closed,
            format!("{why}; the query did not run"),
        ));
    }
}
