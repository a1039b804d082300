//! Rules (`CREATE RULE`) on the target of an INSERT, UPDATE or DELETE, when the snapshot
//! knows them (a pull records them): the server rewrites the statement into the rules'
//! actions when it parses it, so a rule decides whether RETURNING is possible, whether the
//! statement may be a data-modifying WITH query, and what the server describes.

use std::ops::Range;

use qail_schema::snapshot::{Command, Rule};

use crate::StatementKind;
use crate::ctx::Ctx;
use crate::scope::Rel;

/// The command a statement kind is, for the rules that fire on it.
fn event(kind: StatementKind) -> Option<Command> {
    match kind {
        StatementKind::Insert => Some(Command::Insert),
        StatementKind::Update => Some(Command::Update),
        StatementKind::Delete => Some(Command::Delete),
        _ => None,
    }
}

/// The rules on `target` that fire on `kind`.
fn firing<'a>(cx: &Ctx<'a>, target: &Rel, kind: StatementKind) -> Vec<&'a Rule> {
    let (Some(event), Some(row)) = (event(kind), target.row_type.as_ref()) else {
        return Vec::new();
    };
    let Some(rules) = cx.snap.rules.as_ref() else {
        return Vec::new();
    };
    rules
        .iter()
        .filter(|r| r.schema == row.schema && r.table == row.name && r.event == event)
        .collect()
}

/// What the statement's rules make of it, refusing what the server refuses: a data-modifying
/// WITH query (`in_with`) with any rule but one unconditional single-action DO INSTEAD, and
/// RETURNING without an unconditional DO INSTEAD rule whose action has RETURNING. `Some(true)`
/// when an unconditional DO INSTEAD rule runs no statement of the original's kind, so the
/// server describes no rows (outside WITH: a WITH query becomes the rule's one action, whose
/// RETURNING gives the relation's row); `None` after reporting an error.
pub(super) fn apply(
    cx: &mut Ctx,
    target: &Rel,
    kind: StatementKind,
    returning: bool,
    in_with: bool,
    at: Range<usize>,
) -> Option<bool> {
    let rules = firing(cx, target, kind);
    if rules.is_empty() {
        return Some(false);
    }
    let verb = format!("{kind:?}").to_uppercase();
    if in_with {
        let refusal = rules.iter().find_map(|r| {
            // Note: the server words a rule that leaves only a utility statement (DO INSTEAD
            // NOTIFY) as DO ALSO too.
            let utility = r.actions.len() == 1 && r.actions[0].command == Command::Other;
            if !r.instead || utility {
                Some("DO ALSO")
            } else if r.actions.is_empty() {
                Some("DO INSTEAD NOTHING")
            } else if r.conditional {
                Some("conditional DO INSTEAD")
            } else if r.actions.len() > 1 {
                Some("multi-statement DO INSTEAD")
            } else {
                None
            }
        });
        if let Some(which) = refusal {
            cx.error(
                at,
                format!("{which} rules are not supported for data-modifying statements in WITH"),
                Some(format!(
                    "the rules on {} rewrite this {verb}: run it on its own, outside WITH",
                    target.label
                )),
            );
            return None;
        }
    }
    let unconditional: Vec<&&Rule> = rules
        .iter()
        .filter(|r| r.instead && !r.conditional)
        .collect();
    if returning
        && rules.iter().any(|r| r.instead)
        && !unconditional
            .iter()
            .any(|r| r.actions.iter().any(|a| a.returning))
    {
        cx.error(
            at,
            format!(
                "cannot perform {verb} RETURNING on relation \"{}\"",
                target.row_type.as_ref().map_or(target.name.as_str(), |t| t.name.as_str())
            ),
            Some(format!(
                "its rules need an unconditional ON {verb} DO INSTEAD rule with a RETURNING clause; \
                 leave out RETURNING"
            )),
        );
        return None;
    }
    // Note: the result is the rewritten statement of the original's kind; with none, the
    // server describes no rows.
    let original = event(kind);
    Some(
        !in_with
            && !unconditional.is_empty()
            && !unconditional
                .iter()
                .flat_map(|r| &r.actions)
                .any(|a| Some(a.command) == original),
    )
}
