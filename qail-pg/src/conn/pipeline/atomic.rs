//! Atomic pipelines: one Sync for the whole batch.
//!
//! The server runs the messages before a Sync as one implicit transaction (see "Pipelining"
//! in <https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-PIPELINING>):
//! it commits at the Sync, and after an error it discards every message up to the Sync and
//! rolls the batch back. Inside a transaction block the batch is part of the block, and an
//! error aborts the block like any other.
//!
//! Replies come as, per query, ParseComplete, ParameterDescription and RowDescription (or
//! NoData) when its template is described, BindComplete, DataRows and CommandComplete; then
//! one ReadyForQuery for the batch. After an ErrorResponse nothing more of the batch comes
//! but the ReadyForQuery. A query is complete at its CommandComplete. The replies are read by
//! the pipeline's one dispatch loop; this file holds what the atomic mode does differently.
//!
//! The Sync is written only after the last query is encoded; until then
//! `Connection::open_batch` is set. When the client gives up on a batch (an encoding error,
//! a row it cannot decode, a drifted template (always found before the Sync), or the future was
//! dropped), it ends the batch with a Parse of text that is not SQL, whose syntax error makes
//! the server roll the batch back, and then the Sync.

use super::run::{Run, parse_failed, slot_result};
use crate::conn::Connection;
use crate::conn::row_sink::RowSink;
use crate::error::Error;
use crate::proto::message::{Parse, TransactionStatus, sync};

/// Not SQL: Parse fails with a syntax error, so the server rolls the batch back. The text
/// shows up in the server's log next to the error.
const ABANDON: &str = "qail-pg: the client abandoned this atomic pipeline; it is rolled back";

impl Connection {
    /// Ends an atomic batch whose pipeline was dropped before its Sync: the server rolls back
    /// what it ran of it. Nothing to do when no batch is open.
    pub(crate) fn abandon_batch(&mut self) {
        if self.open_batch {
            self.write_abandon();
            sync(self.stream.write_buf());
            self.syncs.sent(1);
            self.open_batch = false;
        }
    }

    fn write_abandon(&mut self) {
        let queued = Parse {
            name: "",
            query: ABANDON,
            param_types: &[],
        }
        .encode(self.stream.write_buf());
        debug_assert!(queued.is_ok(), "a constant without NUL");
    }

    /// Writes the batch's Sync; after a failure, the abandoning Parse before it.
    pub(super) fn end_batch(&mut self, run: &mut Run) {
        if run.failure.is_some() {
            self.write_abandon();
            run.rolled_back = true;
        }
        sync(self.stream.write_buf());
        self.syncs.sent(1);
        self.open_batch = false;
        run.syncing = true;
    }

    /// The batch's ReadyForQuery: it must come after the batch's Sync, once every query
    /// completed or the batch failed.
    pub(super) fn end_batch_cycle(&mut self, run: &mut Run) -> Result<(), Error> {
        if !run.syncing || !(run.queue.is_empty() || run.failure.is_some()) {
            return Err(self.protocol_error("a ReadyForQuery in the middle of a batch"));
        }
        run.syncing = false;
        run.queue.clear();
        Ok(())
    }

    /// The error of a failed atomic batch: which query failed and what became of the batch.
    pub(super) fn batch_error(&self, index: Option<usize>, e: Error, rolled_back: bool) -> Error {
        let what = match index {
            Some(i) => format!("query {} (index {i}) of the atomic pipeline failed", i + 1),
            None => "the atomic pipeline failed as it committed".to_owned(),
        };
        let outcome = match (rolled_back, self.transaction_status) {
            (true, TransactionStatus::Failed) => {
                "; the batch ran inside a transaction block, which is now aborted: roll it back \
                 (nothing of the block takes effect) and run it again"
            }
            (true, _) => {
                "; the server rolled back every query of the batch (none took effect); fix the \
                 failing query and run the batch again"
            }
            (false, TransactionStatus::Idle) => {
                "; the error was found after the batch was sent, and the server had already \
                 committed every query of it"
            }
            (false, _) => {
                "; the error was found after the batch was sent, and the server ran every query \
                 of it: roll back the transaction to undo them"
            }
        };
        e.in_pipeline(index, format!("{what}{outcome}"))
    }
}

/// An error loses the whole batch: the server skips the rest of it, Parse messages included,
/// up to the Sync, and rolls it back.
pub(super) fn fail_batch(e: Error, run: &mut Run) {
    let index = run.queue.front().map(|slot| slot.index);
    for slot in run.queue.drain(..) {
        parse_failed(&slot, &mut run.local);
    }
    run.failure.get_or_insert((index, e));
    run.rolled_back = true;
}

/// A query of the batch completed (its CommandComplete or EmptyQueryResponse): its result
/// goes to the sink, unless the batch is already lost; a result that is an error (a row the
/// sink refused, a drifted template) loses the batch.
// Note: once per query of an atomic batch, on the hot path of the reply dispatch.
#[inline(always)]
pub(super) fn end_batch_query(run: &mut Run, sink: &mut dyn RowSink) {
    let slot = run.queue.pop_front().expect("the queue has a front slot");
    let index = slot.index;
    match slot_result(slot, &run.local) {
        Ok(_) if run.failure.is_some() => {}
        Ok(affected) => sink.done(index, Ok(affected)),
        Err(e) => {
            run.failure.get_or_insert((Some(index), e));
        }
    }
}
