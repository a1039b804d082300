//! Functions PostgreSQL writes with SQL syntax (EXTRACT, SUBSTRING, POSITION, TRIM, AT TIME
//! ZONE, CEIL/FLOOR), ARRAY[…] and array subscripts.

use std::ops::Range;

use sqlparser::ast::{AccessExpr, Expr, Subscript};

use super::calls;
use super::ctx::Ctx;
use super::expr::{Fit, Typed, conform, expect, expr};
use super::scope::Scope;
use super::types::{builtin, display, element_of, scalar_name};
use crate::snapshot::TypeRef;

/// The forms `exprs::special` leaves over.
pub(crate) fn form(cx: &mut Ctx, sc: &Scope, e: &Expr, range: Range<usize>) -> Typed {
    match e {
        Expr::Extract { expr: x, .. } => {
            syntax_fn_refs(cx, sc, &[(x.as_ref(), None)], "numeric", "extract", range)
        }
        Expr::Ceil { expr: x, .. } => calls::by_name(cx, sc, "ceil", &[x], range),
        Expr::Floor { expr: x, .. } => calls::by_name(cx, sc, "floor", &[x], range),
        Expr::Substring {
            expr: x,
            substring_from,
            substring_for,
            ..
        } => {
            let int4 = builtin("int4");
            let mut args = vec![(x.as_ref(), Some(builtin("text")))];
            args.extend(
                substring_from
                    .iter()
                    .map(|f| (f.as_ref(), Some(int4.clone()))),
            );
            args.extend(
                substring_for
                    .iter()
                    .map(|f| (f.as_ref(), Some(int4.clone()))),
            );
            syntax_fn_refs(cx, sc, &args, "text", "substring", range)
        }
        Expr::Position { expr: x, r#in } => {
            let text = Some(builtin("text"));
            syntax_fn_refs(
                cx,
                sc,
                &[(x.as_ref(), text.clone()), (r#in.as_ref(), text)],
                "int4",
                "position",
                range,
            )
        }
        Expr::Trim {
            expr: x, trim_what, ..
        } => {
            let text = Some(builtin("text"));
            let mut args = vec![(x.as_ref(), text.clone())];
            args.extend(trim_what.iter().map(|w| (w.as_ref(), text.clone())));
            syntax_fn_refs(cx, sc, &args, "text", "btrim", range)
        }
        Expr::AtTimeZone {
            timestamp,
            time_zone,
        } => at_time_zone(cx, sc, timestamp, time_zone, range),
        Expr::Array(arr) => calls::array(cx, sc, &arr.elem, range),
        Expr::CompoundFieldAccess { root, access_chain } => {
            subscript(cx, sc, root, access_chain, range)
        }
        _ => {
            cx.error(
                range.clone(),
                "this expression is not supported by the analyzer yet",
                Some(
                    "rewrite it with standard operators and functions, or add an explicit cast"
                        .into(),
                ),
            );
            Typed::error(range)
        }
    }
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
            conform(
                cx,
                &mut a,
                &builtin("timestamptz"),
                Fit::Implicit,
                "AT TIME ZONE operand",
            );
            "timestamp"
        }
    };
    let mut t = Typed::known(builtin(result), range);
    t.name = Some("timezone".into());
    t.absorb(&a);
    t.absorb(&zone);
    t
}

fn subscript(
    cx: &mut Ctx,
    sc: &Scope,
    root: &Expr,
    chain: &[AccessExpr],
    range: Range<usize>,
) -> Typed {
    let base = expr(cx, sc, root);
    let mut ty = match base.arg() {
        Some(t) => t.clone(),
        None => return Typed::error(range),
    };
    for access in chain {
        match access {
            AccessExpr::Subscript(Subscript::Index { index }) => {
                expect(
                    cx,
                    sc,
                    index,
                    &builtin("int4"),
                    Fit::Implicit,
                    "array subscript",
                );
                match element_of(&ty) {
                    Some(e) => ty = TypeRef { array_dims: 0, ..e },
                    None => {
                        cx.error(
                            range.clone(),
                            format!("cannot subscript type {}", display(&ty)),
                            Some("subscript an array column".into()),
                        );
                        return Typed::error(range);
                    }
                }
            }
            AccessExpr::Subscript(Subscript::Slice { .. }) => {}
            AccessExpr::Dot(_) => {
                cx.error(
                    range.clone(),
                    "field access is not supported by the analyzer yet",
                    Some("select the column directly".into()),
                );
                return Typed::error(range);
            }
        }
    }
    let mut t = Typed::known(ty, range);
    t.nullable = true;
    t.why = base.why;
    t.why
        .push("an array subscript is NULL when out of range".into());
    t.name = base.name;
    t
}
