//! The connection pool.
//!
//! [`Pool`] hands out [`PooledConnection`]s (a `DerefMut` to [`Connection`]) and takes them
//! back when they are dropped. Idle connections are reused last-in first-out, so the warmest
//! one (its statement cache, its server backend's caches) serves the next call and surplus
//! ones age out through the idle time-out.
//!
//! A returned connection is never handed to the next user dirty: under the default
//! [`Reset::Session`] a transaction left open is rolled back, and settings, the role, LISTEN
//! registrations, advisory locks, temporary tables and open cursors are reset (`DISCARD ALL`
//! minus `DEALLOCATE ALL`, so prepared statements stay valid); [`Reset::Transaction`] only
//! rolls back, for applications that change no session state ([`Builder::reset`]). The
//! session's part is sent only when the session may have changed since the connection was
//! opened or last reset: after any run-time SQL, or a compiled statement the analyzer marked
//! ([`Template::changes_session`](crate::Template::changes_session): a write, a call of
//! `set_config`, of a session advisory lock function, of `nextval`/`setval`, or of a function
//! that is not built in); a connection that ran only unmarked compiled statements, and left
//! no transaction open, is returned with nothing sent. The
//! reset costs no round trip of its own: it is sent when the connection is returned,
//! without waiting for the answer, which is read when the connection is next checked out
//! (or by its next call, if it has not arrived by then). A broken connection is closed; one
//! returned with a call still in flight (its future was dropped) first has its replies read
//! in the background, within [`Builder::drain_timeout`].
//!
//! # On deadpool
//!
//! The acquire/release core — `max_size` slots, the idle list taken last-in first-out, the
//! waiters — is `deadpool::managed`: the hand-written core it replaced measured only level
//! with deadpool and bb8 (bench/README.md, "The pool"). What a generic pool does not do by
//! itself is in its hooks and around it:
//! - `Manager::recycle` is the checkout: the reset's answer read without a round trip, the
//!   lifetime and `target_session_attrs` checks, the health check of a connection idle for
//!   long;
//! - [`PooledConnection`]'s drop is the release: the reset queued without a round trip, a
//!   broken, expired or strayed connection taken out and closed, one with a call still in
//!   flight drained in the background while it keeps its slot;
//! - `Manager::create` opens in a task of its own, so a connection being opened when its
//!   acquire is dropped is finished and kept for the next one, within `max_size`;
//! - the background task keeps `min_idle` and applies the idle and lifetime limits, and
//!   [`Pool::stats`] keeps the counts deadpool does not.

mod builder;
mod clients;
mod maintain;
mod manager;
mod pooled;
mod replicas;
mod verify;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use deadpool::managed::{PoolError, QueueMode, TimeoutType, Timeouts};

use builder::Options;
pub use builder::{Builder, Reset};
pub use clients::ClientPool;
use manager::Manager;
pub use pooled::PooledConnection;
use replicas::Replicas;

use crate::config::Config;
use crate::conn::BoxedFuture;
use crate::error::{Error, Kind};
use crate::row::Row;
use crate::types::Encode;

/// A pool of connections to one server — or to a primary and its read replicas
/// ([`Pool::acquire_read`]) — cheap to clone (clones share the pool).
///
/// ```no_run
/// # async fn run() -> Result<(), qail_pg::Error> {
/// let pool = qail_pg::Pool::connect("postgres://postgres@localhost/postgres").await?;
/// let mut conn = pool.acquire().await?;
/// let rows = conn.query("SELECT $1::int4 + 1", &[&41i32]).await?;
/// assert_eq!(rows[0].get::<i32>(0), 42);
/// drop(conn); // back to the pool
/// let n = pool.execute("SELECT 1", &[]).await?; // one call on a pooled connection
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Pool {
    inner: Arc<Inner>,
    /// The read replicas for [`Pool::acquire_read`]; none unless given to the builder.
    replicas: Arc<Replicas>,
}

