//! Array and row constructors: `ARRAY[…]`, `ROW(a, b)` / `(a, b)`, and a row assigned to a
//! composite column.

use std::ops::Range;

use sqlparser::ast::{Expr, FunctionArg, FunctionArgExpr, FunctionArguments};

use crate::ctx::Ctx;
use crate::expr::conditional::unify;
use crate::expr::{Fit, Ty, Typed, conform, expect, expr, record};
use crate::scope::Scope;
use crate::types::{array_of, builtin, user_kind};
use qail_schema::snapshot::{TypeRef, UserTypeKind};

/// `ARRAY[…]`.
pub(crate) fn array(cx: &mut Ctx, sc: &Scope, elems: &[Expr], range: Range<usize>) -> Typed {
    let parts: Vec<Typed> = elems.iter().map(|e| expr(cx, sc, e)).collect();
    if parts.is_empty()
        || (parts.iter().any(|p| matches!(p.ty, Ty::Param(_)))
            && parts.iter().all(|p| p.arg().is_none()))
    {
        cx.error(
            range.clone(),
            "cannot determine the type of an empty or untyped array",
            Some("add a cast, e.g. ARRAY[]::text[]".into()),
        );
        return Typed::error(range);
    }
    let elem = unify(cx, parts, "ARRAY", range.clone(), |_| false);
    match elem.ty {
        Ty::Known(t) => {
            let mut out = Typed::known(array_of(&t), range);
            out.name = Some("array".into());
            out
        }
        _ => Typed::error(range),
    }
}

/// The fields of a row constructor `ROW(a, b)` / `(a, b)`, if `e` is one.
fn row_fields(e: &Expr) -> Option<Vec<&Expr>> {
    match e {
        Expr::Tuple(items) => Some(items.iter().collect()),
        Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("row") => match &f.args {
            FunctionArguments::List(list) => list
                .args
                .iter()
                .map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                    _ => None,
                })
                .collect(),
            FunctionArguments::None => Some(Vec::new()),
            FunctionArguments::Subquery(_) => None,
        },
        Expr::Nested(inner) => row_fields(inner),
        _ => None,
    }
}

/// A row constructor assigned to a composite column: each field is assigned to the
/// composite's field type. `None` when `e` is not a row constructor or `target` not composite.
pub(crate) fn row_into(cx: &mut Ctx, sc: &Scope, e: &Expr, target: &TypeRef) -> Option<Typed> {
    let items = row_fields(e)?;
    let Some(UserTypeKind::Composite { fields }) = user_kind(target, cx.snap) else {
        return None;
    };
    let range = cx.range(e);
    if target.array_dims > 0 || items.len() != fields.len() {
        cx.error(
            range.clone(),
            format!(
                "{} has {} fields but the row has {}",
                target.name,
                fields.len(),
                items.len()
            ),
            Some("give one value per field".into()),
        );
        return Some(Typed::error(range));
    }
    let mut out = Typed::known(target.clone(), range);
    for (item, field) in items.into_iter().zip(fields.clone()) {
        let t = expect(
            cx,
            sc,
            item,
            &field.ty,
            Fit::Assign,
            &format!("field \"{}\"", field.name),
        );
        if t.is_error() {
            out.ty = Ty::Error;
        }
    }
    Some(out)
}

/// `ROW(a, b)` outside an assignment: an anonymous record.
pub(crate) fn row(cx: &mut Ctx, sc: &Scope, e: &Expr, range: Range<usize>) -> Option<Typed> {
    let items = row_fields(e)?;
    let mut out = Typed::known(builtin("record"), range.clone());
    out.name = Some("row".into());
    let mut typed = Vec::with_capacity(items.len());
    for item in &items {
        let mut t = expr(cx, sc, item);
        if matches!(t.ty, Ty::Unknown) {
            conform(cx, &mut t, &builtin("text"), Fit::Implicit, "row field");
        }
        if t.is_error() || matches!(t.ty, Ty::Param(_)) {
            return Some(Typed::error(range));
        }
        typed.push(t);
    }
    out.shape = Some(record::row(&items, &typed, cx.snap));
    Some(out)
}
