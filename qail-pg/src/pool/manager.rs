//! The pool's `deadpool::managed::Manager`: how a connection is opened, checked at checkout
//! and closed, and the counts of those events.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use deadpool::managed::{Metrics, RecycleError, RecycleResult};
use tokio::sync::{Notify, oneshot};

use super::builder::Options;
use crate::config::{Config, TargetSessionAttrs};
use crate::conn::Connection;
use crate::error::{Error, Kind};

/// A pooled connection as deadpool holds it.
pub(crate) struct Entry {
    /// Present until the connection is closed (`Manager::detach` takes it to close it
    /// politely, which needs it by value).
    conn: Option<Connection>,
    /// When it was last returned (or opened): what the health check and the idle time-out
    /// measure.
    pub(super) since: Instant,
    /// Set before the connection is taken out of the pool: whether it is closed as broken
    /// ([`Stats::broken`](super::Stats::broken)).
    pub(super) broken: bool,
}

impl Entry {
    pub(super) fn conn(&self) -> &Connection {
        self.conn
            .as_ref()
            .expect("the connection stays until it leaves the pool")
    }

    pub(super) fn conn_mut(&mut self) -> &mut Connection {
        self.conn
            .as_mut()
            .expect("the connection stays until it leaves the pool")
    }
}

/// Opens, checks and closes the connections of one server; counts them.
pub(crate) struct Manager {
    pub(super) config: Config,
    pub(super) options: Options,
    pub(super) counts: Arc<Counts>,
}

/// What the manager counts, shared with the tasks that open connections.
#[derive(Default)]
pub(crate) struct Counts {
    /// Connections open or being opened, including spares.
    pub(super) open: AtomicUsize,
    pub(super) created: AtomicU64,
    pub(super) destroyed: AtomicU64,
    pub(super) broken: AtomicU64,
    /// Connections whose opening finished after its acquire was dropped: the next `create`
    /// takes one instead of opening another; the background task moves them to the idle
    /// list.
    spare: Mutex<Vec<Entry>>,
    /// Notified when a place among `max_size` may have come free for a `create` waiting on
    /// openings whose acquire was dropped: one ended (a spare, or a failure), or a
    /// connection was closed.
    settled: Notify,
}

impl Counts {
    fn spare(&self) -> MutexGuard<'_, Vec<Entry>> {
        // Note: the lock is never held across a call that can panic halfway through a change.
        self.spare.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn spares(&self) -> usize {
        self.spare().len()
    }

    /// Closes the spare connections (the pool is closing or dropped).
    pub(super) fn close_spares(&self) {
        let spares = std::mem::take(&mut *self.spare());
        for mut entry in spares {
            self.forget(&mut entry);
        }
    }

    /// Stops counting a connection that leaves the pool, and closes it, politely in the
    /// background when a runtime is at hand.
    fn forget(&self, entry: &mut Entry) {
        self.open.fetch_sub(1, Ordering::AcqRel);
        self.destroyed.fetch_add(1, Ordering::AcqRel);
        if entry.broken {
            self.broken.fetch_add(1, Ordering::AcqRel);
        }
        self.settled.notify_waiters();
        if let Some(conn) = entry.conn.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(conn.close());
        }
    }

    /// Counts an opening, if there is room for one more connection: deadpool bounds the
    /// connections it holds and opens by `max_size`, but not those whose acquire was dropped
    /// while they were being opened.
    fn reserve(&self, max_size: usize) -> bool {
        self.open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < max_size).then_some(open + 1)
            })
            .is_ok()
    }
}

/// A connection just opened, on its way to the `create` that asked for it; dropped on the
/// way (that `create` was dropped), it becomes a spare.
struct Handoff {
    entry: Option<Entry>,
    counts: Arc<Counts>,
}

impl Drop for Handoff {
    fn drop(&mut self) {
        if let Some(entry) = self.entry.take() {
            self.counts.spare().push(entry);
            self.counts.settled.notify_waiters();
        }
    }
}

/// Takes a counted opening off the count when it fails, or when its task is dropped.
struct Opening(Option<Arc<Counts>>);

impl Drop for Opening {
    fn drop(&mut self) {
        if let Some(counts) = self.0.take() {
            counts.open.fetch_sub(1, Ordering::AcqRel);
            counts.settled.notify_waiters();
        }
    }
}

async fn connect_and_warm_up(config: &Config, warm_up: &[String]) -> Result<Connection, Error> {
    let mut conn = Connection::connect_with(config).await?;
    for sql in warm_up {
        conn.prepare(sql).await?;
    }
    Ok(conn)
}

