//! The state of one pipeline run: the queries whose replies are awaited ([`Slot`]s), the
//! statements they run, the templates described on the way, and how many reply bytes the
//! server still owes.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use super::mode::Mode;
use crate::conn::Statement;
use crate::conn::compiled::{check_drift, template_statement};
use crate::error::{Error, Kind};
use crate::row::Column;
use crate::template::Template;

/// The most bytes [`Run::owed`] counts: more than one wait asks for.
const MAX_OWED: usize = 32 * 1024;

/// A template's state within one pipeline.
pub(super) enum Local {
    /// Prepared (from the cache, or described earlier in this pipeline): its statement is
    /// `Run::statements[i]`.
    Ready(u32),
    /// Parse + Describe sent, description not read yet.
    Describing,
    /// Described, but its types differ from the template's (the message).
    Drift(String),
    /// The Parse failed.
    Failed,
}

/// `Slot::statement` of a query whose template is being described in this pipeline.
pub(super) const UNRESOLVED: u32 = u32::MAX;

/// A query whose replies are awaited. Kept small: a pipeline queues one per query.
pub(crate) struct Slot {
    pub(super) index: usize,
    /// The statement its rows decode with (`Run::statements[i]`), or [`UNRESOLVED`] while
    /// the template whose description this slot or an earlier one reads is described.
    pub(super) statement: u32,
    pub(super) template: Option<&'static Template>,
    /// Whether this slot carries the template's Parse + Describe.
    pub(super) describes: bool,
    pub(super) error: Option<Error>,
    pub(super) affected: u64,
    /// Per query: how many bytes the connection must have sent for this query's Sync to
    /// have gone out ([`Stream::queued_total`](crate::conn::stream::Stream::queued_total) after
    /// it was queued); `u64::MAX` until it is queued.
    pub(super) synced_at: u64,
}

/// The templates' states within one pipeline, by name.
pub(super) type Locals = HashMap<&'static str, Local, BuildHasherDefault<NameHasher>>;

/// FNV-1a over a template name: names come from the program, not from the server, so a
/// cheap hash serves (a lookup per query).
pub(super) struct NameHasher(u64);

impl Default for NameHasher {
    fn default() -> NameHasher {
        NameHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for NameHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

pub(crate) struct Run {
    pub(super) mode: Mode,
    pub(super) queue: VecDeque<Slot>,
    /// The statements the queries run, each once (slots refer to them by index).
    pub(super) statements: Vec<Statement>,
    /// The template of the previous query and its statement, when ready: consecutive
    /// queries of one template skip the lookup in `local`.
    pub(super) last: Option<(&'static Template, u32)>,
    /// The ParameterDescription of the template being described, until its RowDescription.
    pub(super) described_params: Option<Vec<crate::Oid>>,
    /// The template being described for the job that waits to be bound: no other job is
    /// encoded until its description is read and checked.
    pub(super) waiting: Option<&'static Template>,
    pub(super) local: Locals,
    /// Templates described by this pipeline, to cache (or close) at the end.
    pub(super) described: Vec<&'static Template>,
    pub(super) next_index: usize,
    /// Atomic: the batch's Sync is written and its ReadyForQuery not read yet.
    pub(super) syncing: bool,
    /// Atomic: the first failure, with the index of the query (none when the commit failed).
    pub(super) failure: Option<(Option<usize>, Error)>,
    /// Atomic: the server saw an error before the batch committed, so it is rolled back.
    pub(super) rolled_back: bool,
    /// Jobs may be left to take.
    pub(super) more: bool,
    /// The job in hand waits for its template's description before it is bound.
    pub(super) pending: bool,
}

impl Run {
    pub(super) fn new(mode: Mode, queue: VecDeque<Slot>) -> Run {
        Run {
            mode,
            queue,
            statements: Vec::new(),
            last: None,
            described_params: None,
            waiting: None,
            local: Locals::default(),
            described: Vec::new(),
            next_index: 0,
            syncing: false,
            failure: None,
            rolled_back: false,
            more: true,
            pending: false,
        }
    }
}

/// The result of a query whose replies are all read.
pub(super) fn slot_result(slot: Slot, local: &Locals) -> Result<u64, Error> {
    match slot.error {
        Some(e) => Err(e),
        // Note: a slot bound to a ready statement cannot have drifted.
        None if slot.statement != UNRESOLVED => Ok(slot.affected),
        None => match slot.template.map(|t| local.get(t.name)) {
            Some(Some(Local::Drift(message))) => {
                Err(Error::new(Kind::SchemaDrift, message.clone()))
            }
            _ => Ok(slot.affected),
        },
    }
}

/// Marks the template whose Parse + Describe `slot` carries as failed: the server refused
/// the Parse, or skipped it after an earlier error.
pub(super) fn parse_failed(slot: &Slot, local: &mut Locals) {
    if let (true, Some(template)) = (slot.describes, slot.template)
        && let Some(state @ Local::Describing) = local.get_mut(template.name)
    {
        *state = Local::Failed;
    }
}

/// The statement a slot's rows are decoded with.
#[inline]
pub(super) fn resolve<'s>(
    slot: &Slot,
    local: &Locals,
    statements: &'s [Statement],
) -> Option<&'s Statement> {
    let i = match slot.statement {
        UNRESOLVED => match local.get(slot.template?.name) {
            Some(Local::Ready(i)) => *i,
            _ => return None,
        },
        i => i,
    };
    statements.get(i as usize)
}

/// Records a template's description (`params` from its ParameterDescription), checked
/// against its expectations.
pub(super) fn described(
    slot: &Slot,
    params: Option<Vec<crate::Oid>>,
    local: &mut Locals,
    statements: &mut Vec<Statement>,
    columns: Vec<Column>,
) {
    let (Some(template), Some(params)) = (slot.template, params) else {
        return;
    };
    let state = match check_drift(template, &params, &columns) {
        Ok(()) => {
            statements.push(template_statement(template, template.name, params, columns));
            Local::Ready(index_of_last(statements))
        }
        Err(e) => Local::Drift(e.to_string()),
    };
    local.insert(template.name, state);
}

/// The index of the last statement, as a slot stores it.
fn index_of_last(statements: &[Statement]) -> u32 {
    // Note: a pipeline has at most one statement per query, and its queries are counted in
    // `usize`; more than `u32::MAX - 1` distinct statements cannot be prepared on one server.
    u32::try_from(statements.len() - 1).unwrap_or(UNRESOLVED - 1)
}

/// How many queries in the server's hand make it busy enough ([`Run::busy`]) that new ones
/// are held back to be written together: with fewer, a held-back write often waits for a
/// scheduler that has nothing else to run (an extra `epoll_wait`) and saves little.
const BUSY: usize = 8;

/// The fewest bytes the server answers a per-query cycle with: ReadyForQuery (6 bytes).
const CYCLE_MIN: usize = 6;

/// The fewest bytes the server answers a per-query cycle that carries a Bind with: an
/// ErrorResponse (at least 6 bytes) or BindComplete and an end of the portal (at least 10),
/// then ReadyForQuery.
const BOUND_CYCLE_MIN: usize = 12;

impl Run {
    /// A lower bound on the bytes the server still owes for the cycles sent so far (`sent`
    /// bytes cover them), for [`Stream::receive_sending`](crate::conn::stream::Stream::receive_sending)
    /// to wait for: per query, one Sync each, every cycle whose Sync went out and is not
    /// answered yet. The query at the front may have been answered up to its ReadyForQuery;
    /// a query whose Bind was not sent (its error is the client's) is answered by
    /// ReadyForQuery alone. 0 (wake at the first byte) in an atomic batch, and while a
    /// template is described.
    pub(super) fn owed(&self, sent: u64) -> usize {
        if self.mode != Mode::PerQuery || self.waiting.is_some() {
            return 0;
        }
        let mut owed = 0;
        for (i, slot) in self.queue.iter().enumerate() {
            if slot.synced_at > sent || slot.describes || owed >= MAX_OWED {
                break;
            }
            owed += if i == 0 || slot.error.is_some() {
                CYCLE_MIN
            } else {
                BOUND_CYCLE_MIN
            };
        }
        owed
    }

