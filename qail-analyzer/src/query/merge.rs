//! `MERGE INTO target USING source ON … WHEN …` (PostgreSQL 15): the join condition, each
//! clause's condition and action (UPDATE SET, INSERT VALUES, DELETE) over the relations it
//! sees, and `RETURNING` with `merge_action()` (PostgreSQL 17). `WHEN NOT MATCHED BY SOURCE`
//! and `BY TARGET` are PostgreSQL 17's. A `THEN DO NOTHING` clause is set aside before parsing
//! ([`crate::set_aside`]); its condition is typed here over what its kind of clause sees.

use qail_catalog::{NEWEST, Versions};
use sqlparser::ast::{
    Expr, MergeAction, MergeClause, MergeClauseKind, MergeInsertKind, OutputClause, SelectItem,
    TableFactor, TableWithJoins,
};

use crate::StatementKind;
use crate::ctx::{Ctx, Shape};
use crate::diag::version_gap;
use crate::expr::{Fit, condition, expect};
use crate::query::assign::{
    is_default, no_such_column, refuse_computed, refused_in_insert, set_list,
};
use crate::query::{finish, from, scope_in};
use crate::scope::{Rel, Scope, norm};

/// The pieces of a MERGE statement.
pub(crate) struct Merge<'a> {
    pub(crate) table: &'a TableFactor,
    pub(crate) source: &'a TableFactor,
    pub(crate) on: &'a Expr,
    pub(crate) clauses: &'a [MergeClause],
    pub(crate) output: Option<&'a OutputClause>,
}

/// Whether every version of the target has what PostgreSQL `since` added; if not, an error
/// at `range` naming `what`.
fn needs(cx: &mut Ctx, since: u8, what: &str, range: std::ops::Range<usize>) -> bool {
    let have = Versions::span(since, NEWEST);
    if have.covers(cx.target) {
        return true;
    }
    let (message, hint) = version_gap(what, have, cx.target);
    cx.error(range, message, Some(hint));
    false
}

pub(crate) fn merge(cx: &mut Ctx, m: &Merge, outer: Option<&Scope>) -> Option<Shape> {
    let whole = 0..cx.sql.len();
    if !needs(cx, 15, "MERGE", whole.clone()) {
        return None;
    }
    let returning: Option<&[SelectItem]> = match m.output {
        None => None,
        Some(OutputClause::Returning { select_items }) => {
            let range = select_items.first().map_or(whole.clone(), |i| cx.range(i));
            if !needs(cx, 17, "MERGE … RETURNING", range) {
                return None;
            }
            Some(select_items)
        }
        Some(OutputClause::Output { .. }) => {
            cx.error(
                whole,
                "OUTPUT is not PostgreSQL syntax",
                Some("write RETURNING".into()),
            );
            return None;
        }
    };
    let TableFactor::Table { name, alias, .. } = m.table else {
        let r = cx.range(m.table);
        cx.error(
            r,
            "MERGE INTO needs a table",
            Some("merge into a table or view".into()),
        );
        return None;
    };
    let target = from::table(cx, &Scope::default(), name, alias.as_ref())?;
    let source = TableWithJoins {
        relation: m.source.clone(),
        joins: Vec::new(),
    };
    // The source alone, both, the target alone: what each kind of clause sees.
    let mut only_source = scope_in(outer);
    if !from::from_clause(cx, &mut only_source, std::slice::from_ref(&source)) {
        return None;
    }
    let mut both = scope_in(outer);
    both.rels.push(target.clone());
    both.star = (0..target.cols.len())
        .map(|c| crate::scope::Star::Col(0, c))
        .collect();
    if !from::from_clause(cx, &mut both, std::slice::from_ref(&source)) {
        return None;
    }
    let mut only_target = scope_in(outer);
    only_target.rels.push(target.clone());
    condition(cx, &both, m.on, "ON");
    let mut by_source = false;
    let on_end = cx.range(m.on).end;
    let returning_at = returning
        .and_then(|items| items.first())
        .map_or(cx.sql.len(), |i| cx.range(i).start);
    let nothing: Vec<_> = cx
        .aside
        .do_nothing
        .iter()
        .filter(|r| r.start >= on_end && r.end <= returning_at)
        .cloned()
        .collect();
    for clause in nothing {
        do_nothing(cx, clause, [&both, &only_source, &only_target]);
    }
    if !reachable(cx, m.clauses, whole.clone()) {
        return None;
    }
    for clause in m.clauses {
        if let Some(p) = &clause.predicate
            && let Some(col) = system_column(p)
        {
            cx.error(
                cx.range(p),
                format!("cannot use system column \"{col}\" in MERGE WHEN condition"),
                Some("compare user columns in WHEN; system columns are not available there".into()),
            );
            return None;
        }
        let sc = match clause.clause_kind {
            MergeClauseKind::Matched => &both,
            MergeClauseKind::NotMatched => &only_source,
            MergeClauseKind::NotMatchedByTarget => {
                if !needs(cx, 17, "WHEN NOT MATCHED BY TARGET", whole.clone()) {
                    return None;
                }
                &only_source
            }
            MergeClauseKind::NotMatchedBySource => {
                by_source = true;
                if !needs(cx, 17, "WHEN NOT MATCHED BY SOURCE", whole.clone()) {
                    return None;
                }
                &only_target
            }
        };
        if let Some(p) = &clause.predicate {
            condition(cx, sc, p, "WHEN");
        }
        match &clause.action {
            MergeAction::Update { assignments } => set_list(cx, sc, &target, assignments),
            MergeAction::Delete => {}
            MergeAction::Insert(ins) => insert_values(cx, sc, &target, &ins.columns, &ins.kind),
        }
    }
    // Note: RETURNING sees the source as NULL on the rows of a NOT MATCHED BY SOURCE action.
    if by_source {
        for rel in both.rels.iter_mut().skip(1) {
            rel.null_reason = Some(format!(
                "{} is NULL on rows of a WHEN NOT MATCHED BY SOURCE action",
                rel.name
            ));
        }
    }
    cx.merge_returning = true;
    let shape = finish(cx, &mut both, returning, StatementKind::Merge);
    cx.merge_returning = false;
    Some(shape)
}

