//! Casts (`x::t`, `CAST(x AS t)`, array casts) and typed literals (`DATE '…'`,
//! `INTERVAL '…'`). A built-in cast that not every targeted version has is refused with the
//! version named.

use std::ops::Range;

use sqlparser::ast::{DataType, Expr};

use crate::ctx::Ctx;
use crate::diag::version_gap;
use crate::expr::{Typed, expr, settle};
use crate::scope::Scope;
use crate::types::{builtin, castable, display, element_of, scalar_name, written};
use qail_schema::snapshot::TypeRef;

pub(crate) fn cast(
    cx: &mut Ctx,
    sc: &Scope,
    x: &Expr,
    dt: &sqlparser::ast::DataType,
    range: Range<usize>,
) -> Typed {
    let Some(target) = written::resolve(cx, dt) else {
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
    if let Some(from) = inner.arg()
        && let (Some(f), Some(t)) = (scalar_name(from), scalar_name(&target))
        && let Some(row) = qail_catalog::cast(f, t)
        && !row.versions.covers(cx.target)
    {
        // Note: like a function, a built-in cast exists in the versions pg_cast has it
        // (bytea to and from the integers from PostgreSQL 18).
        let what = format!("the cast from {} to {}", display(from), display(&target));
        let (message, hint) = version_gap(&what, row.versions, cx.target);
        cx.error(range.clone(), message, Some(hint));
        return Typed::error(range);
    }
    settle(cx, &mut inner, &target);
    let mut t = Typed::known(target.clone(), range);
    t.absorb(&inner);
    // Note: PostgreSQL names a cast after what it casts when that has a name of its own (a
    // column, a function, through any number of casts: `tableoid::regclass::text` is
    // `tableoid`), else after the type (a literal, `1::int4::text` is `text`).
    t.name = if weakly_named(x) {
        Some(target.name)
    } else {
        inner.name.or(Some(target.name))
    };
    t
}

/// Whether the name PostgreSQL derives for `e` yields to a cast's type name: literals and
/// casts of them.
fn weakly_named(e: &Expr) -> bool {
    match e {
        Expr::Cast { expr, .. } | Expr::Nested(expr) => weakly_named(expr),
        Expr::Value(_) | Expr::TypedString { .. } | Expr::Interval(_) => true,
        _ => false,
    }
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

/// A typed literal: `DATE '2024-01-01'`, `uuid '…'`.
pub(crate) fn typed_string(cx: &mut Ctx, data_type: &DataType, range: Range<usize>) -> Typed {
    match written::resolve(cx, data_type) {
        Some(t) => {
            let mut typed = Typed::known(t.clone(), range);
            typed.name = Some(t.name);
            typed
        }
        None => Typed::error(range),
    }
}

/// An interval literal: `INTERVAL '1 day'`.
pub(crate) fn interval(range: Range<usize>) -> Typed {
    let mut t = Typed::known(builtin("interval"), range);
    t.name = Some("interval".into());
    t
}
