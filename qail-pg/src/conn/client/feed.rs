//! Continuous pipelining for a shared client: the requests that arrive while replies to
//! earlier ones are read are written in the same per-query pipeline
//! ([`Connection::run_feed`]) — at once, or, while the server is busy with earlier ones,
//! together with those the other tasks queue meanwhile — and each reply is routed to its
//! request in order.
//!
//! Bounded: at most [`MAX_BATCH`] queries are in flight (written, or taken to be written,
//! and not answered yet); more wait in the client's queue until replies are read. The engine
//! encodes at most its chunk of bytes ahead of the socket.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Instant;

use tokio::sync::mpsc;

use super::io::{MAX_BATCH, Prepare, QueriesIter, Request, typed_key};
use super::reply::ReplyTo;
use super::wire::{Wire, Wires};
use crate::conn::pipeline::{Feed, Job, Source};
use crate::conn::row_sink::RowSink;
use crate::conn::{Connection, Statement};
use crate::error::{Error, is_stale};
use crate::proto::message::{DataRow, TransactionStatus};
use crate::template::Template;

/// Runs `first` and the requests that follow it as one continuous pipeline. Returns the
/// request taken but not written (its statement needs a round trip of its own first, or the
/// connection failed or left the idle state), and the statements found gone or changed, to
/// evict.
pub(super) async fn run(
    conn: &mut Connection,
    first: Request,
    requests: &mut mpsc::UnboundedReceiver<Request>,
) -> (Option<Request>, Vec<Prepare>) {
    let routes = Mutex::new(Routes::default());
    let mut feeder = Feeder {
        requests,
        held: Some(first),
        current: None,
        ended: false,
        until: conn.query_timeout().map(|limit| Instant::now() + limit / 2),
        routes: &routes,
    };
    let ran = conn
        .run_feed(&mut feeder, &mut Routed { routes: &routes })
        .await;
    let held = feeder.held.take();
    let routes = routes.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Err(e) = ran {
        // Note: the run timed out (its queries were cancelled) or the connection failed;
        // every request started and not answered fails.
        for reply in &routes.replies {
            reply.fail(e.for_another_caller());
        }
    }
    (held, routes.stale)
}

/// What a written query runs, owned by its job.
enum Owned {
    Template(&'static Template),
    Statement(Statement),
}

/// One query handed to the engine.
struct Sent {
    source: Owned,
    params: Wires,
}

impl Job for Sent {
    type Param = Wire;
    fn source(&self) -> Source<'_> {
        match &self.source {
            Owned::Template(t) => Source::Template(t),
            Owned::Statement(s) => Source::Statement(s),
        }
    }
    fn params(&self) -> &[Wire] {
        self.params.as_slice()
    }
}

/// The queries in flight, in the order they were written, and the requests they answer.
#[derive(Default)]
struct Routes {
    /// Each query handed to the engine and not answered yet; the front is query `base`.
    queries: VecDeque<Route>,
    base: usize,
    /// The requests started and not answered yet, in order; the front is request `reply_base`.
    replies: VecDeque<ReplyTo>,
    reply_base: usize,
    /// How many requests were started.
    started: usize,
    /// Statements found gone or changed: no new request is started until they are evicted.
    stale: Vec<Prepare>,
}

/// One query in flight.
struct Route {
    /// Its request (counted from the run's first) and its index within that request.
    request: usize,
    query: usize,
    /// Whether it is its request's last query.
    last: bool,
    /// What it runs, to evict when the server says the statement is gone or changed.
    prepare: Prepare,
}

/// The queries of a request not handed out yet, with the statements prepared for its
/// run-time SQL (found when the request was started: one may be evicted from the cache
/// while the request is handed out), and the index of the next query within the request.
struct Current {
    queries: QueriesIter,
    statements: std::vec::IntoIter<Statement>,
    within: usize,
    /// How many queries the request has.
    len: usize,
}

/// The requests of a client's queue as the engine takes them.
struct Feeder<'a> {
    requests: &'a mut mpsc::UnboundedReceiver<Request>,
    /// A request received and not started.
    held: Option<Request>,
    /// The queries of the request being handed out.
    current: Option<Current>,
    /// Every handle is dropped.
    ended: bool,
    /// With a query time-out: no request is started after this instant.
    until: Option<Instant>,
    routes: &'a Mutex<Routes>,
}