    /// Whether the server has at least [`BUSY`] queries of this run in hand: their Syncs
    /// went out (`sent` bytes cover them) and they are not answered yet.
    pub(super) fn busy(&self, sent: u64) -> bool {
        self.queue
            .iter()
            .take(BUSY)
            .take_while(|slot| slot.synced_at <= sent)
            .count()
            >= BUSY
    }

    /// The index of `statement` in `statements`, added unless it is the last one added.
    pub(super) fn intern(&mut self, statement: &Statement) -> u32 {
        if let Some(last) = self.statements.last()
            && last.same(statement)
        {
            return index_of_last(&self.statements);
        }
        self.statements.push(statement.clone());
        index_of_last(&self.statements)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(synced_at: u64, error: bool, describes: bool) -> Slot {
        Slot {
            index: 0,
            statement: 0,
            template: None,
            describes,
            error: error.then(|| Error::new(Kind::Usage, "a client-side failure")),
            affected: 0,
            synced_at,
        }
    }

    fn run(mode: Mode, slots: Vec<Slot>) -> Run {
        Run::new(mode, slots.into())
    }

    #[test]
    fn a_per_query_pipeline_is_owed_the_least_its_sent_cycles_are_answered_with() {
        let slots = || {
            vec![
                slot(10, false, false),
                slot(20, false, false),
                slot(30, true, false),
                slot(40, false, false),
                slot(u64::MAX, false, false),
            ]
        };
        // The front: its ReadyForQuery at least; a Bind sent: 12; the client's failure: 6.
        assert_eq!(run(Mode::PerQuery, slots()).owed(40), 6 + 12 + 6 + 12);
        // Only what was sent is owed.
        assert_eq!(run(Mode::PerQuery, slots()).owed(25), 6 + 12);
        assert_eq!(run(Mode::PerQuery, slots()).owed(5), 0);
        // A template being described stops the count; an atomic batch owes one reply.
        let describing = vec![slot(10, false, false), slot(20, false, true)];
        assert_eq!(run(Mode::PerQuery, describing).owed(40), 6);
        assert_eq!(run(Mode::Atomic, slots()).owed(40), 0);
        let mut waiting = run(Mode::PerQuery, slots());
        waiting.waiting = Some(Template::leak("SELECT 1", &[], &[]).unwrap());
        assert_eq!(waiting.owed(40), 0);
    }
}
