//! Returning a session to a clean state between pool users, without a round trip of its own.
//!
//! When a pooled connection is released, [`Connection::start_reset`] encodes the reset as
//! simple Query messages and writes them to the socket if it takes them without waiting
//! (otherwise they stay queued and go out with the next write); their ReadyForQuery replies
//! are counted in `syncs` as the reset's ([`Syncs::sent_reset`](super::syncs::Syncs::sent_reset)),
//! and nobody waits for them. So the server
//! rolls back, unlocks and resets right away, while the connection sits idle, and the replies
//! wait in the socket. They are read without waiting when the connection is checked out
//! ([`Connection::poll_alive`]): a failed reset is then caught before anyone uses the
//! connection. Replies that have not arrived by then are read by the next flow's
//! [`Connection::recv`] ([`Connection::finish_reset`]) before its own; a reset that failed
//! breaks the connection and the flow returns an error saying so, and the pool discards it.
//!
//! [`Reset::Session`] (the default) is what `DISCARD ALL` does, minus `DEALLOCATE ALL` (the
//! statement cache stays valid) and minus `DISCARD PLANS` (the server already re-plans a
//! cached statement when `search_path`, the role or a referenced object changes; discarding
//! every plan on every release would only slow down the next user). See
//! <https://www.postgresql.org/docs/current/sql-discard.html>. `DISCARD ALL` itself cannot be
//! used: it refuses to run inside a transaction block, and so inside a Query message of
//! several statements. Its parts do not, so they go out as one Query message, one cycle
//! with one ReadyForQuery. The server runs such a message as one implicit transaction: if
//! any part fails (say, to a one-millisecond `statement_timeout` the previous user set), the
//! transactional parts are undone with it — but a failed reset breaks the connection anyway,
//! and the pool closes it, which ends the whole session on the server. None of the parts is
//! refused in a read-only transaction (a previous user's `default_transaction_read_only`
//! still applies to the reset's own transaction until its `RESET ALL`). The advisory unlock
//! names `pg_catalog` so that no function on a previous user's `search_path` can stand in
//! for it. SQL-level `PREPARE`d statements are kept like the cache's.
//!
//! The `ROLLBACK` of a transaction the previous user left open or failed is a Query message
//! of its own, sent first and only when there is one (a `ROLLBACK` outside a transaction only
//! earns a warning). It would work at the head of the reset's message too (the statements
//! after it run in an implicit transaction of their own), but a transaction left open is the
//! exception, and on its own it serves [`Reset::Transaction`] as well, where it is the whole
//! reset.
//!
//! Behind a pooler in transaction mode ([`Pooler::Transaction`](crate::config::Pooler)) the
//! reset is only the `ROLLBACK` of an open transaction, whatever the pool's [`Reset`]:
//! outside a transaction the client has no server session of its own to reset (pgbouncer's
//! `server_reset_query`, `DISCARD ALL` by default, is run by pgbouncer itself, and only in
//! session mode unless `server_reset_query_always` is set).
//!
//! The session's statements are sent only when the session may have changed since the
//! connection was opened or last reset (`session_changed`): a connection that ran only
//! compiled statements the analyzer found free of session effects
//! ([`Template::changes_session`](crate::Template::changes_session) false: no write, no call
//! of `set_config`, a session advisory lock function, `nextval`/`setval` or a function that
//! is not built in) is returned as it is, and the release costs the server nothing. Any
//! run-time SQL text (a simple query, `query`/`execute` with SQL, `prepare`, COPY, a
//! pipeline's SQL, `LISTEN` through `batch_execute`), any template built at run time
//! ([`Template::leak`](crate::Template::leak)) and any marked template sets it, before the
//! statement is sent; so does a ParameterStatus the server sends during a flow or while the
//! connection sits idle (a reported setting changed, by whatever statement). Statements run
//! through [`Transaction`](super::Transaction)'s `BEGIN`/`COMMIT` do not: they are constants
//! that change nothing beyond the transaction, and the `ROLLBACK` of one left open is sent
//! whatever the flag says.
//!
//! A flow reads through [`Connection::recv`] (or calls [`Connection::ready`] first), never
//! `stream.next_frame` directly, so the reset's replies are never mistaken for its own.

use futures_util::FutureExt;

use super::{Connection, server_error};
use crate::error::{Error, Kind};
use crate::pool::Reset;
use crate::proto::message::{Backend, Query, TransactionStatus};

/// [`Reset::Session`]'s statements, in the order of `DISCARD ALL`'s documented equivalent,
/// as one Query message.
const SESSION_RESET: &str = "CLOSE ALL; SET SESSION AUTHORIZATION DEFAULT; RESET ALL; \
     UNLISTEN *; SELECT pg_catalog.pg_advisory_unlock_all(); DISCARD TEMP; DISCARD SEQUENCES";

