//! Atomic pipelines: one Sync for the whole batch.
//!
//! The server runs the messages before a Sync as one implicit transaction (see "Pipelining"
//! in <https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-PIPELINING>):
//! it commits at the Sync, and after an error it discards every message up to the Sync and
//! rolls the batch back. Inside a transaction block the batch is part of the block, and an
//! error aborts the block like any other.
//!
//! Replies come as, per query, `[1 t T|n] 2 D* C`, then one `Z`; after an `E` nothing more
//! of the batch but the `Z`. A query is complete at its CommandComplete.
//!
//! The Sync is written only after the last query is encoded; until then
//! `Connection::open_batch` is set. When the client gives up on a batch (an encoding error,
//! a row it cannot decode, a drifted template (always found before the Sync), or the future was
//! dropped), it ends the batch with a Parse of text that is not SQL, whose syntax error makes
//! the server roll the batch back, and then the Sync.

use super::{Local, Run, Sink, resolve, slot_result};
use crate::conn::Connection;
use crate::error::Error;
use crate::proto::message::{CommandComplete, DataRow, Parse, TransactionStatus, sync};

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
            self.pending_syncs += 1;
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
        self.pending_syncs += 1;
        self.open_batch = false;
        run.syncing = true;
    }

    /// Handles one reply of an atomic batch.
    pub(super) fn on_batch_reply(
        &mut self,
        tag: u8,
        range: std::ops::Range<usize>,
        run: &mut Run,
        sink: &mut impl Sink,
    ) -> Result<(), Error> {
        match tag {
            b'1' | b'2' | b'3' | b's' => return Ok(()),
            b'E' => {
                let e = self.db_error(range);
                let index = run.queue.front().map(|slot| slot.index);
                // Note: the server skips the rest of the batch, Parse messages included.
                for slot in run.queue.drain(..) {
                    if let (true, Some(template)) = (slot.describes, slot.template)
                        && let Some(state @ Local::Describing) = run.local.get_mut(template.name)
                    {
                        *state = Local::Failed;
                    }
                }
                run.failure.get_or_insert((index, e));
                run.rolled_back = true;
                return Ok(());
            }
            b'Z' => {
                self.on_ready(range)?;
                if !run.syncing || !(run.queue.is_empty() || run.failure.is_some()) {
                    return Err(self.protocol_error("a ReadyForQuery in the middle of a batch"));
                }
                run.syncing = false;
                run.queue.clear();
                return Ok(());
            }
            _ => {}
        }
        let Some(slot) = run.queue.front_mut() else {
            return Err(self.protocol_error("a reply to no query"));
        };
        match tag {
            b't' => run.described_params = Some(self.described_params(range)?),
            b'T' | b'n' => {
                let columns = self.described_columns(tag, range)?;
                let params = run.described_params.take();
                super::described(slot, params, &mut run.local, &mut run.statements, columns);
            }
            b'D' => {
                if slot.error.is_some() || run.failure.is_some() {
                    return Ok(());
                }
                let Some(statement) = resolve(slot, &run.local, &run.statements) else {
                    return Ok(());
                };
                let result = match DataRow::decode(self.stream.body(range)) {
                    Ok(data) => sink.row(slot.index, data, statement),
                    Err(e) => return Err(self.decode_error(e)),
                };
                if let Err(e) = result {
                    slot.error = Some(e);
                }
            }
            b'C' | b'I' => {
                if tag == b'C' && sink.wants_counts() {
                    match CommandComplete::decode(self.stream.body(range)) {
                        Ok(done) => slot.affected = done.rows().unwrap_or(0),
                        Err(e) => return Err(self.decode_error(e)),
                    }
                }
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
            _ => return Err(self.protocol_error("an unexpected message in pipeline results")),
        }
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
