//! Functions PostgreSQL writes with SQL syntax (EXTRACT, SUBSTRING, POSITION, TRIM, OVERLAY, AT TIME
//! ZONE, CEIL/FLOOR), ARRAY[…] and array subscripts.

use std::ops::Range;

use sqlparser::ast::{AccessExpr, Expr, Subscript};

use super::calls;
use super::ctx::Ctx;
use super::diag::did_you_mean;
use super::expr::{Fit, Typed, conform, expect, expr};
use super::scope::Scope;
use super::scope::norm;
use super::types::{builtin, display, element_of, scalar_name, user_kind};
use crate::snapshot::TypeRef;
use crate::snapshot::UserTypeKind;

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
            shorthand,
            ..
        } => {
            let int4 = Some(builtin("int4"));
            let mut args = vec![(x.as_ref(), Some(builtin("text")))];
            for bound in [substring_from, substring_for].into_iter().flatten() {
                args.push((bound.as_ref(), int4.clone()));
            }
            let name = if *shorthand { "substr" } else { "substring" };
            syntax_fn_refs(cx, sc, &args, "text", name, range)
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
        Expr::Overlay {
            expr: x,
            overlay_what,
            overlay_from,
            overlay_for,
        } => {
            let (text, int4) = (Some(builtin("text")), Some(builtin("int4")));
            let mut args = vec![
                (x.as_ref(), text.clone()),
                (overlay_what.as_ref(), text),
                (overlay_from.as_ref(), int4.clone()),
            ];
            args.extend(overlay_for.iter().map(|f| (f.as_ref(), int4.clone())));
            syntax_fn_refs(cx, sc, &args, "text", "overlay", range)
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
    let mut out = Typed::known(builtin("bool"), range.clone());
    out.absorb(&base);
    out.name = base.name;
    for access in chain {
        let next = match access {
            AccessExpr::Subscript(sub) => index(cx, sc, sub, &ty, &mut out),
            AccessExpr::Dot(field) => field_of(cx, field, &ty, &mut out),
        };
        match next {
            Some(t) => ty = t,
            None => return Typed::error(range),
        }
    }
    out.ty = super::expr::Ty::Known(ty);
    out
}

/// `a[i]` (an element, NULL when out of range) or `a[i:j]` (an array).
fn index(
    cx: &mut Ctx,
    sc: &Scope,
    sub: &Subscript,
    ty: &TypeRef,
    out: &mut Typed,
) -> Option<TypeRef> {
    let int4 = builtin("int4");
    let bounds: Vec<&Expr> = match sub {
        Subscript::Index { index } => vec![index],
        Subscript::Slice {
            lower_bound,
            upper_bound,
            stride,
        } => [lower_bound, upper_bound, stride]
            .into_iter()
            .flatten()
            .collect(),
    };
    for b in bounds {
        let t = expect(cx, sc, b, &int4, Fit::Implicit, "array subscript");
        if t.is_error() {
            return None;
        }
    }
    if ty.array_dims == 0 {
        cx.error(
            out.range.clone(),
            format!("cannot subscript type {}", display(ty)),
            Some("subscript an array column".into()),
        );
        return None;
    }
    out.nullable = true;
    if let Subscript::Slice { .. } = sub {
        out.why
            .push("an array slice is NULL when the array is".into());
        return Some(ty.clone());
    }
    out.why
        .push("an array subscript is NULL when out of range".into());
    element_of(ty).map(|e| TypeRef { array_dims: 0, ..e })
}

/// `(composite).field`.
fn field_of(cx: &mut Ctx, field: &Expr, ty: &TypeRef, out: &mut Typed) -> Option<TypeRef> {
    let name = match field {
        Expr::Identifier(id) => norm(id),
        _ => String::new(),
    };
    let fields = match user_kind(ty, cx.snap) {
        Some(UserTypeKind::Composite { fields }) if ty.array_dims == 0 => fields,
        _ => {
            cx.error(
                out.range.clone(),
                format!("type {} is not composite", display(ty)),
                Some("select a field of a composite column: (column).field".into()),
            );
            return None;
        }
    };
    match fields.iter().find(|f| f.name == name) {
        Some(f) => {
            out.nullable = true;
            out.why
                .push(format!("field {name} of {} can be NULL", ty.name));
            out.name = Some(name);
            out.source = None;
            Some(f.ty.clone())
        }
        None => {
            let hint =
                did_you_mean(&name, fields.iter().map(|f| f.name.as_str())).unwrap_or_else(|| {
                    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
                    format!("{} has the fields {}", ty.name, names.join(", "))
                });
            cx.error(
                out.range.clone(),
                format!("column \"{name}\" not found in data type {}", ty.name),
                Some(hint),
            );
            None
        }
    }
}
