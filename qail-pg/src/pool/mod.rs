//! The connection pool.
//!
//! [`Pool`] hands out [`PooledConnection`]s (a `DerefMut` to [`Connection`]) and takes them
//! back when they are dropped. Idle connections are reused last-in first-out, so the warmest
//! one (its statement cache, its server backend's caches) serves the next call and surplus
//! ones age out through the idle time-out.
//!
//! A returned connection is never handed to the next user dirty: a transaction left open is
//! rolled back, and settings, the role, LISTEN registrations, advisory locks, temporary tables
//! and open cursors are reset (`DISCARD ALL` minus `DEALLOCATE ALL`, so prepared statements
//! stay valid). The reset costs no round trip of its own: it is sent when the connection is
//! returned, without waiting for the answer, which is read when the connection is next
//! checked out (or by its next call, if it has not arrived by then). A broken connection is closed; one returned
//! with a call still in flight (its future was dropped) first has its replies read in the
//! background, within [`Builder::drain_timeout`].
//!
//! # Why not deadpool or bb8
//!
//! The pool is small and written on tokio's `Semaphore` and a `Mutex<Vec<_>>` because:
//! - the reset without a round trip queues messages inside the connection and reads their
//!   replies ahead of the next flow's — that needs the connection's internals, which a generic
//!   pool's `recycle` hook cannot reach without a round trip per checkout;
//! - cancel safety is part of the connection's design (a dropped call leaves replies owed,
//!   counted), and the pool must act on it when a connection comes back (drain in the
//!   background, holding the slot, or close) — generic pools only see "returned";
//! - a slot is a semaphore permit, so an acquire future dropped at any point never leaks one,
//!   and a connection being opened when its caller gives up is finished and kept idle;
//! - no extra dependencies.

mod builder;
mod maintain;
mod pooled;
mod replicas;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError, oneshot};

pub use builder::Builder;
use builder::Options;
pub use pooled::PooledConnection;
use replicas::Replicas;

use crate::conn::Connection;
use crate::conn::config::{Config, TargetSessionAttrs};
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
    /// the server or the network closed them (found when a call failed, at checkout, or by
    /// the background check of idle ones), a health check or the reset failed, or the
    /// replies a cancelled call left could not be read within the drain time-out.
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
}

/// State shared by the pool's handles, its connections and its background task.
pub(crate) struct Inner {
    config: Config,
    options: Options,
    /// One permit per connection that may be out of the idle list.
    semaphore: Arc<Semaphore>,
    /// Oldest first; checkout pops the newest.
    idle: Mutex<Vec<Idle>>,
    /// Connections open or being opened.
    open: AtomicUsize,
    waiters: AtomicUsize,
    created: AtomicU64,
    destroyed: AtomicU64,
    broken: AtomicU64,
    waits: AtomicU64,
    /// Nanoseconds, in total and the longest.
    wait_time: AtomicU64,
    max_wait: AtomicU64,
    closed: AtomicBool,
}

/// A connection with its birth time.
pub(crate) struct Entry {
    conn: Connection,
    created: Instant,
}

