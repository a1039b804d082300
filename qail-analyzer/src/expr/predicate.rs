//! Predicates: IS [NOT] NULL, IS [NOT] TRUE/FALSE, IS [NOT] DISTINCT FROM, IN (list or
//! subquery), ANY/ALL, BETWEEN, LIKE/ILIKE/SIMILAR TO, and row comparisons.

use std::ops::Range;

use sqlparser::ast::{
    BinaryOperator, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Query,
};

use crate::ctx::Ctx;
use crate::expr::operator::apply;
use crate::expr::{Ty, Typed, expr, operator, settle, subquery};
use crate::query::select;
use crate::scope::Scope;
use crate::types::{array_of, builtin, display, element_of};

pub(crate) fn between(
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
    if ls.len() != rs.len() || !operator::is_comparison(op) {
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

/// After `a` was used once, a parameter in it has a type; re-read it for the next use.
fn rebind(cx: &mut Ctx, mut a: Typed) -> Typed {
    if let (Some(n), Ty::Param(_)) = (a.param, &a.ty)
        && let Some(Some(t)) = cx.params.get(n - 1).map(|s| s.ty.clone())
    {
        a.ty = Ty::Known(t);
    }
    a
}

pub(crate) fn non_null_bool(inner: &Typed, range: Range<usize>) -> Typed {
    if inner.is_error() {
        Typed::error(range)
    } else {
        Typed::known(builtin("bool"), range)
    }
}

pub(crate) fn null_test(cx: &mut Ctx, sc: &Scope, x: &Expr, range: Range<usize>) -> Typed {
    let t = expr(cx, sc, x);
    let after = t.range.end;
    let json = cx.json_predicates.iter().find(|p| {
        p.start >= after
            && cx.sql[after..p.start]
                .chars()
                .all(|c| c.is_whitespace() || c == ')')
    });
    if let Some(json) = json.cloned() {
        return json_test(cx, t, json);
    }
    if let Some(n) = param_in(x) {
        cx.param_nullable(n);
    }
    non_null_bool(&t, range)
}

/// `x IS [NOT] JSON …` (PostgreSQL 16): a boolean, NULL for a NULL operand, over text,
/// json, jsonb or bytea (an untyped operand is text).
fn json_test(cx: &mut Ctx, mut t: Typed, predicate: Range<usize>) -> Typed {
    let range = t.range.start..predicate.end;
    let have = qail_catalog::Versions::span(16, qail_catalog::NEWEST);
    if !have.covers(cx.target) {
        let (message, hint) = crate::diag::version_gap("IS JSON", have, cx.target);
        cx.error(predicate, message, Some(hint));
        return Typed::error(range);
    }
    settle(cx, &mut t, &builtin("text"));
    if let Some(ty) = t.arg() {
        let ok = ty.array_dims == 0
            && ty.schema == "pg_catalog"
            && matches!(
                ty.name.as_str(),
                "text" | "varchar" | "bpchar" | "json" | "jsonb" | "bytea"
            );
        if !ok {
            let message = format!("cannot use type {} in IS JSON predicate", display(ty));
            cx.error(
                t.range.clone(),
                message,
                Some("cast the operand to text or jsonb".into()),
            );
            return Typed::error(range);
        }
    }
    if t.is_error() {
        return Typed::error(range);
    }
    let mut out = Typed::known(builtin("bool"), range);
    out.absorb(&t);
    out
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

/// `a IS [NOT] DISTINCT FROM b AND c` as PostgreSQL reads it, `(a IS DISTINCT FROM b) AND c`,
/// when the parser gave `a IS DISTINCT FROM (b AND c)`: it reads the right side as a whole
/// expression, though IS binds tighter than AND, OR and XOR. `None` when `e` needs no change
/// (an explicitly parenthesized right side is an `Expr::Nested` and is kept).
pub(crate) fn reassociate_distinct(e: &Expr) -> Option<Expr> {
    let (a, b, not) = match e {
        Expr::IsDistinctFrom(a, b) => (a, b, false),
        Expr::IsNotDistinctFrom(a, b) => (a, b, true),
        _ => return None,
    };
    fn loose(op: &BinaryOperator) -> bool {
        matches!(
            op,
            BinaryOperator::And | BinaryOperator::Or | BinaryOperator::Xor
        )
    }
    // The leftmost operand of the AND/OR chain is the comparison's right side.
    fn graft(rhs: &Expr, make: &dyn Fn(Expr) -> Expr) -> Expr {
        match rhs {
            Expr::BinaryOp { left, op, right } if loose(op) => Expr::BinaryOp {
                left: Box::new(graft(left, make)),
                op: op.clone(),
                right: right.clone(),
            },
            other => make(other.clone()),
        }
    }
    if !matches!(&**b, Expr::BinaryOp { op, .. } if loose(op)) {
        return None;
    }
    let make = |rhs: Expr| {
        if not {
            Expr::IsNotDistinctFrom(a.clone(), Box::new(rhs))
        } else {
            Expr::IsDistinctFrom(a.clone(), Box::new(rhs))
        }
    };
    Some(graft(b, &make))
}

pub(crate) fn distinct(cx: &mut Ctx, sc: &Scope, a: &Expr, b: &Expr, range: Range<usize>) -> Typed {
    let ta = expr(cx, sc, a);
    let tb = expr(cx, sc, b);
    for n in [param_in(a), param_in(b)].into_iter().flatten() {
        cx.param_nullable(n);
    }
    let eq = apply(cx, "=", ta, tb, range.clone());
    non_null_bool(&eq, range)
}

pub(crate) fn in_list(
    cx: &mut Ctx,
    sc: &Scope,
    x: &Expr,
    list: &[Expr],
    range: Range<usize>,
) -> Typed {
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

pub(crate) fn in_subquery(
    cx: &mut Ctx,
    sc: &Scope,
    x: &Expr,
    q: &Query,
    range: Range<usize>,
) -> Typed {
    if let Expr::Tuple(items) = x {
        return row_in_subquery(cx, sc, items, q, range);
    }
    let a = expr(cx, sc, x);
    let Some(col) = subquery::single_column(cx, sc, q, range.clone()) else {
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

pub(crate) fn any_op(
    cx: &mut Ctx,
    sc: &Scope,
    l: &Expr,
    op: &str,
    r: &Expr,
    range: Range<usize>,
) -> Typed {
    let mut a = expr(cx, sc, l);
    if let Expr::Subquery(q) = r {
        let Some(col) = subquery::single_column(cx, sc, q, range.clone()) else {
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
        Ty::Unknown | Ty::Param(_) => match operator::resolve_binary(op, a.arg(), None, cx.snap) {
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

pub(crate) fn like(
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
    // Note: the parser reads `LIKE ALL (array)` as a call of a function `all`; it is typed
    // like `LIKE ANY (array)`.
    if let Expr::Function(f) = pat
        && f.name.to_string().eq_ignore_ascii_case("all")
        && let FunctionArguments::List(list) = &f.args
        && let [FunctionArg::Unnamed(FunctionArgExpr::Expr(array))] = list.args.as_slice()
    {
        return any_op(cx, sc, x, op, array, range);
    }
    let a = expr(cx, sc, x);
    let b = expr(cx, sc, pat);
    apply(cx, op, a, b, range)
}
