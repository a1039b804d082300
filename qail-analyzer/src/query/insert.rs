//! INSERT: target columns, VALUES rows (DEFAULT), INSERT … SELECT, ON CONFLICT, RETURNING.

use sqlparser::ast::{
    ConflictTarget, Expr, Ident, Insert, OnConflict, OnConflictAction, OnInsert, Query, SelectItem,
    SetExpr, TableObject, Value,
};

use crate::StatementKind;
use crate::ctx::{Ctx, Shape};
use crate::expr::{Fit, Typed, condition, conform, constructor, expr};
use crate::query::assign::{
    is_default, no_such_column, refuse_computed, refused_in_insert, set_list,
};
use crate::query::{finish, from, scope_in, select};
use crate::scope::{Col, Rel, Scope, Star, norm};
use crate::types::{assignable, display, sql_name};

pub(crate) fn insert(cx: &mut Ctx, ins: &Insert, outer: Option<&Scope>) -> Option<Shape> {
    let TableObject::TableName(name) = &ins.table else {
        cx.error(
            cx.range(&ins.table),
            "INSERT INTO a function is not supported",
            Some("insert into a table".into()),
        );
        return None;
    };
    let mut target = from::table(cx, &Scope::default(), name, None)?;
    if let Some(alias) = &ins.table_alias {
        target.name = norm(alias);
        target.schema = None;
    }
    let targets = target_columns(cx, &target, &ins.columns)?;
    match &ins.source {
        Some(q) => {
            let between = cx.range(name).end..cx.range(q.as_ref()).start;
            let overriding = overriding(cx, between);
            source(cx, q, &targets, ins.columns.is_empty(), overriding, outer)?;
        }
        None if ins.columns.is_empty() => {}
        None => {
            cx.error(
                cx.range(name),
                "INSERT has target columns but no VALUES",
                Some("add VALUES (…) or a SELECT".into()),
            );
            return None;
        }
    }
    let mut sc = scope_in(outer);
    let n = target.cols.len();
    sc.rels.push(target.clone());
    sc.star = (0..n).map(|c| Star::Col(0, c)).collect();
    if let Some(OnInsert::OnConflict(oc)) = &ins.on {
        on_conflict(cx, &target, oc, outer);
    }
    Some(finish(
        cx,
        &mut sc,
        ins.returning.as_deref(),
        StatementKind::Insert,
    ))
}

/// ON CONFLICT (cols) DO NOTHING | DO UPDATE SET … [WHERE …], with EXCLUDED in scope.
fn on_conflict(cx: &mut Ctx, target: &Rel, oc: &OnConflict, outer: Option<&Scope>) {
    if let Some(ConflictTarget::Columns(cols)) = &oc.conflict_target {
        for c in cols {
            if !target.cols.iter().any(|t| t.name == norm(c)) {
                no_such_column(cx, target, c);
            }
        }
        // Note: the index predicate, `ON CONFLICT (cols) WHERE …`, which the pre-pass removed.
        if let Some(range) = cx.conflict_predicates.pop_front() {
            match cx.parse_aside(&range) {
                Ok(w) => {
                    let mut sc = scope_in(outer);
                    sc.rels.push(target.clone());
                    condition(cx, &sc, &w, "ON CONFLICT … WHERE");
                }
                Err(e) => cx.error(
                    range,
                    format!("ON CONFLICT … WHERE: {e}"),
                    Some("write a condition on the table's columns".into()),
                ),
            }
        }
    }
    if let OnConflictAction::DoUpdate(du) = &oc.action {
        let mut excluded = Rel::new(
            "excluded".into(),
            None,
            "EXCLUDED".into(),
            target.cols.clone(),
        );
        excluded.cols.iter_mut().for_each(|c| c.source = None);
        let mut up = scope_in(outer);
        up.rels.push(target.clone());
        up.rels.push(excluded);
        set_list(cx, &up, target, &du.assignments);
        if let Some(w) = &du.selection {
            condition(cx, &up, w, "WHERE");
        }
    }
}

/// The INSERT's `OVERRIDING SYSTEM VALUE` (`Some(true)`) or `OVERRIDING USER VALUE`
/// (`Some(false)`), which the pre-pass removed from `between` (the table's name to VALUES or
/// the query).
pub(crate) fn overriding(cx: &Ctx, between: std::ops::Range<usize>) -> Option<bool> {
    cx.overriding
        .iter()
        .find(|(r, _)| between.contains(&r.start))
        .map(|(_, system)| *system)
}

/// The target columns: the listed ones, else all of them in order.
fn target_columns(cx: &mut Ctx, target: &Rel, listed: &[Ident]) -> Option<Vec<Col>> {
    if listed.is_empty() {
        return Some(target.cols.clone());
    }
    let mut out = Vec::with_capacity(listed.len());
    for id in listed {
        crate::names::col_id(cx, id);
        match target.cols.iter().find(|c| c.name == norm(id)) {
            Some(c) => out.push(c.clone()),
            None => no_such_column(cx, target, id),
        }
    }
    (out.len() == listed.len()).then_some(out)
}