/// A connection waiting in the pool, and since when.
struct Idle {
    entry: Entry,
    since: Instant,
}

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
    pub(crate) async fn open(
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
        for _ in 0..initial {
            let entry = inner.open_connection().await?;
            inner.push_idle(entry);
        }
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
        Arc::new(Inner {
            semaphore: Arc::new(Semaphore::new(options.max_size)),
            config,
            options,
            idle: Mutex::new(Vec::new()),
            open: AtomicUsize::new(0),
            waiters: AtomicUsize::new(0),
            created: AtomicU64::new(0),
            destroyed: AtomicU64::new(0),
            broken: AtomicU64::new(0),
            waits: AtomicU64::new(0),
            wait_time: AtomicU64::new(0),
            max_wait: AtomicU64::new(0),
            closed: AtomicBool::new(false),
        })
    }

    /// Takes a connection from the pool, opening one when none is idle and fewer than
    /// `max_size` are open; waits (up to the acquire time-out) when all are in use.
    ///
    /// Dropping the returned connection gives it back. Dropping this future at any point is
    /// safe: no slot is lost, and a connection being opened is kept for the next caller.
    pub async fn acquire(&self) -> Result<PooledConnection, Error> {
        let attempt = Arc::clone(&self.inner).acquire();
        match self.inner.options.acquire_timeout {
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
                self.inner.options.max_size
            ),
        )
    }

    /// The pool's state: its size, idle and in-use connections and waiters now, and since it
    /// was created the connections opened, closed and broken and the time acquires waited —
    /// of the primary's connections; see [`Pool::replica_stats`] for the replicas'. Each
    /// figure is read on its own (atomically, not all at one instant), without a lock beyond
    /// the idle list's; counting costs the acquire path nothing unless it has to wait.
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
        let size = inner.open.load(Ordering::Acquire);
        let idle = inner.idle().len();
        Stats {
            max_size: inner.options.max_size,
            size,
            idle,
            in_use: size.saturating_sub(idle),
            waiters: inner.waiters.load(Ordering::Acquire),
            created: inner.created.load(Ordering::Acquire),
            destroyed: inner.destroyed.load(Ordering::Acquire),
            broken: inner.broken.load(Ordering::Acquire),
            waits: inner.waits.load(Ordering::Acquire),
            wait_time: Duration::from_nanos(inner.wait_time.load(Ordering::Acquire)),
            max_wait: Duration::from_nanos(inner.max_wait.load(Ordering::Acquire)),
        }
    }

    /// The statistics of each replica's connections, in the order the replicas were given.
    pub fn replica_stats(&self) -> Vec<Stats> {
        self.replicas.pools().map(Pool::stats).collect()
    }

    /// Closes the pool: waiting and later acquires fail, idle connections are closed now,
    /// connections in use are closed when they are returned. Replicas are closed too.
    pub async fn close(&self) {
        for replica in self.replicas.pools() {
            Box::pin(replica.close()).await;
        }
        self.inner.closed.store(true, Ordering::Release);
        self.inner.semaphore.close();
        let idle = std::mem::take(&mut *self.inner.idle());
        for idle in idle {
            self.inner.forget(false);
            idle.entry.conn.close().await;
        }
    }

    /// Whether [`Pool::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Runs `sql` on a pooled connection and returns every row; see [`Connection::query`].
    pub async fn query(
        &self,
        sql: &str,
        params: &[&(dyn Encode + Sync)],
    ) -> Result<Vec<Row>, Error> {
        self.acquire().await?.query(sql, params).await
    }

    /// Runs `sql` on a pooled connection and returns its only row; see
    /// [`Connection::query_one`].
    pub async fn query_one(
        &self,
        sql: &str,
        params: &[&(dyn Encode + Sync)],
    ) -> Result<Row, Error> {
        self.acquire().await?.query_one(sql, params).await
    }

    /// Runs `sql` on a pooled connection and returns its row, if any; see
    /// [`Connection::query_opt`].
    pub async fn query_opt(
        &self,
        sql: &str,
        params: &[&(dyn Encode + Sync)],
    ) -> Result<Option<Row>, Error> {
        self.acquire().await?.query_opt(sql, params).await
    }

    /// Runs `sql` on a pooled connection and returns the rows affected; see
    /// [`Connection::execute`].
    pub async fn execute(&self, sql: &str, params: &[&(dyn Encode + Sync)]) -> Result<u64, Error> {
        self.acquire().await?.execute(sql, params).await
    }

    /// Runs semicolon-separated statements on a pooled connection; see
    /// [`Connection::batch_execute`]. Session settings made here are reset when the
    /// connection returns to the pool.
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
        let idle = std::mem::take(self.idle.get_mut().unwrap_or_else(PoisonError::into_inner));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            for idle in idle {
                runtime.spawn(idle.entry.conn.close());
            }
        }
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
    fn idle(&self) -> MutexGuard<'_, Vec<Idle>> {
        // Note: the lock is never held across a call that can panic halfway through a change.
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    fn closed_error() -> Error {
        Error::new(
            Kind::Closed,
            "the pool is closed; create a new pool to open connections again",
        )
    }

    async fn acquire(self: Arc<Inner>) -> Result<PooledConnection, Error> {
        // Note: tokio's semaphore hands returned permits to queued waiters first, so taking
        // a free one here never overtakes a waiter.
        let mut permit = match Arc::clone(&self.semaphore).try_acquire_owned() {
            Ok(permit) => permit,
            Err(TryAcquireError::Closed) => return Err(Inner::closed_error()),
            Err(TryAcquireError::NoPermits) => {
                let _waiting = Waiting::new(&self);
                Arc::clone(&self.semaphore)
                    .acquire_owned()
                    .await
                    .map_err(|_| Inner::closed_error())?
            }
        };
        while let Some((entry, since)) = self.pop_usable() {
            let mut pooled = PooledConnection::new(entry, permit, Arc::clone(&self));
            let check = self
                .options
                .health_check_after
                .is_some_and(|after| since.elapsed() >= after);
            if !check {
                return Ok(pooled);
            }
            // Note: the empty query also carries the queued reset, so a failing reset is
            // caught here and another connection is tried.
            if pooled.batch_execute("").await.is_ok() {
                return Ok(pooled);
            }
            permit = pooled.discard();
        }
        self.open_for(permit).await
    }

    /// The newest idle connection that is alive and young enough; others are closed.
    fn pop_usable(&self) -> Option<(Entry, Instant)> {
        loop {
            let Idle { mut entry, since } = self.idle().pop()?;
            let alive = entry.conn.poll_alive();
            if alive && !self.expired(&entry) && !self.strayed(&entry.conn) {
                return Some((entry, since));
            }
            self.destroy(entry, !alive);
        }
    }

    /// Opens a connection for the holder of `permit`, in a task of its own: when the caller
    /// stops waiting, the connection still opens and goes to the idle list.
    async fn open_for(
        self: Arc<Inner>,
        permit: OwnedSemaphorePermit,
    ) -> Result<PooledConnection, Error> {
        let (tx, rx) = oneshot::channel();
        let inner = Arc::clone(&self);
        tokio::spawn(async move {
            let opened = inner.open_connection().await;
            let pooled = opened.map(|entry| PooledConnection::new(entry, permit, inner));
            // Note: when the caller is gone, dropping the connection returns it to the pool.
            drop(tx.send(pooled));
        });
        rx.await.unwrap_or_else(|_| {
            Err(Error::new(
                Kind::Closed,
                "the task opening a pooled connection stopped (is the runtime shutting down?); \
                 retry on a running runtime",
            ))
        })
    }

    /// Opens, counts and warms up a new connection, if the pool has room for one.
    async fn open_connection(&self) -> Result<Entry, Error> {
        let reserved = self
            .open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < self.options.max_size).then_some(open + 1)
            });
        if reserved.is_err() {
            return Err(Error::new(
                Kind::Usage,
                "the pool already holds max_size connections; wait for one to be returned",
            ));
        }
        match self.connect_and_warm_up().await {
            Ok(conn) => {
                self.created.fetch_add(1, Ordering::AcqRel);
                Ok(Entry {
                    conn,
                    created: Instant::now(),
                })
            }
            Err(e) => {
                self.open.fetch_sub(1, Ordering::AcqRel);
                Err(e)
            }
        }
    }

    async fn connect_and_warm_up(&self) -> Result<Connection, Error> {
        let mut conn = Connection::connect_with(&self.config).await?;
        for sql in &self.options.warm_up {
            conn.prepare(sql).await?;
        }
        Ok(conn)
    }

    fn push_idle(&self, entry: Entry) {
        self.idle().push(Idle {
            entry,
            since: Instant::now(),
        });
    }

    /// Whether the server no longer is of the kind the connection string's
    /// `target_session_attrs` asks for, as far as the parameters it reported say (no round
    /// trip): a primary turned read-only (`default_transaction_read_only` on, as a failover
    /// may fence the old primary), a standby promoted. Such a connection is closed rather
    /// than reused, so the next one is opened over the host list and finds the right server.
    /// `prefer-standby` accepts either kind, so it never strays.
    fn strayed(&self, conn: &Connection) -> bool {
        let wanted = self.config.target_session_attrs;
        !matches!(
            wanted,
            TargetSessionAttrs::Any | TargetSessionAttrs::PreferStandby
        ) && matches!(
            crate::conn::connect::reported_session_is(conn, wanted),
            Some(Some(_))
        )
    }

    fn expired(&self, entry: &Entry) -> bool {
        self.options
            .max_lifetime
            .is_some_and(|max| entry.created.elapsed() >= max)
    }

    /// Takes a connection back from a user (or a drain). Called from `Drop`: no await.
    pub(crate) fn release(self: &Arc<Inner>, mut entry: Entry, permit: OwnedSemaphorePermit) {
        let broken = entry.conn.is_closed();
        if self.is_closed() || broken || self.expired(&entry) || self.strayed(&entry.conn) {
            self.destroy(entry, broken);
            return;
        }
        if entry.conn.has_interrupted_flow() {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(maintain::drain(Arc::clone(self), entry, permit));
                }
                Err(_) => self.destroy(entry, false),
            }
            return;
        }
        entry.conn.start_reset();
        if entry.conn.is_closed() {
            self.destroy(entry, true);
            return;
        }
        self.push_idle(entry);
        // Note: the permit goes back only now, so its next holder finds the connection idle.
        drop(permit);
    }

    /// Stops counting a connection that is about to be closed, `broken` or not.
    fn forget(&self, broken: bool) {
        self.open.fetch_sub(1, Ordering::AcqRel);
        self.destroyed.fetch_add(1, Ordering::AcqRel);
        if broken {
            self.broken.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Closes a connection, counting it as `broken` or not ([`Stats::broken`]): politely in
    /// the background when a runtime is at hand.
    pub(crate) fn destroy(&self, entry: Entry, broken: bool) {
        self.forget(broken);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(entry.conn.close());
        }
    }
}
