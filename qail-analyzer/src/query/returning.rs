//! `RETURNING old.col, new.col` (PostgreSQL 18): the row before and after the change, in
//! INSERT, UPDATE, DELETE and MERGE. `old` is NULL for an inserted row, `new` for a deleted one
//! (in MERGE, both may be). `RETURNING WITH (OLD AS o, NEW AS n)` renames them (the old
//! name is then unknown), read from what [`crate::set_aside`] kept.

use qail_catalog::{NEWEST, Versions};
use sqlparser::ast::SelectItem;

use crate::StatementKind;
use crate::ctx::Ctx;
use crate::diag::version_gap;
use crate::scope::Scope;

/// Adds `old` and `new` to the scope when the RETURNING list names them (and no relation of
/// the statement is called so); how many relations were added.
pub(super) fn old_new(
    cx: &mut Ctx,
    sc: &mut Scope,
    items: &[SelectItem],
    kind: StatementKind,
) -> usize {
    let renamed = items
        .first()
        .map(|i| cx.range(i).start)
        .and_then(|at| cx.aside.returning_names(cx.sql, at))
        .cloned();
    let have = Versions::span(18, NEWEST);
    if let Some(r) = &renamed
        && !have.covers(cx.target)
    {
        let (message, hint) = version_gap("RETURNING WITH (OLD AS …, NEW AS …)", have, cx.target);
        cx.error(r.range.clone(), message, Some(hint));
    }
    // Note: a new name may be neither the other one nor a relation's of the statement.
    if let Some(r) = &renamed {
        let clash = [&r.old, &r.new].into_iter().flatten().find(|name| {
            r.old
                .as_ref()
                .zip(r.new.as_ref())
                .is_some_and(|(o, n)| o == n)
                || sc.rels.iter().any(|rel| rel.name == **name)
        });
        if let Some(name) = clash {
            cx.error(
                r.range.clone(),
                format!("table name \"{name}\" specified more than once"),
                Some("give old and new names that no table of the statement has".into()),
            );
            return 0;
        }
    }
    let old = renamed.as_ref().and_then(|r| r.old.clone());
    let new = renamed.as_ref().and_then(|r| r.new.clone());
    let (old, new) = (
        old.unwrap_or_else(|| "old".to_owned()),
        new.unwrap_or_else(|| "new".to_owned()),
    );
    let named = |word: &str| sc.rels.iter().any(|r| r.name == word);
    let Some(target) = sc.rels.first() else {
        return 0;
    };
    let uses = items
        .iter()
        .find(|i| names(&i.to_string(), &old) || names(&i.to_string(), &new));
    let Some(first) = uses else {
        return 0;
    };
    if named(&old) || named(&new) {
        return 0;
    }
    if renamed.is_none() && !have.covers(cx.target) {
        let (message, hint) = version_gap("RETURNING old and new", have, cx.target);
        let range = cx.range(first);
        cx.error(range, message, Some(hint));
    }
    let mut added = Vec::new();
    for (name, absent) in [
        (
            old.as_str(),
            (kind == StatementKind::Insert).then_some("old is NULL for an inserted row"),
        ),
        (
            new.as_str(),
            (kind == StatementKind::Delete).then_some("new is NULL for a deleted row"),
        ),
    ] {
        let mut rel = target.clone();
        rel.name = name.to_owned();
        rel.schema = None;
        rel.qualified_only = true;
        if let Some(reason) = absent {
            rel.null_reason = Some(reason.to_owned());
        }
        // Note: what WHERE proved holds for the row before the change only.
        if name == new || absent.is_some() {
            rel.proven = vec![false; rel.cols.len()];
        }
        added.push(rel);
    }
    let n = added.len();
    sc.rels.extend(added);
    n
}

/// Whether SQL text uses `word` as a qualifier (`old.balance`, `old.*`).
fn names(text: &str, word: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let b = lower.as_bytes();
    lower
        .match_indices(&format!("{}.", word.to_ascii_lowercase()))
        .any(|(i, _)| {
            i == 0 || !(b[i - 1].is_ascii_alphanumeric() || matches!(b[i - 1], b'_' | b'"' | b'.'))
        })
}