/// A `WHEN [NOT] MATCHED [BY SOURCE | BY TARGET] [AND condition] THEN DO NOTHING` clause at
/// `clause`: its version, and its condition over `scopes` (both relations, the source, the
/// target).
fn do_nothing(cx: &mut Ctx, clause: std::ops::Range<usize>, scopes: [&Scope; 3]) {
    use crate::set_aside::{parser_over, take_word, take_words};
    let read = parser_over(cx.sql, clause.clone()).and_then(|mut p| {
        take_word(&mut p, "WHEN");
        let not = take_word(&mut p, "NOT");
        if !take_word(&mut p, "MATCHED") {
            return Err(sqlparser::parser::ParserError::ParserError(
                "expected MATCHED".into(),
            ));
        }
        let kind = if take_words(&mut p, &["BY", "SOURCE"]) {
            Some("BY SOURCE")
        } else if take_words(&mut p, &["BY", "TARGET"]) {
            Some("BY TARGET")
        } else {
            None
        };
        let condition = if take_word(&mut p, "AND") {
            Some(p.parse_expr()?)
        } else {
            None
        };
        if !take_words(&mut p, &["THEN", "DO", "NOTHING"]) {
            return Err(sqlparser::parser::ParserError::ParserError(
                "expected THEN DO NOTHING".into(),
            ));
        }
        Ok((not, kind, condition))
    });
    let (not, kind, when) = match read {
        Ok(r) => r,
        Err(e) => {
            cx.error(
                clause,
                format!("MERGE WHEN clause: {e}"),
                Some("write WHEN [NOT] MATCHED [BY SOURCE | BY TARGET] [AND condition] THEN DO NOTHING".into()),
            );
            return;
        }
    };
    let sc = match (not, kind) {
        (false, None) => scopes[0],
        (true, None) => scopes[1],
        (true, Some(by)) => {
            if !needs(cx, 17, &format!("WHEN NOT MATCHED {by}"), clause.clone()) {
                return;
            }
            if by == "BY SOURCE" {
                scopes[2]
            } else {
                scopes[1]
            }
        }
        (false, Some(_)) => {
            cx.error(
                clause,
                "BY SOURCE and BY TARGET follow NOT MATCHED only",
                Some("write WHEN NOT MATCHED BY SOURCE or WHEN MATCHED".into()),
            );
            return;
        }
    };
    if let Some(c) = when {
        condition(cx, sc, &c, "WHEN");
    }
}

