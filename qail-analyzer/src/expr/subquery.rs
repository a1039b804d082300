//! Subqueries in expressions: scalar subqueries, EXISTS, `ARRAY(SELECT …)`, and the
//! single-column rule shared with IN and ANY.

use std::ops::Range;

use sqlparser::ast::{Expr, GroupByExpr, Query, SelectItem, SetExpr};

use crate::call::builtins;
use crate::ctx::Ctx;
use crate::expr::{Ty, Typed, record};
use crate::query::{group, select};
use crate::scope::{Scope, norm, parts};
use crate::types::{array_of, builtin};

/// `ARRAY(SELECT …)`: an array of the subquery's single column, never NULL.
pub(crate) fn array_subquery(cx: &mut Ctx, sc: &Scope, q: &Query, range: Range<usize>) -> Typed {
    let Some(col) = single_column(cx, sc, q, range.clone()) else {
        return Typed::error(range);
    };
    match &col.ty {
        Ty::Known(t) => {
            let mut out = Typed::known(array_of(t), range);
            out.name = Some("array".into());
            out.shape = record::array_of(&col);
            out
        }
        _ => Typed::error(range),
    }
}

pub(crate) fn scalar_subquery(cx: &mut Ctx, sc: &Scope, q: &Query, range: Range<usize>) -> Typed {
    let Some(mut col) = single_column(cx, sc, q, range.clone()) else {
        return Typed::error(range);
    };
    col.range = range;
    col.source = None;
    if !one_row(q) {
        col.nullable = true;
        col.why
            .push("a scalar subquery is NULL when it returns no row".into());
    }
    col
}

/// Whether a query returns exactly one row: an ungrouped aggregate, or a SELECT without FROM
/// and WHERE (and without LIMIT/OFFSET or set-returning functions).
fn one_row(q: &Query) -> bool {
    if q.limit_clause.is_some() || q.fetch.is_some() {
        return false;
    }
    let SetExpr::Select(s) = q.body.as_ref() else {
        return false;
    };
    let ungrouped = matches!(&s.group_by, GroupByExpr::Expressions(e, _) if e.is_empty());
    if !ungrouped || s.having.is_some() {
        return false;
    }
    let items: Vec<&Expr> = s
        .projection
        .iter()
        .filter_map(|i| match i {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => Some(e),
            _ => None,
        })
        .collect();
    let srf = items.iter().any(|e| match e {
        Expr::Function(f) => parts(&f.name)
            .last()
            .is_some_and(|n| builtins::is_set_returning(&norm(n))),
        _ => false,
    });
    !srf && (items.iter().any(|e| group::has_aggregate(e))
        || (s.from.is_empty() && s.selection.is_none()))
}

pub(crate) fn single_column(
    cx: &mut Ctx,
    sc: &Scope,
    q: &Query,
    range: Range<usize>,
) -> Option<Typed> {
    let cols = select::subquery(cx, q, sc)?;
    if cols.len() != 1 {
        cx.error(
            range,
            "subquery must return only one column",
            Some("select exactly one column".into()),
        );
        return None;
    }
    let c = cols.into_iter().next()?;
    let mut t = Typed::known(c.ty, cx.range(q));
    t.nullable = c.nullable;
    t.why = c.why;
    t.name = Some(c.name);
    t.source = c.source;
    t.shape = c.shape;
    Some(t)
}

/// `EXISTS (SELECT …)`: never NULL.
pub(crate) fn exists(cx: &mut Ctx, sc: &Scope, subquery: &Query, range: Range<usize>) -> Typed {
    let ok = select::subquery(cx, subquery, sc).is_some();
    let mut t = if ok {
        Typed::known(builtin("bool"), range.clone())
    } else {
        Typed::error(range)
    };
    t.name = Some("exists".into());
    t
}