impl Feeder<'_> {
    /// Whether a new request may be started now (the request being handed out continues).
    fn open(&self) -> bool {
        if self.until.is_some_and(|until| Instant::now() >= until) {
            return false;
        }
        let routes = lock(self.routes);
        routes.queries.len() < MAX_BATCH && routes.stale.is_empty()
    }

    /// Starts the next request queued, if one can be written now.
    fn start(&mut self, conn: &mut Connection) -> bool {
        if conn.is_closed() || conn.transaction_status() != TransactionStatus::Idle || !self.open()
        {
            return false;
        }
        loop {
            let request = match self.held.take() {
                Some(request) => request,
                None => match self.requests.try_recv() {
                    Ok(request) => request,
                    Err(_) => return false,
                },
            };
            // Note: a caller that stopped waiting before its query was written costs nothing.
            if request.reply.is_abandoned() || request.queries.as_slice().is_empty() {
                continue;
            }
            // Note: a compiled query's source is its template; only run-time SQL needs its
            // statement kept, so a request of compiled queries allocates nothing here.
            let mut statements = Vec::new();
            for query in request.queries.as_slice() {
                let ready = match &query.statement {
                    Prepare::Template(t) => {
                        !t.param_oids.contains(&0) || conn.cache.get_template(t.name).is_some()
                    }
                    Prepare::Sql { sql, types } => match conn.cache.get(&typed_key(sql, types)) {
                        Some(statement) => {
                            statements.push(statement);
                            true
                        }
                        None => false,
                    },
                };
                if !ready {
                    // Note: it needs a round trip of its own; it runs once the pipeline has
                    // drained.
                    self.held = Some(request);
                    return false;
                }
            }
            let Request { queries, reply } = request;
            let len = queries.as_slice().len();
            let mut routes = lock(self.routes);
            routes.replies.push_back(reply);
            routes.started += 1;
            drop(routes);
            self.current = Some(Current {
                queries: queries.into_iter(),
                statements: statements.into_iter(),
                within: 0,
                len,
            });
            return true;
        }
    }
}

impl Feed for Feeder<'_> {
    type Job = Sent;

    fn next(&mut self, conn: &mut Connection) -> Option<Sent> {
        loop {
            if let Some(current) = &mut self.current {
                if let Some(query) = current.queries.next() {
                    let source = match &query.statement {
                        Prepare::Template(t) => Owned::Template(t),
                        Prepare::Sql { .. } => Owned::Statement(current.statements.next().expect(
                            "the request's start kept a statement for each of its run-time SQL \
                             queries, in order",
                        )),
                    };
                    let last = current.within + 1 == current.len;
                    let mut routes = lock(self.routes);
                    let request = routes.started - 1;
                    routes.queries.push_back(Route {
                        request,
                        query: current.within,
                        last,
                        prepare: query.statement,
                    });
                    current.within += 1;
                    return Some(Sent {
                        source,
                        params: query.params,
                    });
                }
                self.current = None;
            }
            if !self.start(conn) {
                return None;
            }
        }
    }

    async fn arrival(&mut self) {
        if self.held.is_some() || self.ended || !self.open() {
            return std::future::pending().await;
        }
        match self.requests.recv().await {
            Some(request) => self.held = Some(request),
            None => self.ended = true,
        }
    }
}

/// Hands each reply to the request it answers.
struct Routed<'a> {
    routes: &'a Mutex<Routes>,
}

impl RowSink for Routed<'_> {
    fn row(&mut self, query: usize, data: DataRow<'_>, statement: &Statement) -> Result<(), Error> {
        let mut routes = lock(self.routes);
        let routes = &mut *routes;
        let Some(route) = query
            .checked_sub(routes.base)
            .and_then(|i| routes.queries.get(i))
        else {
            return Ok(());
        };
        match route
            .request
            .checked_sub(routes.reply_base)
            .and_then(|i| routes.replies.get_mut(i))
        {
            Some(reply) => reply.row(route.query, data, statement),
            None => Ok(()),
        }
    }

    fn done(&mut self, query: usize, result: Result<u64, Error>) {
        let mut routes = lock(self.routes);
        if query != routes.base {
            return;
        }
        let Some(route) = routes.queries.pop_front() else {
            return;
        };
        routes.base += 1;
        if let Err(e) = &result
            && is_stale(e)
        {
            routes.stale.push(route.prepare);
        }
        if let Some(reply) = routes.replies.front() {
            reply.done(route.query, result);
        }
        if route.last {
            routes.replies.pop_front();
            routes.reply_base += 1;
        }
    }
}

/// Locks the routes; the engine and the feed never panic while holding them, and a poisoned
/// lock's data is still consistent (each change is complete before any call out).
fn lock(routes: &Mutex<Routes>) -> std::sync::MutexGuard<'_, Routes> {
    routes.lock().unwrap_or_else(|e| e.into_inner())
}