/// How many unsolicited messages [`Connection::poll_alive`] reads before giving up on a
/// chatty connection.
const MAX_UNSOLICITED: usize = 64;

impl Connection {
    /// Whether replies other than those of a queued reset are outstanding: a flow was
    /// interrupted, and [`Connection::ready`] must read its replies before the next flow.
    pub(crate) fn has_interrupted_flow(&self) -> bool {
        self.syncs.interrupted() || self.open_batch
    }

    /// Queues the reset `reset` and sends it if the socket takes it without waiting, unless
    /// one is already queued and nothing ran since. Call only when no flow is interrupted
    /// ([`Connection::has_interrupted_flow`] is false). A failed send breaks the connection.
    pub(crate) fn start_reset(&mut self, reset: Reset) {
        debug_assert!(
            !self.has_interrupted_flow(),
            "drain before queueing a reset"
        );
        self.notice_handler = None;
        // Note: the next user must not see this user's notifications, their capacity or
        // time-out.
        self.notifications = super::notify::Queue::default();
        self.query_timeout = None;
        if self.syncs.resetting() {
            return;
        }
        if self.transaction_status != TransactionStatus::Idle {
            self.queue_reset_query("ROLLBACK");
        }
        // Note: behind a pooler in transaction mode the session is not this connection's:
        // each statement would run on whichever server session the pooler picks, and the
        // pooler resets its server sessions itself (pgbouncer's server_reset_query).
        if reset == Reset::Session && !self.pooled_transactions && self.session_changed {
            self.queue_reset_query(SESSION_RESET);
            self.session_changed = false;
        }
        // Note: the ROLLBACK goes out before anything the next user sends.
        self.transaction_status = TransactionStatus::Idle;
        // Note: what the socket does not take now stays queued for the next flush.
        if let Some(Err(_)) = self.stream.flush().now_or_never() {
            self.stream.set_broken();
        }
    }

    fn queue_reset_query(&mut self, sql: &str) {
        let queued = Query { sql }.encode(self.stream.write_buf());
        debug_assert!(
            queued.is_ok(),
            "the reset statements are constants without NUL"
        );
        self.syncs.sent_reset();
    }

    /// Reads the replies of a reset sent earlier. An error in the reset breaks the connection.
    /// Cancel safe: each reply is accounted for as it is read.
    pub(crate) async fn finish_reset(&mut self) -> Result<(), Error> {
        while self.syncs.resetting() {
            let message = self.stream.next_frame().await?;
            match self.stream.decode(message) {
                Ok(Backend::NoticeResponse(notice)) => self.on_notice(&notice),
                Ok(Backend::ParameterStatus(p)) => {
                    let (name, value) = (p.name.to_owned(), p.value.to_owned());
                    self.on_parameter_status(name, value)?;
                }
                Ok(Backend::ErrorResponse(db)) => return Err(self.reset_failed(server_error(db))),
                // Note: the reset's cycles are the oldest, so this answers one of them.
                Ok(Backend::ReadyForQuery(r)) => self.on_ready(r),
                // Note: NotificationResponses before UNLISTEN took effect were meant for the
                // previous user and are dropped with the rest of the reset's replies.
                Ok(_) => {}
                Err(e) => return Err(self.decode_error(e)),
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
        if self.has_interrupted_flow() {
            // Note: replies are expected; they are not unsolicited.
            return true;
        }
        if self.syncs.resetting() {
            match self.finish_reset().now_or_never() {
                // Note: the rest of the reset's replies are read by the next flow.
                None => return !self.stream.is_broken(),
                Some(Err(_)) => return false,
                Some(Ok(())) => {}
            }
        }
        for _ in 0..MAX_UNSOLICITED {
            let Some(next) = self.stream.next_frame().now_or_never() else {
                return true;
            };
            let Ok(message) = next else {
                self.stream.set_broken();
                return false;
            };
            let handled = match self.stream.decode(message) {
                Ok(Backend::NoticeResponse(notice)) => {
                    self.on_notice(&notice);
                    Ok(())
                }
                Ok(Backend::ParameterStatus(p)) => {
                    self.session_changed = true;
                    let (name, value) = (p.name.to_owned(), p.value.to_owned());
                    self.on_parameter_status(name, value)
                }
                Ok(Backend::NotificationResponse(_)) => Ok(()),
                // An ErrorResponse (FATAL: terminating connection), anything else
                // unrequested or a malformed message: the session is over.
                Ok(_) | Err(_) => {
                    self.stream.set_broken();
                    return false;
                }
            };
            if handled.is_err() {
                self.stream.set_broken();
                return false;
            }
        }
        true
    }
}