impl Manager {
    pub(super) fn new(config: Config, options: Options) -> Manager {
        Manager {
            config,
            options,
            counts: Arc::default(),
        }
    }

    pub(super) fn expired(&self, metrics: &Metrics) -> bool {
        self.options
            .max_lifetime
            .is_some_and(|max| metrics.age() >= max)
    }

    /// Whether the server no longer is of the kind the connection string's
    /// `target_session_attrs` asks for, as far as the parameters it reported say (no round
    /// trip): a primary turned read-only (`default_transaction_read_only` on, as a failover
    /// may fence the old primary), a standby promoted. Such a connection is closed rather
    /// than reused, so the next one is opened over the host list and finds the right server.
    /// `prefer-standby` accepts either kind, so it never strays.
    pub(super) fn strayed(&self, conn: &Connection) -> bool {
        let wanted = self.config.target_session_attrs;
        !matches!(
            wanted,
            TargetSessionAttrs::Any | TargetSessionAttrs::PreferStandby
        ) && matches!(
            crate::conn::connect::reported_session_is(conn, wanted),
            Some(Some(_))
        )
    }
}

impl deadpool::managed::Manager for Manager {
    type Type = Entry;
    type Error = Error;

    /// A spare connection, or a new one, opened and warmed up in a task of its own: when the
    /// acquire is dropped meanwhile, the opening still finishes and the connection becomes
    /// a spare, so an acquire that gives up (its time-out, a `select!`) never wastes the
    /// work, and a server slower to connect than callers wait still gets connections
    /// opened. While such an opening is under way it holds a place among `max_size`, and a
    /// `create` waits for it when the pool has no other room.
    async fn create(&self) -> Result<Entry, Error> {
        let counts = &self.counts;
        loop {
            let settled = counts.settled.notified();
            tokio::pin!(settled);
            settled.as_mut().enable();
            if let Some(entry) = counts.spare().pop() {
                return Ok(entry);
            }
            if counts.reserve(self.options.max_size) {
                break;
            }
            settled.await;
        }
        let (tx, rx) = oneshot::channel();
        let (config, warm_up) = (self.config.clone(), self.options.warm_up.clone());
        let mut opening = Opening(Some(Arc::clone(counts)));
        tokio::spawn(async move {
            let opened = connect_and_warm_up(&config, &warm_up).await;
            let handoff = opened.map(|conn| {
                let counts = opening.0.take().expect("counted until opened");
                counts.created.fetch_add(1, Ordering::AcqRel);
                Handoff {
                    entry: Some(Entry {
                        conn: Some(conn),
                        since: Instant::now(),
                        broken: false,
                    }),
                    counts,
                }
            });
            drop(opening);
            // Note: when the caller is gone, the handoff is dropped and keeps the connection.
            drop(tx.send(handoff));
        });
        match rx.await {
            Ok(Ok(mut handoff)) => Ok(handoff.entry.take().expect("handed off once")),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(Error::new(
                Kind::Closed,
                "the task opening a pooled connection stopped (is the runtime shutting down?); \
                 retry on a running runtime",
            )),
        }
    }

    /// The checkout of an idle connection: without a round trip, it must be alive (reading
    /// what the server sent meanwhile, such as the answer to its reset), young enough and
    /// still of the kind `target_session_attrs` asks for; when it has been idle longer than
    /// `health_check_after`, an empty query must succeed too (it also waits for the answer
    /// to the reset, so a failing reset is caught here). A refused connection is closed by
    /// `detach` and deadpool tries the next idle one, or opens one.
    async fn recycle(&self, entry: &mut Entry, metrics: &Metrics) -> RecycleResult<Error> {
        let since = entry.since;
        let conn = entry.conn_mut();
        let alive = conn.poll_alive();
        if !alive || self.expired(metrics) || self.strayed(conn) {
            entry.broken = !alive;
            return Err(RecycleError::message("closed, expired or strayed"));
        }
        let check = self
            .options
            .health_check_after
            .is_some_and(|after| since.elapsed() >= after);
        // Note: boxed, as it is rare; inline, its future would make every checkout's larger,
        // and deadpool moves that future several times per checkout.
        if check && let Err(e) = Box::pin(conn.ping()).await {
            entry.broken = true;
            return Err(RecycleError::Backend(e));
        }
        Ok(())
    }

    /// A connection leaves the pool: see [`Counts::forget`].
    fn detach(&self, entry: &mut Entry) {
        self.counts.forget(entry);
    }
}