/// The VALUES rows or query of an INSERT. Without a column list (`implicit`), fewer values
/// than columns fill the leading columns and the rest take their defaults. `overriding` is
/// the INSERT's OVERRIDING clause ([`overriding`]).
fn source(
    cx: &mut Ctx,
    q: &Query,
    targets: &[Col],
    implicit: bool,
    overriding: Option<bool>,
    outer: Option<&Scope>,
) -> Option<()> {
    let empty = scope_in(outer);
    let SetExpr::Values(values) = q.body.as_ref() else {
        bare_params(cx, q, targets);
        let cols = select::query_raw(cx, q, outer)?;
        let targets = if implicit && cols.len() < targets.len() {
            &targets[..cols.len()]
        } else {
            targets
        };
        // Note: a query gives every target a value, so a computed target is refused.
        if let Some((col, what)) = targets
            .iter()
            .find_map(|c| refused_in_insert(cx, c, overriding).map(|w| (c, w)))
        {
            let range = cx.range(q);
            refuse_computed(cx, &col.name, what, range, true);
            return None;
        }
        return select_source(cx, q, &cols, targets);
    };
    for row in &values.rows {
        let targets = if implicit && row.len() < targets.len() {
            &targets[..row.len()]
        } else {
            targets
        };
        if row.len() != targets.len() {
            let more = if row.len() > targets.len() {
                "expressions than target columns"
            } else {
                "target columns than expressions"
            };
            let range = match (row.first(), row.last()) {
                (Some(f), Some(l)) => cx.range(f).start..cx.range(l).end,
                _ => cx.range(q),
            };
            let hint = format!("give {} values, one per target column", targets.len());
            cx.error(
                range,
                format!(
                    "INSERT has more {more} ({} vs {})",
                    row.len(),
                    targets.len()
                ),
                Some(hint),
            );
            continue;
        }
        // Note: PostgreSQL types the whole row first and coerces to the targets afterwards,
        // so `($1, $1::date)` fixes $1 by the cast before the first target is considered.
        let typed: Vec<Option<Typed>> = row
            .iter()
            .zip(targets)
            .map(|(e, col)| {
                (!is_default(e)).then(|| {
                    constructor::row_into(cx, &empty, e, &col.ty)
                        .unwrap_or_else(|| expr(cx, &empty, e))
                })
            })
            .collect();
        for (t, col) in typed.into_iter().zip(targets) {
            let Some(mut t) = t else { continue };
            if let Some(what) = refused_in_insert(cx, col, overriding) {
                refuse_computed(cx, &col.name, what, t.range.clone(), true);
                continue;
            }
            conform(
                cx,
                &mut t,
                &col.ty,
                Fit::Assign,
                &format!("column \"{}\"", col.name),
            );
            match (t.param, col.not_null) {
                (Some(n), false) => cx.param_nullable(n),
                (Some(n), true) => cx.param_fills(n, &col.name),
                (None, _) => {}
            }
        }
    }
    Some(())
}

/// `INSERT … SELECT $1, $2 …`: a bare parameter in the select list takes its target
/// column's type, as PostgreSQL coerces it there.
fn bare_params(cx: &mut Ctx, q: &Query, targets: &[Col]) {
    let SetExpr::Select(s) = q.body.as_ref() else {
        return;
    };
    for (item, col) in s.projection.iter().zip(targets) {
        let e = match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => e,
            _ => continue,
        };
        if let Expr::Value(v) = e
            && let Value::Placeholder(p) = &v.value
            && let Some(n) = p.strip_prefix('$').and_then(|d| d.parse::<usize>().ok())
            && n >= 1
        {
            let range = cx.range(e);
            if cx.param_use(n, range.clone()).is_none() {
                cx.bind_param(n, &col.ty, range);
            }
            if col.not_null {
                cx.param_fills(n, &col.name);
            } else {
                cx.param_nullable(n);
            }
        }
    }
}

fn select_source(
    cx: &mut Ctx,
    q: &Query,
    cols: &[crate::OutputColumn],
    targets: &[Col],
) -> Option<()> {
    if cols.len() != targets.len() {
        let hint = format!("select {} columns, one per target column", targets.len());
        cx.error(
            cx.range(q),
            format!(
                "INSERT has {} target columns but the query returns {}",
                targets.len(),
                cols.len()
            ),
            Some(hint),
        );
        return None;
    }
    for (c, t) in cols.iter().zip(targets) {
        if !select::is_unknown(&c.ty) && !assignable(&c.ty, &t.ty, cx.snap) {
            let msg = format!(
                "column \"{}\" is of type {} but expression is of type {}",
                t.name,
                display(&t.ty),
                display(&c.ty)
            );
            cx.error(
                cx.range(q),
                msg,
                Some(format!("add a cast: ::{}", sql_name(&t.ty))),
            );
        }
    }
    Some(())
}
