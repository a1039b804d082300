//! [`Client`]: one connection shared by any number of tasks.
//!
//! Each handle (cheap to clone, `Send + Sync`) queues its request — its queries, their
//! parameters already encoded, and where the result goes — on a lock-free queue; one I/O
//! task ([`io`]) owns the connection and runs the requests as one continuous per-query
//! pipeline ([`feed`]): each query its own Bind + Execute + Sync (a compiled query's first
//! use on the connection is described first, once, however many tasks use it at the same
//! time), a request that arrives while replies to earlier ones are read written at once —
//! or, while the server has 8 or more of the client's queries in hand, once the tasks ready
//! to run have queued theirs, so that they all go out in one write — replies read in order
//! and handed to the request each answers ([`reply`]). At most 4,096 queries are in flight;
//! more wait in the queue until replies are read. Rows are decoded by the I/O task as they
//! arrive. A request whose statement needs a round trip of its own
//! (run-time SQL on its first use, a compiled query with a parameter of a user type on its
//! first use) waits until the replies in flight are read, is prepared, and runs on its own.
//!
//! A request costs the caller one allocation, its reply's slot ([`reply`]), shared with the I/O
//! task; its queries and up to two small parameters each travel in place.
//!
//! Cancel safety: a caller that stops waiting marks its reply's slot abandoned; a request not
//! yet written is skipped, and the replies of one already written are read in turn and
//! dropped, never delivered to another caller.
//!
//! Errors: a query's error reply fails that query only (each has its own Sync). When the
//! connection fails, each request in flight gets its own error — outcome unknown when its
//! Sync was sent, closed when it was not sent — and every request still queued a closed
//! error; the handles report [`Client::is_closed`] and a [`ClientPool`](crate::ClientPool)
//! replaces the client.

mod feed;
mod guard;
pub(crate) mod io;
pub(crate) mod reply;
mod wire;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::mpsc;

use super::Connection;
use crate::config::Config;
use crate::error::{Error, Kind};
use crate::proto::message::TransactionStatus;
use crate::row::Row;
use crate::template::{Arg, Decoder, Query, Template};
use crate::types::Encode;
use io::{Prepare, Queries, Request, State};
use reply::{Collect, Each, Gather, One, Rows, Slot, SqlRows};

/// One connection shared by any number of tasks: their queries are written together and
/// each gets its own replies back, in order.
///
/// Cheap to clone (an [`Arc`]) and `Send + Sync`: give each task a clone, or share
/// `&Client`. Compiled queries run on it like on a connection
/// (`qail!(…).fetch_all(&mut client)`, `fetch_one`, `fetch_optional`, `execute`; `&mut` only
/// because those methods take every [`Runner`](crate::Runner) so; `&mut &client` works from a
/// shared reference), and so does run-time SQL
/// ([`query`](Client::query), [`execute`](Client::execute)) and per-query pipelines
/// ([`pipeline`](Client::pipeline)).
///
/// ```no_run
/// # async fn run() -> Result<(), qail_pg::Error> {
/// let client = qail_pg::Client::connect("postgres://postgres@localhost/postgres").await?;
/// let tasks: Vec<_> = (0..100i32)
///     .map(|i| {
///         let client = client.clone();
///         tokio::spawn(async move { client.query("SELECT $1::int4 * 2", &[&i]).await })
///     })
///     .collect();
/// for (i, task) in (0..100i32).zip(tasks) {
///     let rows = task.await.expect("the task ran")?;
///     assert_eq!(rows[0].get::<i32>(0), i * 2);
/// }
/// # Ok(()) }
/// ```
///
/// What needs the connection to itself is not available here: transactions (there is no
/// `begin`, and `BEGIN`, `COMMIT`, `SAVEPOINT`… as SQL are refused), COPY, LISTEN, row
/// streams and `for_each`; take a [`Connection`] from a [`Pool`](crate::Pool) for those. The
/// session's settings (`SET`) are shared by every task using the client.
///
/// Run-time SQL is prepared once per connection with each parameter typed by its value
/// ([`Encode::type_oid`]), not by what the server infers: `$1` bound to an `i32` is an
/// `int4`, and the server casts it where the statement needs another type. Behind a pooler
/// in transaction mode ([`Pooler::Transaction`](crate::Pooler::Transaction)) a client cannot
/// be made; use a [`Pool`](crate::Pool).
///
/// Time-outs: the connection's query time-out ([`Connection::set_query_timeout`], set before
/// [`Client::new`]) applies to each run of the pipeline, which takes no new request once half
/// the time-out has passed (the requests then wait for the next run); when it expires, the
/// queries in flight are cancelled and their callers get the time-out error. A caller waits
/// at most twice that time-out plus 2 s (the run before its own, then its own, each with its
/// cancel), after which it gets a time-out error whose outcome is unknown. Without a time-out a caller waits for the
/// server as long as a connection's caller would.
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
}

