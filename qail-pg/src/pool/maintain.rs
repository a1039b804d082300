//! Background work: draining connections returned mid-call, closing idle connections that
//! are too old or idle too long, and keeping `min_idle` connections open.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::OwnedSemaphorePermit;
use tokio::time::MissedTickBehavior;

use super::builder::Options;
use super::{Entry, Idle, Inner};

/// The reaper wakes at least this rarely…
const MAX_PERIOD: Duration = Duration::from_secs(30);
/// …and at most this often.
const MIN_PERIOD: Duration = Duration::from_millis(10);

/// Reads the replies a dropped call left owed, then returns the connection to the pool; closes
/// it when that fails or takes longer than the drain time-out. Holds the slot meanwhile, so
/// the pool never opens a replacement while the server still works for the old call.
pub(super) async fn drain(pool: Arc<Inner>, entry: Entry, permit: OwnedSemaphorePermit) {
    let mut draining = Draining {
        entry: Some(entry),
        pool: Arc::clone(&pool),
    };
    let Some(entry) = draining.entry.as_mut() else {
        return;
    };
    let drained = tokio::time::timeout(pool.options.drain_timeout, entry.conn.ready()).await;
    if matches!(drained, Ok(Ok(())))
        && let Some(entry) = draining.entry.take()
    {
        pool.release(entry, permit);
    }
}

/// Closes the connection it holds when dropped, whether the drain failed or was itself
/// dropped (the runtime shutting down); counted as broken.
struct Draining {
    entry: Option<Entry>,
    pool: Arc<Inner>,
}

impl Drop for Draining {
    fn drop(&mut self) {
        if let Some(entry) = self.entry.take() {
            self.pool.destroy(entry, true);
        }
    }
}

/// Starts the reaper when the options need one. It stops when the pool is dropped or closed.
pub(super) fn spawn(inner: &Arc<Inner>) {
    let Some(period) = period(&inner.options) else {
        return;
    };
    let weak = Arc::downgrade(inner);
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(period);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let Some(inner) = weak.upgrade() else {
                return;
            };
            if inner.is_closed() {
                return;
            }
            inner.reap();
            inner.top_up().await;
        }
    });
}

/// A quarter of the shortest time limit, so a connection outlives its limit by at most that.
fn period(options: &Options) -> Option<Duration> {
    let shortest = [options.idle_timeout, options.max_lifetime]
        .into_iter()
        .flatten()
        .min();
    match shortest {
        Some(limit) => Some((limit / 4).clamp(MIN_PERIOD, MAX_PERIOD)),
        None => (options.min_idle > 0).then_some(MAX_PERIOD),
    }
}

impl Inner {
    /// Closes idle connections that are dead, past their lifetime, or idle too long beyond
    /// `min_idle`.
    pub(super) fn reap(&self) {
        let now = Instant::now();
        let mut doomed = Vec::new();
        {
            let mut idle = self.idle();
            let all = std::mem::take(&mut *idle);
            let mut keep = Vec::with_capacity(all.len());
            for mut item in all {
                let alive = item.entry.conn.poll_alive();
                if !alive || self.expired(&item.entry) {
                    doomed.push((item, !alive));
                } else {
                    keep.push(item);
                }
            }
            if let Some(limit) = self.options.idle_timeout {
                // Oldest first: the surplus at the front that has waited too long goes.
                let surplus = keep.len().saturating_sub(self.options.min_idle);
                let stale = keep
                    .iter()
                    .take(surplus)
                    .take_while(|item| now.saturating_duration_since(item.since) >= limit)
                    .count();
                doomed.extend(keep.drain(..stale).map(|item| (item, false)));
            }
            *idle = keep;
        }
        for (Idle { entry, .. }, broken) in doomed {
            self.destroy(entry, broken);
        }
    }

    /// Opens connections until `min_idle` are idle, as far as there is room.
    pub(super) async fn top_up(&self) {
        while self.idle().len() < self.options.min_idle && !self.is_closed() {
            let Ok(permit) = Arc::clone(&self.semaphore).try_acquire_owned() else {
                return;
            };
            match self.open_connection().await {
                Ok(entry) => self.push_idle(entry),
                Err(_) => return,
            }
            drop(permit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn period_is_a_quarter_of_the_shortest_limit_within_bounds() {
        let mut options = Options {
            idle_timeout: Some(Duration::from_secs(8)),
            max_lifetime: Some(Duration::from_secs(60)),
            ..Options::default()
        };
        assert_eq!(period(&options), Some(Duration::from_secs(2)));
        options.idle_timeout = Some(Duration::from_millis(1));
        assert_eq!(period(&options), Some(MIN_PERIOD));
        options.idle_timeout = None;
        options.max_lifetime = Some(Duration::from_secs(3600));
        assert_eq!(period(&options), Some(MAX_PERIOD));
        options.max_lifetime = None;
        assert_eq!(period(&options), None);
        options.min_idle = 1;
        assert_eq!(period(&options), Some(MAX_PERIOD));
    }
}
