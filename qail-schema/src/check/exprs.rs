//! Special expression forms: predicates (IS NULL, IN, ANY, BETWEEN, LIKE), casts, subqueries,
//! and the SQL-syntax functions (EXTRACT, SUBSTRING, TRIM…).

use std::ops::Range;

use sqlparser::ast::{Expr, GroupByExpr, Query, SelectItem, SetExpr};

use super::calls;
use super::ctx::Ctx;
use super::datatype;
use super::expr::{Ty, Typed, apply, expr, settle};
use super::functions;
use super::group;
use super::ops;
use super::scope::Scope;
use super::scope::{norm, parts};
use super::select;
use super::sqlfuncs;
use super::types::{array_of, builtin, castable, display, element_of};
use crate::snapshot::TypeRef;

/// Everything `expr` does not handle itself.
pub(crate) fn special(cx: &mut Ctx, sc: &Scope, e: &Expr, range: Range<usize>) -> Typed {
    match e {
        Expr::IsNull(x) | Expr::IsNotNull(x) => null_test(cx, sc, x, range),
        Expr::IsTrue(x) | Expr::IsFalse(x) | Expr::IsNotTrue(x) | Expr::IsNotFalse(x) => {
            let t = super::expr::condition(cx, sc, x, "IS TRUE");
            non_null_bool(&t, range)
        }
        Expr::IsDistinctFrom(a, b) | Expr::IsNotDistinctFrom(a, b) => distinct(cx, sc, a, b, range),
        Expr::InList { expr: x, list, .. } => in_list(cx, sc, x, list, range),
        Expr::InSubquery {
            expr: x, subquery, ..
        } => in_subquery(cx, sc, x, subquery, range),
        Expr::AnyOp {
            left,
            compare_op,
            right,
            ..
        }
        | Expr::AllOp {
            left,
            compare_op,
            right,
        } => any_op(cx, sc, left, &compare_op.to_string(), right, range),
        Expr::Between {
            expr: x, low, high, ..
        } => between(cx, sc, x, low, high, range),
        Expr::Like {
            expr: x,
            pattern,
            any,
            ..
        } => like(cx, sc, x, pattern, "~~", *any, range),
        Expr::ILike {
            expr: x,
            pattern,
            any,
            ..
        } => like(cx, sc, x, pattern, "~~*", *any, range),
        Expr::SimilarTo {
            expr: x, pattern, ..
        } => like(cx, sc, x, pattern, "~", false, range),
        Expr::Cast {
            expr: x, data_type, ..
        } => cast(cx, sc, x, data_type, range),
        Expr::TypedString(ts) => match datatype::resolve(cx, &ts.data_type) {
            Some(t) => {
                let mut typed = Typed::known(t.clone(), range);
                typed.name = Some(t.name);
                typed
            }
            None => Typed::error(range),
        },
        Expr::Interval(_) => {
            let mut t = Typed::known(builtin("interval"), range);
            t.name = Some("interval".into());
            t
        }
        Expr::Exists { subquery, .. } => {
            let ok = select::subquery(cx, subquery, sc).is_some();
            let mut t = if ok {
                Typed::known(builtin("bool"), range.clone())
            } else {
                Typed::error(range)
            };
            t.name = Some("exists".into());
            t
        }
        Expr::Subquery(q) => scalar_subquery(cx, sc, q, range),
        Expr::Function(_) | Expr::Case { .. } => calls::call(cx, sc, e, range),
        Expr::Collate { expr: x, .. } => expr(cx, sc, x),
        _ => sqlfuncs::form(cx, sc, e, range),
    }
}

fn between(
    cx: &mut Ctx,
    sc: &Scope,
    x: &Expr,
    low: &Expr,
    high: &Expr,
    range: Range<usize>,
) -> Typed {
    let a = expr(cx, sc, x);
    let lo = expr(cx, sc, low);
    let ge = apply(cx, ">=", a.clone(), lo, range.clone());
    let a = rebind(cx, a);
    let hi = expr(cx, sc, high);
    let le = apply(cx, "<=", a, hi, range.clone());
    let mut t = Typed::known(builtin("bool"), range.clone());
    if ge.is_error() || le.is_error() {
        return Typed::error(range);
    }
    t.absorb(&ge);
    t.absorb(&le);
    t
}

/// `(a, b) op (c, d)`: pairwise operators, a boolean result.
pub(crate) fn row_compare(
    cx: &mut Ctx,
    sc: &Scope,
    ls: &[Expr],
    op: &str,
    rs: &[Expr],
    range: Range<usize>,
) -> Typed {
    if ls.len() != rs.len() || !super::ops::is_comparison(op) {
        let msg =
            format!("row comparison needs two rows of the same length and a comparison, not {op}");
        cx.error(
            range.clone(),
            msg,
            Some("compare rows of equal length with =, <>, <, <=, >, >=".into()),
        );
        return Typed::error(range);
    }
    let mut out = Typed::known(builtin("bool"), range.clone());
    for (l, r) in ls.iter().zip(rs) {
        let a = expr(cx, sc, l);
        let b = expr(cx, sc, r);
        let pair = apply(cx, op, a, b, range.clone());
        if pair.is_error() {
            return Typed::error(range);
        }
        out.absorb(&pair);
    }
    out
}