/// Whether every WHEN clause can be reached: none follows an unconditional clause of the
/// same kind (MATCHED, NOT MATCHED [BY TARGET], NOT MATCHED BY SOURCE). Reports the error.
fn reachable(cx: &mut Ctx, clauses: &[MergeClause], whole: std::ops::Range<usize>) -> bool {
    let group = |k: &MergeClauseKind| match k {
        MergeClauseKind::Matched => 0,
        MergeClauseKind::NotMatched | MergeClauseKind::NotMatchedByTarget => 1,
        MergeClauseKind::NotMatchedBySource => 2,
    };
    let mut closed = [false; 3];
    for c in clauses {
        let g = group(&c.clause_kind);
        if closed[g] {
            cx.error(
                whole,
                "unreachable WHEN clause specified after unconditional WHEN clause",
                Some("give the earlier clause an AND condition, or drop the later one".into()),
            );
            return false;
        }
        closed[g] = c.predicate.is_none();
    }
    true
}

/// A system column (`xmin`, `ctid`, …; `tableoid` is allowed) that `e` refers to, outside
/// subqueries and calls.
fn system_column(e: &Expr) -> Option<String> {
    const SYSTEM: &[&str] = &["ctid", "xmin", "xmax", "cmin", "cmax"];
    let named = |id: &sqlparser::ast::Ident| {
        let n = norm(id);
        SYSTEM.contains(&n.as_str()).then_some(n)
    };
    match e {
        Expr::Identifier(id) => named(id),
        Expr::CompoundIdentifier(ids) => ids.last().and_then(named),
        Expr::BinaryOp { left, right, .. } => system_column(left).or_else(|| system_column(right)),
        Expr::UnaryOp { expr, .. }
        | Expr::Nested(expr)
        | Expr::IsNull(expr)
        | Expr::IsNotNull(expr)
        | Expr::Cast { expr, .. } => system_column(expr),
        _ => None,
    }
}

/// `INSERT [(cols)] VALUES (…)` of a WHEN NOT MATCHED clause.
fn insert_values(
    cx: &mut Ctx,
    sc: &Scope,
    target: &Rel,
    columns: &[sqlparser::ast::Ident],
    kind: &MergeInsertKind,
) {
    let MergeInsertKind::Values(values) = kind else {
        return;
    };
    let cols: Vec<_> = if columns.is_empty() {
        target.cols.iter().collect()
    } else {
        let mut cols = Vec::new();
        for id in columns {
            match target.cols.iter().find(|c| c.name == norm(id)) {
                Some(c) => cols.push(c),
                None => no_such_column(cx, target, id),
            }
        }
        cols
    };
    // Note: `INSERT (cols) OVERRIDING … VALUE VALUES (…)`: the clause the pre-pass removed
    // ends right before this clause's VALUES.
    let first = values
        .rows
        .iter()
        .flatten()
        .next()
        .map(|e| cx.range(e).start);
    let overriding = first.and_then(|at| {
        cx.overriding
            .iter()
            .find(|(r, _)| {
                cx.sql.get(r.end..at).is_some_and(|between| {
                    let rest = between.trim_start();
                    rest.get(..6)
                        .is_some_and(|w| w.eq_ignore_ascii_case("values"))
                        && rest[6..].trim().trim_start_matches('(').trim().is_empty()
                })
            })
            .map(|(_, system)| *system)
    });
    if let Some(second) = values.rows.get(1).and_then(|r| r.first()) {
        let at = cx.range(second);
        cx.error(
            at,
            "syntax error at or near \",\"",
            Some("MERGE's INSERT takes one row of VALUES".into()),
        );
        return;
    }
    for row in &values.rows {
        if row.len() > cols.len() {
            let r = cx.range(&row[cols.len()]);
            cx.error(
                r,
                "INSERT has more expressions than target columns",
                Some("remove the extra values or name more columns".into()),
            );
        }
        for (e, c) in row.iter().zip(&cols) {
            let refused = refused_in_insert(cx, c, overriding);
            if !is_default(e)
                && let Some(what) = refused
            {
                let range = cx.range(e);
                refuse_computed(cx, &c.name, what, range, true);
            } else if !is_default(e) {
                let what = format!("column \"{}\"", c.name);
                expect(cx, sc, e, &c.ty, Fit::Assign, &what);
            }
        }
    }
}