/// What the pool is doing right now; from [`Pool::stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// The most connections the pool opens.
    pub max_size: usize,
    /// Connections open (or being opened): idle plus in use.
    pub size: usize,
    /// Connections waiting in the pool.
    pub idle: usize,
    /// Connections held by users, being opened, or having a cancelled call drained.
    pub in_use: usize,
    /// Calls to [`Pool::acquire`] waiting now for a connection to be returned (all
    /// `max_size` are in use).
    pub waiters: usize,
    /// Connections opened since the pool was created.
    pub created: u64,
    /// Connections closed since the pool was created (broken, expired, idle too long, or the
    /// pool closed).
    pub destroyed: u64,
    /// Of [`destroyed`](Stats::destroyed), the connections closed because they were broken:
    /// the server or the network closed them (found when a call failed, or at checkout), a
    /// health check or the reset failed, or the replies a cancelled call left could not be
    /// read within the drain time-out.
    pub broken: u64,
    /// Calls to [`Pool::acquire`] since the pool was created that found every connection in
    /// use and waited for one (the others took an idle connection or opened one at once).
    pub waits: u64,
    /// The time those calls waited for a connection to be returned, in total, however each
    /// wait ended (a connection, the acquire time-out, the caller giving up). Not counted:
    /// the time to open a connection. `wait_time / waits` is the mean wait.
    pub wait_time: Duration,
    /// The longest of those waits.
    pub max_wait: Duration,
    /// Statements whose Describe differed from what they were compiled against when a
    /// connection first prepared them (schema drift while running; each error names the
    /// query's file:line). Counted for every connection of the process, pooled or not.
    pub schema_drifts: u64,
}

/// State shared by the pool's handles, its connections and its background task.
pub(crate) struct Inner {
    /// The acquire/release core: a semaphore of `max_size` slots over a last-in first-out
    /// list of idle connections.
    pool: deadpool::managed::Pool<Manager>,
    /// Set by [`Pool::close`] before deadpool's pool is closed, so connections returned
    /// meanwhile are closed, not kept.
    closed: AtomicBool,
    waiters: AtomicUsize,
    waits: AtomicU64,
    /// Nanoseconds, in total and the longest.
    wait_time: AtomicU64,
    max_wait: AtomicU64,
}

/// The first attempt of an acquire: a free slot or none, without waiting.
const NO_WAIT: Timeouts = Timeouts {
    wait: Some(Duration::ZERO),
    create: None,
    recycle: None,
};

/// An acquire that waits for a slot (the pool sets no time-out of deadpool's).
const WAIT: Timeouts = Timeouts {
    wait: None,
    create: None,
    recycle: None,
};

impl Pool {
    /// Opens a pool with default options (up to 10 connections) and a libpq connection string.
    /// One connection is opened now, so a wrong address or password is reported here.
    pub async fn connect(url: &str) -> Result<Pool, Error> {
        Builder::new().connect(url).await
    }

    /// Opens a pool with default options and a parsed [`Config`].
    pub async fn connect_with(config: Config) -> Result<Pool, Error> {
        Builder::new().connect_with(config).await
    }

    /// A builder for sizes, time-outs, health checks and warm-up statements.
    pub fn builder() -> Builder {
        Builder::new()
    }