struct Shared {
    requests: mpsc::UnboundedSender<Request>,
    state: Arc<State>,
    process_id: i32,
    /// How long a caller waits for its reply, when the connection has a query time-out.
    wait_limit: Option<Duration>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("process_id", &self.shared.process_id)
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects with a libpq connection string (URL or `key=value`) and shares the
    /// connection. Must be called inside a tokio runtime (the client's I/O task is spawned
    /// on it).
    pub async fn connect(s: &str) -> Result<Client, Error> {
        let config = Config::parse(s)?;
        Client::connect_with(&config).await
    }

    /// Connects with a parsed [`Config`] and shares the connection.
    pub async fn connect_with(config: &Config) -> Result<Client, Error> {
        Client::new(Connection::connect_with(config).await?)
    }

    /// Shares an open connection; its query time-out and statement cache size are kept.
    /// Must be called inside a tokio runtime (the client's I/O task is spawned on it).
    ///
    /// Refused for a connection inside a transaction block, behind a pooler in transaction
    /// mode, or with the statement cache off (size 0): each prepared statement is shared by
    /// every task, so it must be kept.
    pub fn new(conn: Connection) -> Result<Client, Error> {
        if conn.transaction_status() != TransactionStatus::Idle {
            return Err(Error::new(
                Kind::Usage,
                "the connection is inside a transaction block; commit or roll it back before \
                 sharing the connection",
            ));
        }
        if conn.pooled_transactions || !conn.cache.is_enabled() {
            return Err(Error::new(
                Kind::Usage,
                "a shared client keeps its prepared statements on the server, which needs the \
                 statement cache and no pooler in transaction mode; use a Pool instead",
            ));
        }
        let wait_limit = conn
            .query_timeout()
            .map(|limit| 2 * limit + Duration::from_secs(2));
        let process_id = conn.process_id();
        let state = Arc::new(State::default());
        let (requests, receiver) = mpsc::unbounded_channel();
        tokio::spawn(io::serve(conn, receiver, Arc::clone(&state)));
        Ok(Client {
            shared: Arc::new(Shared {
                requests,
                state,
                process_id,
                wait_limit,
            }),
        })
    }

    /// Whether the connection is closed or broken: every query fails, and the client must be
    /// replaced ([`ClientPool::client`](crate::ClientPool::client) does).
    pub fn is_closed(&self) -> bool {
        self.shared.state.closed.load(Ordering::Acquire) || self.shared.requests.is_closed()
    }

    /// The server process ID serving the shared connection.
    pub fn process_id(&self) -> i32 {
        self.shared.process_id
    }

    /// Runs `sql` with `params` and returns every row (see [`Connection::query`]; the
    /// parameters are typed by their values, see [`Client`]).
    pub async fn query(
        &self,
        sql: &str,
        params: &[&(dyn Encode + Sync)],
    ) -> Result<Vec<Row>, Error> {
        self.sql(sql, params, SqlRows(Vec::new())).await
    }

    /// Runs `sql` and returns its only row; an error when it returns none or several.
    pub async fn query_one(
        &self,
        sql: &str,
        params: &[&(dyn Encode + Sync)],
    ) -> Result<Row, Error> {
        super::query::exactly_one(self.query(sql, params).await?)
    }

    /// Runs `sql` and returns its row, if any; an error when it returns several.
    pub async fn query_opt(
        &self,
        sql: &str,
        params: &[&(dyn Encode + Sync)],
    ) -> Result<Option<Row>, Error> {
        super::query::at_most_one(self.query(sql, params).await?)
    }

