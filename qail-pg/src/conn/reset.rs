//! Returning a session to a clean state between pool users, without a round trip of its own.
//!
//! When a pooled connection is released, [`Connection::queue_reset`] encodes the reset as
//! simple Query messages into the write buffer and counts their ReadyForQuery replies in
//! `pending_syncs` and `reset_syncs`; nothing is sent yet. The next user's first flow sends
//! them in the same write as its own messages, and [`Connection::recv`] reads the reset's
//! replies ([`Connection::finish_reset`]) before the flow's. A reset that fails breaks the
//! connection and the flow returns an error saying so, so the pool discards the connection.
//!
//! The reset is what `DISCARD ALL` does, minus `DEALLOCATE ALL` (the statement cache stays
//! valid) and minus `DISCARD PLANS` (the server already re-plans a cached statement when
//! `search_path`, the role or a referenced object changes; discarding every plan on every
//! release would only slow down the next user). See
//! <https://www.postgresql.org/docs/current/sql-discard.html>. Each statement is a Query
//! message of its own, so each runs in its own implicit transaction and one failing does not
//! undo the others; none of them is refused inside a transaction block, but they follow the
//! `ROLLBACK` of a transaction the previous user left open, which is sent only when there may
//! be one (a `ROLLBACK` outside a transaction only earns a warning).
//!
//! A flow reads through [`Connection::recv`] (or calls [`Connection::ready`] first), never
//! `stream.next_frame` directly, so the reset's replies are never mistaken for its own.

use futures_util::FutureExt;

use super::Connection;
use crate::error::{Error, Kind};
use crate::proto::message::{Query, TransactionStatus};

/// The reset, in the order of `DISCARD ALL`'s documented equivalent.
const RESET: &[&str] = &[
    "CLOSE ALL",
    "SET SESSION AUTHORIZATION DEFAULT",
    "RESET ALL",
    "UNLISTEN *",
    "SELECT pg_advisory_unlock_all()",
    "DISCARD TEMP",
    "DISCARD SEQUENCES",
];

/// How many unsolicited messages [`Connection::poll_alive`] reads before giving up on a
/// chatty connection.
const MAX_UNSOLICITED: usize = 64;

impl Connection {
    /// Whether replies other than those of a queued reset are outstanding: a flow was
    /// interrupted, and [`Connection::ready`] must read its replies before the next flow.
    pub(crate) fn has_interrupted_flow(&self) -> bool {
        self.pending_syncs > self.reset_syncs
    }

    /// Queues the reset into the write buffer (nothing is sent), unless one is already queued
    /// and nothing ran since. Call only when no flow is interrupted
    /// ([`Connection::has_interrupted_flow`] is false).
    pub(crate) fn queue_reset(&mut self) {
        debug_assert!(
            !self.has_interrupted_flow(),
            "drain before queueing a reset"
        );
        self.notice_handler = None;
        if self.reset_syncs > 0 {
            return;
        }
        if self.transaction_status != TransactionStatus::Idle {
            self.queue_reset_query("ROLLBACK");
        }
        for sql in RESET {
            self.queue_reset_query(sql);
        }
        // Note: the ROLLBACK goes out before anything the next user sends.
        self.transaction_status = TransactionStatus::Idle;
    }

    fn queue_reset_query(&mut self, sql: &str) {
        let queued = Query { sql }.encode(self.stream.write_buf());
        debug_assert!(
            queued.is_ok(),
            "the reset statements are constants without NUL"
        );
        self.pending_syncs += 1;
        self.reset_syncs += 1;
    }

    /// Reads the replies of a queued reset, which were sent with the current flow's messages.
    /// An error in the reset breaks the connection.
    pub(crate) async fn finish_reset(&mut self) -> Result<(), Error> {
        let mut failure = None;
        while self.reset_syncs > 0 {
            let (tag, range) = self.stream.next_frame().await?;
            match tag {
                b'N' => self.on_notice(range)?,
                b'S' => self.on_parameter_status(range)?,
                b'E' => failure = Some(self.db_error(range)),
                b'Z' => {
                    self.on_ready(range)?;
                    self.reset_syncs -= 1;
                    if let Some(e) = failure.take() {
                        return Err(self.reset_failed(e));
                    }
                }
                // Note: NotificationResponses before UNLISTEN took effect were meant for the
                // previous user and are dropped with the rest of the reset's replies.
                _ => {}
            }
        }
        Ok(())
    }

    fn reset_failed(&mut self, e: Error) -> Error {
        self.stream.set_broken();
        Error::with_source(
            Kind::Closed,
            "resetting the pooled connection after its previous use failed, so it is closed; \
             retry the call (the pool opens another connection) and check the statement_timeout \
             or lock_timeout the previous user set",
            e,
        )
    }

    /// Without waiting: reads what the server sent while the connection sat idle and says
    /// whether it is still usable. A terminated backend has sent a FATAL error and closed the
    /// socket, so this catches most dead connections without a round trip.
    pub(crate) fn poll_alive(&mut self) -> bool {
        if self.stream.is_broken() {
            return false;
        }
        if self.pending_syncs > self.reset_syncs {
            // Note: replies are expected; they are not unsolicited.
            return true;
        }
        for _ in 0..MAX_UNSOLICITED {
            let Some(next) = self.stream.next_frame().now_or_never() else {
                return true;
            };
            let handled = match next {
                Ok((b'N', range)) => self.on_notice(range),
                Ok((b'S', range)) => self.on_parameter_status(range),
                Ok((b'A', _)) => Ok(()),
                Ok(_) => {
                    // An ErrorResponse (FATAL: terminating connection) or anything else
                    // unrequested: the session is over.
                    self.stream.set_broken();
                    return false;
                }
                Err(e) => Err(e),
            };
            if handled.is_err() {
                self.stream.set_broken();
                return false;
            }
        }
        true
    }
}
