//! Special expression forms: predicates (IS NULL, IN, ANY, BETWEEN, LIKE), casts, subqueries,
//! and the SQL-syntax functions (EXTRACT, SUBSTRING, TRIM…).

use std::ops::Range;

use sqlparser::ast::{AccessExpr, BinaryOperator, Expr, Query, Subscript};

use super::calls;
use super::ctx::Ctx;
use super::datatype;
use super::expr::{Fit, Ty, Typed, apply, conform, expect, expr, settle};
use super::scope::Scope;
use super::select;
use super::ops;
use super::types::{array_of, builtin, display, element_of, scalar_name};
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
        Expr::InSubquery { expr: x, subquery, .. } => in_subquery(cx, sc, x, subquery, range),
        Expr::AnyOp { left, compare_op, right, .. } | Expr::AllOp { left, compare_op, right } => {
            any_op(cx, sc, left, compare_op, right, range)
        }
        Expr::Between { expr: x, low, high, .. } => {
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
        Expr::Like { expr: x, pattern, .. } => like(cx, sc, x, pattern, "~~", range),
        Expr::ILike { expr: x, pattern, .. } => like(cx, sc, x, pattern, "~~*", range),
        Expr::SimilarTo { expr: x, pattern, .. } => like(cx, sc, x, pattern, "~", range),
        Expr::Cast { expr: x, data_type, .. } => cast(cx, sc, x, data_type, range),
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
            let mut t = if ok { Typed::known(builtin("bool"), range.clone()) } else { Typed::error(range) };
            t.name = Some("exists".into());
            t
        }
        Expr::Subquery(q) => scalar_subquery(cx, sc, q, range),
        Expr::Function(_) | Expr::Case { .. } => calls::call(cx, sc, e, range),
        Expr::Extract { expr: x, .. } => syntax_fn_refs(cx, sc, &[(x.as_ref(), None)], "numeric", "extract", range),
        Expr::Ceil { expr: x, .. } => calls::by_name(cx, sc, "ceil", &[x], range),
        Expr::Floor { expr: x, .. } => calls::by_name(cx, sc, "floor", &[x], range),
        Expr::Substring { expr: x, substring_from, substring_for, .. } => {
            let int4 = builtin("int4");
            let mut args = vec![(x.as_ref(), Some(builtin("text")))];
            args.extend(substring_from.iter().map(|f| (f.as_ref(), Some(int4.clone()))));
            args.extend(substring_for.iter().map(|f| (f.as_ref(), Some(int4.clone()))));
            syntax_fn_refs(cx, sc, &args, "text", "substring", range)
        }
        Expr::Position { expr: x, r#in } => {
            let text = Some(builtin("text"));
            syntax_fn_refs(cx, sc, &[(x.as_ref(), text.clone()), (r#in.as_ref(), text)], "int4", "position", range)
        }
        Expr::Trim { expr: x, trim_what, .. } => {
            let text = Some(builtin("text"));
            let mut args = vec![(x.as_ref(), text.clone())];
            args.extend(trim_what.iter().map(|w| (w.as_ref(), text.clone())));
            syntax_fn_refs(cx, sc, &args, "text", "btrim", range)
        }
        Expr::AtTimeZone { timestamp, time_zone } => at_time_zone(cx, sc, timestamp, time_zone, range),
        Expr::Array(arr) => calls::array(cx, sc, &arr.elem, range),
        Expr::CompoundFieldAccess { root, access_chain } => subscript(cx, sc, root, access_chain, range),
        Expr::Collate { expr: x, .. } => expr(cx, sc, x),
        _ => {
            cx.error(
                range.clone(),
                "this expression is not supported by the analyzer yet",
                Some("rewrite it with standard operators and functions, or add an explicit cast".into()),
            );
            Typed::error(range)
        }
    }
}

/// After `a` was used once, a parameter in it has a type; re-read it for the next use.
fn rebind(cx: &mut Ctx, mut a: Typed) -> Typed {
    if let (Some(n), Ty::Param(_)) = (a.param, &a.ty) {
        if let Some(Some(t)) = cx.params.get(n - 1).map(|s| s.ty.clone()) {
            a.ty = Ty::Known(t);
        }
    }
    a
}

fn non_null_bool(inner: &Typed, range: Range<usize>) -> Typed {
    if inner.is_error() { Typed::error(range) } else { Typed::known(builtin("bool"), range) }
}

fn null_test(cx: &mut Ctx, sc: &Scope, x: &Expr, range: Range<usize>) -> Typed {
    let t = expr(cx, sc, x);
    if let Some(n) = t.param {
        cx.param_nullable(n);
    }
    non_null_bool(&t, range)
}

fn distinct(cx: &mut Ctx, sc: &Scope, a: &Expr, b: &Expr, range: Range<usize>) -> Typed {
    let ta = expr(cx, sc, a);
    let tb = expr(cx, sc, b);
    for n in [ta.param, tb.param].into_iter().flatten() {
        cx.param_nullable(n);
    }
    let eq = apply(cx, "=", ta, tb, range.clone());
    non_null_bool(&eq, range)
}

fn in_list(cx: &mut Ctx, sc: &Scope, x: &Expr, list: &[Expr], range: Range<usize>) -> Typed {
    let mut a = expr(cx, sc, x);
    let mut out = Typed::known(builtin("bool"), range.clone());
    let items: Vec<Typed> = list.iter().map(|e| expr(cx, sc, e)).collect();
    if a.ty == Ty::Unknown || matches!(a.ty, Ty::Param(_)) {
        if let Some(t) = items.iter().find_map(|i| i.arg().cloned()) {
            settle(cx, &mut a, &t);
        }
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
    let a = expr(cx, sc, x);
    let Some(col) = single_column(cx, sc, q, range.clone()) else { return Typed::error(range) };
    let eq = apply(cx, "=", a, col, range.clone());
    non_null_if(eq, range)
}

fn non_null_if(inner: Typed, range: Range<usize>) -> Typed {
    if inner.is_error() {
        return Typed::error(range);
    }
    let mut t = Typed::known(builtin("bool"), range);
    t.absorb(&inner);
    t
}

fn any_op(cx: &mut Ctx, sc: &Scope, l: &Expr, op: &BinaryOperator, r: &Expr, range: Range<usize>) -> Typed {
    let mut a = expr(cx, sc, l);
    let op = op.to_string();
    if let Expr::Subquery(q) = r {
        let Some(col) = single_column(cx, sc, q, range.clone()) else { return Typed::error(range) };
        return non_null_if(apply(cx, &op, a, col, range.clone()), range);
    }
    let mut arr = expr(cx, sc, r);
    match &arr.ty {
        Ty::Error => Typed::error(range),
        Ty::Known(t) => match element_of(t) {
            Some(e) => {
                let elem = Typed::known(e, arr.range.clone());
                let mut res = apply(cx, &op, a, elem, range.clone());
                res.absorb(&arr);
                non_null_if(res, range)
            }
            None => {
                let msg = format!("op ANY/ALL (array) requires an array on the right, not {}", display(t));
                cx.error(arr.range.clone(), msg, Some("pass an array, e.g. = ANY($1) with a slice".into()));
                Typed::error(range)
            }
        },
        Ty::Unknown | Ty::Param(_) => match ops::binary(&op, a.arg(), None, cx.snap) {
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

fn like(cx: &mut Ctx, sc: &Scope, x: &Expr, pat: &Expr, op: &str, range: Range<usize>) -> Typed {
    let a = expr(cx, sc, x);
    let b = expr(cx, sc, pat);
    apply(cx, op, a, b, range)
}

fn cast(cx: &mut Ctx, sc: &Scope, x: &Expr, dt: &sqlparser::ast::DataType, range: Range<usize>) -> Typed {
    let mut inner = expr(cx, sc, x);
    let Some(target) = datatype::resolve(cx, dt) else { return Typed::error(range) };
    if inner.is_error() {
        return Typed::error(range);
    }
    settle(cx, &mut inner, &target);
    let mut t = Typed::known(target.clone(), range);
    t.absorb(&inner);
    t.name = inner.name.or(Some(target.name));
    t
}

fn scalar_subquery(cx: &mut Ctx, sc: &Scope, q: &Query, range: Range<usize>) -> Typed {
    let Some(mut col) = single_column(cx, sc, q, range.clone()) else { return Typed::error(range) };
    col.range = range;
    col.source = None;
    col.nullable = true;
    col.why.push("a scalar subquery is NULL when it returns no row".into());
    col
}

fn single_column(cx: &mut Ctx, sc: &Scope, q: &Query, range: Range<usize>) -> Option<Typed> {
    let cols = select::subquery(cx, q, sc)?;
    if cols.len() != 1 {
        cx.error(range, "subquery must return only one column", Some("select exactly one column".into()));
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

/// A function written with SQL syntax: arguments conform to the given types.
fn syntax_fn_refs(
    cx: &mut Ctx,
    sc: &Scope,
    args: &[(&Expr, Option<TypeRef>)],
    ret: &str,
    name: &str,
    range: Range<usize>,
) -> Typed {
    let mut out = Typed::known(builtin(ret), range.clone());
    out.name = Some(name.into());
    for (e, want) in args {
        let t = match want {
            Some(w) => expect(cx, sc, e, w, Fit::Implicit, &format!("argument of {name}")),
            None => expr(cx, sc, e),
        };
        if t.is_error() {
            return Typed::error(range);
        }
        out.absorb(&t);
    }
    out
}

fn at_time_zone(cx: &mut Ctx, sc: &Scope, ts: &Expr, tz: &Expr, range: Range<usize>) -> Typed {
    let mut a = expr(cx, sc, ts);
    let zone = expect(cx, sc, tz, &builtin("text"), Fit::Implicit, "time zone");
    let result = match a.arg().and_then(scalar_name) {
        Some("timestamptz") => "timestamp",
        Some("timestamp" | "date") => "timestamptz",
        Some("timetz" | "time") => "timetz",
        _ if a.is_error() || zone.is_error() => return Typed::error(range),
        _ => {
            conform(cx, &mut a, &builtin("timestamptz"), Fit::Implicit, "AT TIME ZONE operand");
            "timestamp"
        }
    };
    let mut t = Typed::known(builtin(result), range);
    t.name = Some("timezone".into());
    t.absorb(&a);
    t.absorb(&zone);
    t
}

fn subscript(cx: &mut Ctx, sc: &Scope, root: &Expr, chain: &[AccessExpr], range: Range<usize>) -> Typed {
    let base = expr(cx, sc, root);
    let mut ty = match base.arg() {
        Some(t) => t.clone(),
        None => return Typed::error(range),
    };
    for access in chain {
        match access {
            AccessExpr::Subscript(Subscript::Index { index }) => {
                expect(cx, sc, index, &builtin("int4"), Fit::Implicit, "array subscript");
                match element_of(&ty) {
                    Some(e) => ty = TypeRef { array_dims: 0, ..e },
                    None => {
                        cx.error(range.clone(), format!("cannot subscript type {}", display(&ty)), Some("subscript an array column".into()));
                        return Typed::error(range);
                    }
                }
            }
            AccessExpr::Subscript(Subscript::Slice { .. }) => {}
            AccessExpr::Dot(_) => {
                cx.error(range.clone(), "field access is not supported by the analyzer yet", Some("select the column directly".into()));
                return Typed::error(range);
            }
        }
    }
    let mut t = Typed::known(ty, range);
    t.nullable = true;
    t.why = base.why;
    t.why.push("an array subscript is NULL when out of range".into());
    t.name = base.name;
    t
}

