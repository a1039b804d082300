//! Sync accounting: how many request cycles the server still owes a ReadyForQuery for.
//!
//! Every Sync, and every simple Query, ends a cycle that the server closes with exactly one
//! ReadyForQuery, in the order they were sent (see "Extended Query" in
//! <https://www.postgresql.org/docs/current/protocol-flow.html>). A flow reports each one it
//! queues ([`Syncs::sent`]) before any await, and each ReadyForQuery it reads
//! ([`Syncs::on_ready_for_query`]); so a flow dropped at any await leaves behind a count of
//! cycles whose replies [`Connection::ready`](super::Connection::ready) reads and drops
//! before the next flow.
//!
//! The pool's reset ([`super::reset`]) is queued only when no other cycle is owed, so its
//! cycles are always the oldest: the first ReadyForQuery messages read answer it.

/// The cycles sent whose ReadyForQuery has not been read yet.
#[derive(Debug, Default)]
pub(crate) struct Syncs {
    /// All of them, the reset's included.
    pending: usize,
    /// How many of `pending` belong to the pool's reset (always the oldest).
    reset: usize,
}

impl Syncs {
    /// `n` cycles were queued (a Sync, or a simple Query, each).
    #[inline]
    pub(crate) fn sent(&mut self, n: usize) {
        self.pending += n;
    }

    /// One cycle of the pool's reset was queued; only when no other cycle is owed.
    pub(crate) fn sent_reset(&mut self) {
        debug_assert_eq!(
            self.pending, self.reset,
            "a reset is queued after every other cycle"
        );
        self.pending += 1;
        self.reset += 1;
    }

    /// A ReadyForQuery was read: the oldest cycle is answered (the reset's first).
    #[inline]
    pub(crate) fn on_ready_for_query(&mut self) {
        self.pending = self.pending.saturating_sub(1);
        self.reset = self.reset.saturating_sub(1);
    }

    /// How many cycles are owed, the reset's included.
    pub(crate) fn pending(&self) -> usize {
        self.pending
    }

    /// Whether cycles of the pool's reset are owed; they are read before anything else.
    #[inline]
    pub(crate) fn resetting(&self) -> bool {
        self.reset > 0
    }

    /// Whether cycles other than the reset's are owed: a flow was dropped before it read its
    /// replies.
    pub(crate) fn interrupted(&self) -> bool {
        self.pending > self.reset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_cycles_until_their_ready_for_query() {
        let mut syncs = Syncs::default();
        syncs.sent(2);
        assert_eq!(syncs.pending(), 2);
        assert!(syncs.interrupted());
        syncs.on_ready_for_query();
        syncs.on_ready_for_query();
        assert_eq!(syncs.pending(), 0);
        assert!(!syncs.interrupted());
        // Note: a ReadyForQuery that answers nothing (startup's) does not underflow.
        syncs.on_ready_for_query();
        assert_eq!(syncs.pending(), 0);
    }

    #[test]
    fn the_reset_is_answered_first() {
        let mut syncs = Syncs::default();
        syncs.sent_reset();
        syncs.sent_reset();
        assert!(syncs.resetting());
        assert!(!syncs.interrupted());
        syncs.sent(1);
        assert!(syncs.interrupted());
        syncs.on_ready_for_query();
        assert!(syncs.resetting());
        syncs.on_ready_for_query();
        assert!(!syncs.resetting());
        assert_eq!(syncs.pending(), 1);
        assert!(syncs.interrupted());
        syncs.on_ready_for_query();
        assert!(!syncs.interrupted());
    }
}