/// `ARRAY(SELECT …)`: an array of the subquery's single column, never NULL.
pub(crate) fn array_subquery(cx: &mut Ctx, sc: &Scope, q: &Query, range: Range<usize>) -> Typed {
    let Some(col) = single_column(cx, sc, q, range.clone()) else {
        return Typed::error(range);
    };
    match col.ty {
        Ty::Known(t) => {
            let mut out = Typed::known(array_of(&t), range);
            out.name = Some("array".into());
            out
        }
        _ => Typed::error(range),
    }
}

/// After `a` was used once, a parameter in it has a type; re-read it for the next use.
fn rebind(cx: &mut Ctx, mut a: Typed) -> Typed {
    if let (Some(n), Ty::Param(_)) = (a.param, &a.ty)
        && let Some(Some(t)) = cx.params.get(n - 1).map(|s| s.ty.clone())
    {
        a.ty = Ty::Known(t);
    }
    a
}

fn non_null_bool(inner: &Typed, range: Range<usize>) -> Typed {
    if inner.is_error() {
        Typed::error(range)
    } else {
        Typed::known(builtin("bool"), range)
    }
}

fn null_test(cx: &mut Ctx, sc: &Scope, x: &Expr, range: Range<usize>) -> Typed {
    let t = expr(cx, sc, x);
    if let Some(n) = param_in(x) {
        cx.param_nullable(n);
    }
    non_null_bool(&t, range)
}

/// `$n`, possibly parenthesized or cast: a place where a NULL argument is meaningful.
fn param_in(e: &Expr) -> Option<usize> {
    match e {
        Expr::Value(v) => match &v.value {
            sqlparser::ast::Value::Placeholder(p) => {
                p.strip_prefix('$')?.parse().ok().filter(|n| *n >= 1)
            }
            _ => None,
        },
        Expr::Nested(x) | Expr::Cast { expr: x, .. } => param_in(x),
        _ => None,
    }
}

fn distinct(cx: &mut Ctx, sc: &Scope, a: &Expr, b: &Expr, range: Range<usize>) -> Typed {
    let ta = expr(cx, sc, a);
    let tb = expr(cx, sc, b);
    for n in [param_in(a), param_in(b)].into_iter().flatten() {
        cx.param_nullable(n);
    }
    let eq = apply(cx, "=", ta, tb, range.clone());
    non_null_bool(&eq, range)
}

fn in_list(cx: &mut Ctx, sc: &Scope, x: &Expr, list: &[Expr], range: Range<usize>) -> Typed {
    let mut a = expr(cx, sc, x);
    let mut out = Typed::known(builtin("bool"), range.clone());
    let items: Vec<Typed> = list.iter().map(|e| expr(cx, sc, e)).collect();
    if (a.ty == Ty::Unknown || matches!(a.ty, Ty::Param(_)))
        && let Some(t) = items.iter().find_map(|i| i.arg().cloned())
    {
        settle(cx, &mut a, &t);
    }
    for item in items {
        a = rebind(cx, a);
        let r = item.range.clone();
        let eq = apply(cx, "=", a.clone(), item, r);
        if eq.is_error() {
            return Typed::error(range);
        }
        out.absorb(&eq);
    }
    out
}

fn in_subquery(cx: &mut Ctx, sc: &Scope, x: &Expr, q: &Query, range: Range<usize>) -> Typed {
    if let Expr::Tuple(items) = x {
        return row_in_subquery(cx, sc, items, q, range);
    }
    let a = expr(cx, sc, x);
    let Some(col) = single_column(cx, sc, q, range.clone()) else {
        return Typed::error(range);
    };
    let eq = apply(cx, "=", a, col, range.clone());
    non_null_if(eq, range)
}

/// `(a, b) IN (SELECT x, y …)`: pairwise equality with the subquery's columns.
fn row_in_subquery(
    cx: &mut Ctx,
    sc: &Scope,
    items: &[Expr],
    q: &Query,
    range: Range<usize>,
) -> Typed {
    let Some(cols) = select::subquery(cx, q, sc) else {
        return Typed::error(range);
    };
    if cols.len() != items.len() {
        let msg = format!(
            "the row has {} values but the subquery returns {} columns",
            items.len(),
            cols.len()
        );
        cx.error(
            range.clone(),
            msg,
            Some("select one column per row value".into()),
        );
        return Typed::error(range);
    }
    let mut out = Typed::known(builtin("bool"), range.clone());
    for (item, col) in items.iter().zip(cols) {
        let a = expr(cx, sc, item);
        let mut b = Typed::known(col.ty, range.clone());
        b.nullable = col.nullable;
        let eq = apply(cx, "=", a, b, range.clone());
        if eq.is_error() {
            return Typed::error(range);
        }
        out.absorb(&eq);
    }
    out
}

fn non_null_if(inner: Typed, range: Range<usize>) -> Typed {
    if inner.is_error() {
        return Typed::error(range);
    }
    let mut t = Typed::known(builtin("bool"), range);
    t.absorb(&inner);
    t
}