    /// Opens the pool: `min_idle` connections (at least one) to the primary now, so a wrong
    /// address or password is reported here; replicas connect when first read from.
    ///
    /// Note: made here as a [`BoxedFuture`].
    #[inline(never)]
    pub(crate) fn open(
        config: Config,
        options: Options,
        replicas: Vec<Config>,
    ) -> BoxedFuture<'static, Result<Pool, Error>> {
        Box::pin(Pool::open_now(config, options, replicas))
    }

    async fn open_now(
        config: Config,
        options: Options,
        replicas: Vec<Config>,
    ) -> Result<Pool, Error> {
        let initial = options.min_idle.max(1);
        let replicas = replicas
            .into_iter()
            .map(|config| Pool::start(config, options.clone()))
            .collect();
        let retry_after = options.replica_retry_after;
        let replicas = Arc::new(Replicas::new(replicas, retry_after));
        let inner = Pool::inner(config, options);
        let mut opened = Vec::with_capacity(initial);
        for _ in 0..initial {
            opened.push(inner.get(&WAIT).await.map_err(Inner::error)?);
        }
        drop(opened);
        maintain::spawn(&inner);
        Ok(Pool { inner, replicas })
    }

    /// A pool without replicas that opens its connections when they are first needed.
    fn start(config: Config, options: Options) -> Pool {
        let inner = Pool::inner(config, options);
        maintain::spawn(&inner);
        Pool {
            inner,
            replicas: Arc::default(),
        }
    }

    fn inner(config: Config, options: Options) -> Arc<Inner> {
        let max_size = options.max_size;
        let pool = deadpool::managed::Pool::builder(Manager::new(config, options))
            .max_size(max_size)
            .queue_mode(QueueMode::Lifo)
            .build()
            .expect("no deadpool time-out is set, so no runtime is needed");
        Arc::new(Inner {
            pool,
            closed: AtomicBool::new(false),
            waiters: AtomicUsize::new(0),
            waits: AtomicU64::new(0),
            wait_time: AtomicU64::new(0),
            max_wait: AtomicU64::new(0),
        })
    }

    /// Takes a connection from the pool, opening one when none is idle and fewer than
    /// `max_size` are open; waits (up to the acquire time-out) when all are in use.
    ///
    /// Dropping the returned connection gives it back. Dropping this future at any point is
    /// safe: no slot is lost, and a connection being opened is kept for the next caller.
    pub async fn acquire(&self) -> Result<PooledConnection, Error> {
        let attempt = self.inner.acquire();
        match self.inner.options().acquire_timeout {
            Some(limit) => tokio::time::timeout(limit, attempt)
                .await
                .unwrap_or_else(|_| Err(self.timeout_error(limit))),
            None => attempt.await,
        }
    }

    fn timeout_error(&self, limit: Duration) -> Error {
        Error::new(
            Kind::Timeout,
            format!(
                "no pooled connection became available within {limit:?} (all {} were in use); \
                 drop connections sooner, or raise the pool's max_size or acquire_timeout",
                self.inner.options().max_size
            ),
        )
    }

    /// The pool's state: its size, idle and in-use connections and waiters now, and since it
    /// was created the connections opened, closed and broken and the time acquires waited —
    /// of the primary's connections; see [`Pool::replica_stats`] for the replicas'. Each
    /// figure is read on its own (atomically, not all at one instant), without a lock beyond
    /// the idle list's; counting costs the acquire path nothing unless it has to wait (then
    /// it takes a second attempt, which waits).
    ///
    /// ```no_run
    /// # async fn run(pool: qail_pg::Pool) {
    /// let stats = pool.stats();
    /// if stats.waits > 0 {
    ///     let mean = stats.wait_time / u32::try_from(stats.waits).unwrap_or(u32::MAX);
    ///     println!("{} of {} in use; mean wait {mean:?}, longest {:?}; {} broken",
    ///         stats.in_use, stats.max_size, stats.max_wait, stats.broken);
    /// }
    /// # }
    /// ```
    pub fn stats(&self) -> Stats {
        let inner = &self.inner;
        let manager = inner.pool.manager();
        let counts = &manager.counts;
        let size = counts.open.load(Ordering::Acquire);
        let idle = (inner.pool.status().available + counts.spares()).min(size);
        Stats {
            max_size: manager.options.max_size,
            size,
            idle,
            in_use: size - idle,
            waiters: inner.waiters.load(Ordering::Acquire),
            created: counts.created.load(Ordering::Acquire),
            destroyed: counts.destroyed.load(Ordering::Acquire),
            broken: counts.broken.load(Ordering::Acquire),
            waits: inner.waits.load(Ordering::Acquire),
            wait_time: Duration::from_nanos(inner.wait_time.load(Ordering::Acquire)),
            max_wait: Duration::from_nanos(inner.max_wait.load(Ordering::Acquire)),
            schema_drifts: crate::template::conformance::DRIFTS.load(Ordering::Relaxed),
        }
    }

    /// The statistics of each replica's connections, in the order the replicas were given.
    pub fn replica_stats(&self) -> Vec<Stats> {
        self.replicas.pools().map(Pool::stats).collect()
    }

    /// Closes the pool: waiting and later acquires fail, idle connections are closed now (their
    /// Terminate sent from background tasks), connections in use are closed when they are
    /// returned. Replicas are closed too.
    pub async fn close(&self) {
        for replica in self.replicas.pools() {
            Box::pin(replica.close()).await;
        }
        self.inner.closed.store(true, Ordering::Release);
        // Note: the idle connections leave through `Manager::detach`, which counts and closes
        // them; deadpool's own close would drop them unseen.
        self.inner.pool.retain(|_, _| false);
        self.inner.pool.manager().counts.close_spares();
        self.inner.pool.close();
    }

    /// Whether [`Pool::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Runs `sql` on a pooled connection and returns every row; see
    /// [`Connection::query`](crate::Connection::query).
    pub async fn query(
        &self,
        sql: &str,
        params: &[&(dyn Encode + Sync)],
    ) -> Result<Vec<Row>, Error> {
        self.acquire().await?.query(sql, params).await
    }

    /// Runs `sql` on a pooled connection and returns its only row; see
    /// [`Connection::query_one`](crate::Connection::query_one).
    pub async fn query_one(
        &self,
        sql: &str,
        params: &[&(dyn Encode + Sync)],
    ) -> Result<Row, Error> {
        self.acquire().await?.query_one(sql, params).await
    }

    /// Runs `sql` on a pooled connection and returns its row, if any; see
    /// [`Connection::query_opt`](crate::Connection::query_opt).
    pub async fn query_opt(
        &self,
        sql: &str,
        params: &[&(dyn Encode + Sync)],
    ) -> Result<Option<Row>, Error> {
        self.acquire().await?.query_opt(sql, params).await
    }

    /// Runs `sql` on a pooled connection and returns the rows affected; see
    /// [`Connection::execute`](crate::Connection::execute).
    pub async fn execute(&self, sql: &str, params: &[&(dyn Encode + Sync)]) -> Result<u64, Error> {
        self.acquire().await?.execute(sql, params).await
    }

    /// Runs semicolon-separated statements on a pooled connection; see
    /// [`Connection::batch_execute`](crate::Connection::batch_execute). Session settings made
    /// here are reset when the connection returns to the pool, unless the pool's reset is
    /// [`Reset::Transaction`].
    pub async fn batch_execute(&self, sql: &str) -> Result<(), Error> {
        self.acquire().await?.batch_execute(sql).await
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("stats", &self.stats())
            .field("replica_stats", &self.replica_stats())
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

impl Drop for Inner {
    /// The last handle, connection and task are gone: close the idle connections politely.
    fn drop(&mut self) {
        self.pool.retain(|_, _| false);
        self.pool.manager().counts.close_spares();
    }
}

/// Counts a waiting acquire for as long as it waits, and its wait when it ends, however it
/// ends.
struct Waiting<'a> {
    pool: &'a Inner,
    since: Instant,
}

