//! Background work: draining connections returned mid-call, closing idle connections that
//! are too old or idle too long, keeping `min_idle` connections open, and moving spares
//! (connections opened for an acquire that was dropped) to the idle list.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::time::MissedTickBehavior;

use super::builder::Options;
use super::{Inner, NO_WAIT, Object};

/// The reaper wakes at least this rarely…
const MAX_PERIOD: Duration = Duration::from_secs(30);
/// …and at most this often.
const MIN_PERIOD: Duration = Duration::from_millis(10);

/// Reads the replies a dropped call left owed, then returns the connection to the pool; closes
/// it when that fails or takes longer than the drain time-out. Holds the slot meanwhile, so
/// the pool never opens a replacement while the server still works for the old call.
pub(super) async fn drain(pool: Arc<Inner>, object: Object) {
    let mut draining = Draining(Some(object));
    let Some(object) = draining.0.as_mut() else {
        return;
    };
    let limit = pool.options().drain_timeout;
    let drained = tokio::time::timeout(limit, object.conn_mut().ready()).await;
    if matches!(drained, Ok(Ok(())))
        && let Some(object) = draining.0.take()
    {
        pool.release(object);
    }
}

/// Closes the connection it holds when dropped, whether the drain failed or was itself
/// dropped (the runtime shutting down); counted as broken.
struct Draining(Option<Object>);

impl Drop for Draining {
    fn drop(&mut self) {
        if let Some(object) = self.0.take() {
            Inner::discard(object, true);
        }
    }
}

/// Starts the reaper when the options need one. It stops when the pool is dropped or closed.
pub(super) fn spawn(inner: &Arc<Inner>) {
    let Some(period) = period(inner.options()) else {
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
    /// Closes idle connections past their lifetime, or idle too long beyond `min_idle`.
    /// (Dead ones are found at checkout, where deadpool's `recycle` reads their socket.)
    pub(super) fn reap(&self) {
        let manager = self.pool.manager();
        let retained = self
            .pool
            .retain(|_, metrics| !manager.expired(&metrics))
            .retained;
        if let Some(limit) = manager.options.idle_timeout {
            // Oldest first: the surplus at the front that has waited too long goes.
            let now = Instant::now();
            let mut surplus = retained.saturating_sub(manager.options.min_idle);
            self.pool.retain(|entry, _| {
                let stale = surplus > 0 && now.saturating_duration_since(entry.since) >= limit;
                if stale {
                    surplus -= 1;
                } else {
                    surplus = 0;
                }
                !stale
            });
        }
    }

    /// Opens connections until `min_idle` are idle, as far as there are free slots, and
    /// moves spares (connections opened for an acquire that was dropped) to the idle list:
    /// holds connections (idle ones, spares, new ones) until `min_idle` are held and no spare
    /// is left, then returns them all.
    pub(super) async fn top_up(&self) {
        let min_idle = self.options().min_idle;
        let counts = &self.pool.manager().counts;
        if self.pool.status().available >= min_idle && counts.spares() == 0 {
            return;
        }
        let mut held = Vec::with_capacity(min_idle);
        while (held.len() < min_idle || counts.spares() > 0) && !self.is_closed() {
            match self.get(&NO_WAIT).await {
                Ok(object) => held.push(object),
                Err(_) => break,
            }
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