    /// Runs `sql` and returns the number of rows it affected (0 for statements without a
    /// count).
    pub async fn execute(&self, sql: &str, params: &[&(dyn Encode + Sync)]) -> Result<u64, Error> {
        self.sql(sql, params, reply::Affected).await
    }

    /// Runs compiled queries as one per-query pipeline and returns each query's rows, or its
    /// error, in order (as [`Connection::pipeline`]: each query is its own cycle and commits
    /// on its own). Its queries are written together, and with other tasks' queries. The
    /// outer error: a query could not be encoded or is refused (see [`Client`]), the client
    /// was closed before the pipeline was written, or the batch timed out; when the
    /// connection fails mid-pipeline, each query's own result says what became of it (done,
    /// not run, or outcome unknown).
    ///
    /// An atomic pipeline needs the connection to itself (its batch is one transaction): run
    /// it on a connection from a [`Pool`](crate::Pool).
    pub async fn pipeline<'q, D>(
        &self,
        queries: impl IntoIterator<Item = Query<'q, D>>,
    ) -> Result<Vec<Result<Vec<D::Row>, Error>>, Error>
    where
        D: Decoder<Row: Send + 'static>,
    {
        let mut encoded = Vec::new();
        for query in queries {
            encoded.push(compiled(query.template, query.params.as_slice())?);
        }
        if encoded.is_empty() {
            return Ok(Vec::new());
        }
        let each = Each::new(encoded.len(), Rows::of::<D>);
        self.request(Queries::Many(encoded), each).await
    }

    /// Runs a compiled query, its rows gathered by `gather`.
    pub(crate) async fn run_template<G: Gather>(
        &self,
        template: &'static Template,
        params: &[Arg<'_>],
        gather: G,
    ) -> Result<G::Output, Error> {
        let query = compiled(template, params)?;
        self.request(Queries::One(query), One::new(gather)).await
    }

    async fn sql<G: Gather>(
        &self,
        sql: &str,
        params: &[&(dyn Encode + Sync)],
        gather: G,
    ) -> Result<G::Output, Error> {
        guard::check(sql)?;
        let (params, types) = wire::sql_params(params)?;
        let query = io::Query {
            statement: Prepare::Sql {
                sql: sql.into(),
                types,
            },
            params,
        };
        self.request(Queries::One(query), One::new(gather)).await
    }

    /// Queues a request for the I/O task and waits for its result, within the client's
    /// limit. Dropping this future abandons the request: the I/O task then drops its reply.
    async fn request<C, T>(&self, queries: Queries, collect: C) -> Result<T, Error>
    where
        C: Collect<Output = Result<T, Error>>,
    {
        let (reply, waiting) = Slot::open(collect);
        self.shared
            .requests
            .send(Request { queries, reply })
            .map_err(|_| closed())?;
        match self.shared.wait_limit {
            None => waiting.await,
            Some(limit) => match tokio::time::timeout(limit, waiting).await {
                Ok(received) => received,
                Err(_) => Err(Error::new(
                    Kind::Timeout,
                    format!(
                        "no reply within {limit:?} (twice the connection's query time-out \
                         and 2 s) on the shared client; the server or the network may be \
                         down"
                    ),
                )
                .outcome_unknown()),
            },
        }
    }
}

/// A compiled query as a request carries it.
fn compiled(template: &'static Template, params: &[Arg<'_>]) -> Result<io::Query, Error> {
    guard::check(template.sql())?;
    Ok(io::Query {
        statement: Prepare::Template(template),
        params: wire::template_params(template, params)?,
    })
}

/// The error for a client whose connection is gone.
#[cold]
pub(super) fn closed() -> Error {
    Error::new(
        Kind::Closed,
        "the shared client's connection is closed; take a new client (ClientPool::client \
         replaces a broken one)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_sync<T: Send + Sync + Clone + 'static>() {}

    #[test]
    fn a_client_is_shared_between_tasks() {
        send_sync::<Client>();
        send_sync::<std::sync::Arc<crate::ClientPool>>();
    }
}
