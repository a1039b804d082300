//! `RETURNING old.col, new.col` (PostgreSQL 18): the row before and after the change, in
//! INSERT, UPDATE, DELETE and MERGE. `old` is NULL for an inserted row, `new` for a deleted one
//! (in MERGE, both may be).

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
    let named = |word: &str| sc.rels.iter().any(|r| r.name == word);
    let Some(target) = sc.rels.first() else {
        return 0;
    };
    let uses = items
        .iter()
        .find(|i| names(&i.to_string(), "old") || names(&i.to_string(), "new"));
    let Some(first) = uses else {
        return 0;
    };
    if named("old") || named("new") {
        return 0;
    }
    let have = Versions::span(18, NEWEST);
    if !have.covers(cx.target) {
        let (message, hint) = version_gap("RETURNING old and new", have, cx.target);
        let range = cx.range(first);
        cx.error(range, message, Some(hint));
    }
    let mut added = Vec::new();
    for (name, absent) in [
        (
            "old",
            (kind == StatementKind::Insert).then_some("old is NULL for an inserted row"),
        ),
        (
            "new",
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
        if name == "new" || absent.is_some() {
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
    lower.match_indices(&format!("{word}.")).any(|(i, _)| {
        i == 0 || !(b[i - 1].is_ascii_alphanumeric() || matches!(b[i - 1], b'_' | b'"' | b'.'))
    })
}
