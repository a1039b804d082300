//! Read routing: a pool over a primary and its read replicas.
//!
//! [`Pool::acquire`] always hands out a connection to the primary (the connection string of
//! [`Builder::connect`](super::Builder::connect)). [`Pool::acquire_read`] hands out one to a
//! replica ([`Builder::replica`](super::Builder::replica)): each replica has a pool of its own
//! with the same sizes and time-outs, the replicas are taken in turn (those with a free slot
//! first), and a replica whose acquire fails is left out for
//! [`Builder::replica_retry_after`](super::Builder::replica_retry_after). When no replica is
//! up, reads go to the primary.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{Pool, PooledConnection};
use crate::error::Error;

/// The replicas of a pool, each with its own pool of connections.
#[derive(Default)]
pub(crate) struct Replicas {
    servers: Vec<Replica>,
    /// Where the next read starts its turn.
    next: AtomicUsize,
    retry_after: Duration,
}

/// One replica and, when its last acquire failed, until when it is left out.
struct Replica {
    pool: Pool,
    down_until: Mutex<Option<Instant>>,
}

impl Replicas {
    pub(crate) fn new(pools: Vec<Pool>, retry_after: Duration) -> Replicas {
        Replicas {
            servers: pools
                .into_iter()
                .map(|pool| Replica {
                    pool,
                    down_until: Mutex::new(None),
                })
                .collect(),
            next: AtomicUsize::new(0),
            retry_after,
        }
    }

    pub(crate) fn pools(&self) -> impl Iterator<Item = &Pool> {
        self.servers.iter().map(|replica| &replica.pool)
    }

    /// A connection to a replica that is up, taking them in turn; `None` when none is (or
    /// the pool has none).
    async fn acquire(&self) -> Option<PooledConnection> {
        let n = self.servers.len();
        if n == 0 {
            return None;
        }
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let mut turn: Vec<&Replica> = (0..n)
            .filter_map(|i| self.servers.get((start + i) % n))
            .filter(|replica| replica.is_up())
            .collect();
        // Note: a stable sort keeps the turn among replicas with room, so a saturated replica
        // is waited on only when every replica is.
        turn.sort_by_key(|replica| !replica.has_room());
        for replica in turn {
            match replica.pool.acquire().await {
                Ok(conn) => return Some(conn),
                Err(e) => replica.mark_down(self.retry_after, &e),
            }
        }
        None
    }
}

impl Replica {
    fn down_until(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.down_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn is_up(&self) -> bool {
        let mut down = self.down_until();
        match *down {
            Some(until) if Instant::now() < until => false,
            Some(_) => {
                *down = None;
                true
            }
            None => true,
        }
    }

    /// Whether an acquire would find a free slot: fewer users (holders and acquires under
    /// way) than slots.
    fn has_room(&self) -> bool {
        let status = self.pool.inner.pool.status();
        status.size + status.waiting < status.max_size + status.available
    }

    fn mark_down(&self, retry_after: Duration, e: &Error) {
        #[cfg(feature = "tracing")]
        tracing::warn!(error = %e, ?retry_after, "a read replica failed; reads skip it");
        #[cfg(not(feature = "tracing"))]
        let _ = e;
        *self.down_until() = Some(Instant::now() + retry_after);
    }
}

impl Pool {
    /// A connection for reads: to one of the replicas given with
    /// [`Builder::replica`](super::Builder::replica), spread over those that are up, or to
    /// the primary when there are none or none is up. Writes on a replica fail with SQLSTATE
    /// 25006 (read-only transaction); use [`Pool::acquire`] for them.
    ///
    /// A replica whose acquire fails (it is down, or its pool timed out) is left out for
    /// [`Builder::replica_retry_after`](super::Builder::replica_retry_after); give replicas a
    /// `connect_timeout` so a host that does not answer is found out quickly. Replicas
    /// replay the primary's writes with a delay: a read may not see a write just committed
    /// on the primary.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), qail_pg::Error> {
    /// let pool = qail_pg::Pool::builder()
    ///     .replica("postgres://app@replica1/shop?connect_timeout=2")
    ///     .replica("postgres://app@replica2/shop?connect_timeout=2")
    ///     .connect("postgres://app@primary/shop")
    ///     .await?;
    /// let mut read = pool.acquire_read().await?; // a replica, or the primary if none is up
    /// let rows = read.query("SELECT name FROM harbors", &[]).await?;
    /// let mut write = pool.acquire().await?; // always the primary
    /// write.execute("DELETE FROM harbors WHERE id = $1", &[&7i64]).await?;
    /// # Ok(()) }
    /// ```
    pub async fn acquire_read(&self) -> Result<PooledConnection, Error> {
        match self.replicas.acquire().await {
            Some(conn) => Ok(conn),
            None => self.acquire().await,
        }
    }
}