fn any_op(cx: &mut Ctx, sc: &Scope, l: &Expr, op: &str, r: &Expr, range: Range<usize>) -> Typed {
    let mut a = expr(cx, sc, l);
    if let Expr::Subquery(q) = r {
        let Some(col) = single_column(cx, sc, q, range.clone()) else {
            return Typed::error(range);
        };
        return non_null_if(apply(cx, op, a, col, range.clone()), range);
    }
    let mut arr = expr(cx, sc, r);
    match &arr.ty {
        Ty::Error => Typed::error(range),
        Ty::Known(t) => match element_of(t) {
            Some(e) => {
                let elem = Typed::known(e, arr.range.clone());
                let mut res = apply(cx, op, a, elem, range.clone());
                res.absorb(&arr);
                non_null_if(res, range)
            }
            None => {
                let msg = format!(
                    "op ANY/ALL (array) requires an array on the right, not {}",
                    display(t)
                );
                cx.error(
                    arr.range.clone(),
                    msg,
                    Some("pass an array, e.g. = ANY($1) with a slice".into()),
                );
                Typed::error(range)
            }
        },
        Ty::Unknown | Ty::Param(_) => match ops::binary(op, a.arg(), None, cx.snap) {
            Ok(sig) if !a.is_error() => {
                settle(cx, &mut a, &sig.left);
                settle(cx, &mut arr, &array_of(&sig.right));
                let mut res = Typed::known(builtin("bool"), range);
                res.absorb(&a);
                res.absorb(&arr);
                res
            }
            _ if a.is_error() => Typed::error(range),
            _ => {
                cx.error(
                    arr.range.clone(),
                    "could not determine the array type on the right of ANY",
                    Some("add a cast, e.g. ANY($1::int4[])".into()),
                );
                Typed::error(range)
            }
        },
    }
}

fn like(
    cx: &mut Ctx,
    sc: &Scope,
    x: &Expr,
    pat: &Expr,
    op: &str,
    any: bool,
    range: Range<usize>,
) -> Typed {
    if any {
        return any_op(cx, sc, x, op, pat, range);
    }
    let a = expr(cx, sc, x);
    let b = expr(cx, sc, pat);
    apply(cx, op, a, b, range)
}

fn cast(
    cx: &mut Ctx,
    sc: &Scope,
    x: &Expr,
    dt: &sqlparser::ast::DataType,
    range: Range<usize>,
) -> Typed {
    let Some(target) = datatype::resolve(cx, dt) else {
        return Typed::error(range);
    };
    if let (Expr::Array(arr), Some(elem)) = (x, element_of(&target)) {
        return array_cast(cx, sc, &arr.elem, &target, &elem, range);
    }
    let mut inner = expr(cx, sc, x);
    if inner.is_error() {
        return Typed::error(range);
    }
    if let Some(from) = inner.arg()
        && !castable(from, &target, cx.snap)
    {
        let msg = format!("cannot cast type {} to {}", display(from), display(&target));
        let hint = "PostgreSQL has no such cast; convert through text (x::text::T) only if the text form parses as T, or use a conversion function".to_string();
        cx.error(range.clone(), msg, Some(hint));
        return Typed::error(range);
    }
    settle(cx, &mut inner, &target);
    let mut t = Typed::known(target.clone(), range);
    t.absorb(&inner);
    // Note: PostgreSQL names a cast of a cast (or of a literal) after the outer type.
    t.name = match x {
        Expr::Cast { .. } => Some(target.name),
        _ => inner.name.or(Some(target.name)),
    };
    t
}

/// `ARRAY[…]::T[]`: PostgreSQL casts each element to T, so untyped elements take T.
fn array_cast(
    cx: &mut Ctx,
    sc: &Scope,
    elems: &[Expr],
    target: &TypeRef,
    elem: &TypeRef,
    range: Range<usize>,
) -> Typed {
    let mut out = Typed::known(target.clone(), range.clone());
    out.name = Some("array".into());
    for e in elems {
        let mut t = expr(cx, sc, e);
        match t.arg() {
            Some(from) if !castable(from, elem, cx.snap) => {
                let msg = format!("cannot cast type {} to {}", display(from), display(elem));
                cx.error(
                    t.range.clone(),
                    msg,
                    Some("cast the element explicitly".into()),
                );
                return Typed::error(range);
            }
            _ => settle(cx, &mut t, elem),
        }
        if t.is_error() {
            return Typed::error(range);
        }
    }
    out
}

fn scalar_subquery(cx: &mut Ctx, sc: &Scope, q: &Query, range: Range<usize>) -> Typed {
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
            .is_some_and(|n| functions::is_set_returning(&norm(n))),
        _ => false,
    });
    !srf && (items.iter().any(|e| group::has_aggregate(e))
        || (s.from.is_empty() && s.selection.is_none()))
}

fn single_column(cx: &mut Ctx, sc: &Scope, q: &Query, range: Range<usize>) -> Option<Typed> {
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
    Some(t)
}