impl<'a> Waiting<'a> {
    fn new(pool: &'a Inner) -> Waiting<'a> {
        pool.waiters.fetch_add(1, Ordering::AcqRel);
        Waiting {
            pool,
            since: Instant::now(),
        }
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let waited = u64::try_from(self.since.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let pool = self.pool;
        pool.waits.fetch_add(1, Ordering::AcqRel);
        pool.wait_time.fetch_add(waited, Ordering::AcqRel);
        pool.max_wait.fetch_max(waited, Ordering::AcqRel);
        pool.waiters.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Inner {
    fn options(&self) -> &Options {
        &self.pool.manager().options
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// What a failed deadpool acquire tells the caller.
    fn error(e: PoolError<Error>) -> Error {
        match e {
            PoolError::Backend(e) => e,
            PoolError::Closed => Error::new(
                Kind::Closed,
                "the pool is closed; create a new pool to open connections again",
            ),
            // Note: the pool sets no time-out, hook or runtime of deadpool's; only the first,
            // non-waiting attempt of an acquire times out, and `acquire` handles that.
            e => Error::new(Kind::Usage, format!("the connection pool failed: {e}")),
        }
    }

    /// A connection from deadpool within `timeouts`.
    ///
    /// Note: made here as a [`BoxedFuture`]. deadpool's
    /// acquire is compiled once, not in every code unit that acquires.
    #[inline(never)]
    pub(crate) fn get<'a>(
        &'a self,
        timeouts: &'a Timeouts,
    ) -> BoxedFuture<'a, Result<Object, PoolError<Error>>> {
        Box::pin(self.pool.timeout_get(timeouts))
    }

    async fn acquire(self: &Arc<Inner>) -> Result<PooledConnection, Error> {
        // Note: tokio's semaphore hands returned slots to queued waiters first, so taking a
        // free one here never overtakes a waiter.
        let object = match self.get(&NO_WAIT).await {
            Err(PoolError::Timeout(TimeoutType::Wait)) => {
                let _waiting = Waiting::new(self);
                self.get(&WAIT).await
            }
            got => got,
        };
        match object {
            Ok(object) => Ok(PooledConnection::new(object, Arc::clone(self))),
            Err(e) => Err(Inner::error(e)),
        }
    }

    /// Takes a connection back from a user (or a drain). Called from `Drop`: no await.
    pub(crate) fn release(self: &Arc<Inner>, mut object: Object) {
        let manager = self.pool.manager();
        let expired = manager.expired(deadpool::managed::Object::metrics(&object));
        let conn = object.conn_mut();
        let broken = conn.is_closed();
        if self.is_closed() || broken || expired || manager.strayed(conn) {
            Inner::discard(object, broken);
            return;
        }
        if conn.has_interrupted_flow() {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(maintain::drain(Arc::clone(self), object));
                }
                Err(_) => Inner::discard(object, false),
            }
            return;
        }
        conn.start_reset(manager.options.reset);
        if conn.is_closed() {
            Inner::discard(object, true);
            return;
        }
        object.since = Instant::now();
        // Note: deadpool puts the connection in the idle list before it frees the slot, so
        // the slot's next holder finds it idle.
        drop(object);
    }

    /// Takes a connection out of the pool and closes it (`Manager::detach`), counting it as
    /// `broken` or not ([`Stats::broken`]).
    pub(crate) fn discard(mut object: Object, broken: bool) {
        object.broken = broken;
        drop(deadpool::managed::Object::take(object));
    }
}

/// A connection on loan from deadpool.
pub(crate) type Object = deadpool::managed::Object<Manager>;
