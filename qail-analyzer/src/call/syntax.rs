//! Functions PostgreSQL writes with SQL syntax: EXTRACT, SUBSTRING, POSITION, TRIM, OVERLAY,
//! AT TIME ZONE, CEIL/FLOOR.

use std::ops::Range;

use sqlparser::ast::{Expr, TrimWhereField};

use crate::call;
use crate::ctx::Ctx;
use crate::expr::{Fit, Ty, Typed, conform, expect, expr, unsupported};
use crate::scope::Scope;
use crate::types::{builtin, category, scalar_name};
use qail_schema::snapshot::TypeRef;

/// A function written with SQL syntax (`EXTRACT(… FROM x)`, `SUBSTRING(x FROM …)`, …).
pub(crate) fn form(cx: &mut Ctx, sc: &Scope, e: &Expr, range: Range<usize>) -> Typed {
    match e {
        Expr::Extract { expr: x, .. } => {
            syntax_fn_refs(cx, sc, &[(x.as_ref(), None)], "numeric", "extract", range)
        }
        Expr::Ceil { expr: x, .. } => call::by_name(cx, sc, "ceil", &[x], range),
        Expr::Floor { expr: x, .. } => call::by_name(cx, sc, "floor", &[x], range),
        Expr::Substring {
            expr: x,
            substring_from,
            substring_for,
            shorthand,
            ..
        } => {
            let name = if *shorthand { "substr" } else { "substring" };
            if binary(cx, sc, x) {
                let args: Vec<&Expr> = [Some(x.as_ref()), substring_from.as_deref()]
                    .into_iter()
                    .chain([substring_for.as_deref()])
                    .flatten()
                    .collect();
                return call::by_name(cx, sc, name, &args, range);
            }
            substring(
                cx,
                sc,
                x,
                substring_from.as_deref(),
                substring_for.as_deref(),
                name,
                range,
            )
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
            expr: x,
            trim_what: Some(what),
            trim_where,
            ..
        } if binary(cx, sc, x) => {
            let name = match trim_where {
                Some(TrimWhereField::Leading) => "ltrim",
                Some(TrimWhereField::Trailing) => "rtrim",
                _ => "btrim",
            };
            call::by_name(cx, sc, name, &[x, what], range)
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
        } if binary(cx, sc, x) => {
            let mut args = vec![x.as_ref(), overlay_what.as_ref(), overlay_from.as_ref()];
            args.extend(overlay_for.as_deref());
            call::by_name(cx, sc, "overlay", &args, range)
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
        _ => unsupported(cx, range),
    }
}

/// Whether `x` is a bytea or bit string: SUBSTRING, TRIM and OVERLAY over it call the
/// function's binary overload (`substring(bytea, int4)`, `btrim(bytea, bytea)`, …).
fn binary(cx: &mut Ctx, sc: &Scope, x: &Expr) -> bool {
    let t = expr(cx, sc, x);
    t.arg().is_some_and(|ty| {
        ty.array_dims == 0
            && ty.schema == "pg_catalog"
            && matches!(ty.name.as_str(), "bytea" | "bit" | "varbit")
    })
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

/// `SUBSTRING(x FROM start FOR count)` with integers, or the regular-expression forms
/// `SUBSTRING(x FROM pattern)` and `SUBSTRING(x FROM pattern FOR escape)` when the FROM
/// argument is a string (PostgreSQL prefers the string category for an untyped literal).
/// The pattern forms are NULL when the pattern does not match.
fn substring(
    cx: &mut Ctx,
    sc: &Scope,
    x: &Expr,
    from: Option<&Expr>,
    count: Option<&Expr>,
    name: &str,
    range: Range<usize>,
) -> Typed {
    let text = builtin("text");
    let mut out = Typed::known(text.clone(), range.clone());
    out.name = Some(name.into());
    let subject = expect(
        cx,
        sc,
        x,
        &text,
        Fit::Implicit,
        &format!("argument of {name}"),
    );
    if subject.is_error() {
        return Typed::error(range);
    }
    out.absorb(&subject);
    let mut pattern = false;
    for (i, bound) in [from, count].into_iter().flatten().enumerate() {
        let mut t = expr(cx, sc, bound);
        if i == 0 {
            pattern = match &t.ty {
                Ty::Unknown => t.literal.is_some(),
                Ty::Known(have) => category(have, cx.snap) == 'S',
                _ => false,
            };
        }
        let want = if pattern { &text } else { &builtin("int4") };
        conform(
            cx,
            &mut t,
            want,
            Fit::Implicit,
            &format!("argument of {name}"),
        );
        if t.is_error() {
            return Typed::error(range);
        }
        out.absorb(&t);
    }
    if pattern {
        out.nullable = true;
        out.why.push(format!(
            "{name}(… FROM pattern) is NULL when the pattern does not match"
        ));
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
