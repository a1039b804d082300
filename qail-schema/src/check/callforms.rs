//! Calls with typing rules of their own: ordered-set aggregates (`percentile_cont(0.5)
//! WITHIN GROUP (ORDER BY x)`, `percentile_disc`, `mode()`) and named arguments
//! (`make_interval(days => 3)`).

use std::ops::Range;

use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgOperator, FunctionArguments,
};

use super::ctx::Ctx;
use super::expr::{Fit, Ty, Typed, conform, expect, expr};
use super::scope::{Scope, norm};
use super::types::{array_of, builtin, scalar_name, user_kind};
use crate::snapshot::{TypeRef, UserTypeKind};

/// An ordered-set aggregate: the direct argument is a fraction (or an array of them), the
/// aggregated value is the `WITHIN GROUP (ORDER BY …)` expression.
pub(crate) fn ordered_set(
    cx: &mut Ctx,
    sc: &Scope,
    f: &Function,
    name: &str,
    range: Range<usize>,
) -> Typed {
    let direct: Vec<&Expr> = match &f.args {
        FunctionArguments::List(list) => list
            .args
            .iter()
            .filter_map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let want = usize::from(name != "mode");
    let [sort] = f.within_group.as_slice() else {
        return misuse(cx, name, range);
    };
    if direct.len() != want {
        return misuse(cx, name, range);
    }
    let mut many = false;
    if let Some(frac) = direct.first() {
        let mut t = expr(cx, sc, frac);
        many = t.arg().is_some_and(|a| a.array_dims > 0);
        let target = builtin("float8");
        let target = if many { array_of(&target) } else { target };
        conform(cx, &mut t, &target, Fit::Implicit, "fraction");
        if t.is_error() {
            return Typed::error(range);
        }
    }
    let mut value = expr(cx, sc, &sort.expr);
    if value.ty == Ty::Unknown {
        conform(
            cx,
            &mut value,
            &builtin("text"),
            Fit::Implicit,
            "sort value",
        );
    }
    if name == "percentile_cont" && value.arg().and_then(scalar_name) != Some("interval") {
        conform(
            cx,
            &mut value,
            &builtin("float8"),
            Fit::Implicit,
            "sort value",
        );
    }
    let Ty::Known(ty) = value.ty else {
        return Typed::error(range);
    };
    let mut t = Typed::known(if many { array_of(&ty) } else { ty }, range);
    t.name = Some(name.to_string());
    t.nullable = true;
    t.why
        .push(format!("{name}() is NULL when there are no input rows"));
    t
}

fn misuse(cx: &mut Ctx, name: &str, range: Range<usize>) -> Typed {
    let example = if name == "mode" {
        "mode() WITHIN GROUP (ORDER BY x)".to_string()
    } else {
        format!("{name}(0.5) WITHIN GROUP (ORDER BY x)")
    };
    cx.error(
        range.clone(),
        format!("{name} is an ordered-set aggregate"),
        Some(format!("write it as {example}")),
    );
    Typed::error(range)
}

/// Parameters of `make_interval`, in order, with their types.
const MAKE_INTERVAL: &[(&str, &str)] = &[
    ("years", "int4"),
    ("months", "int4"),
    ("weeks", "int4"),
    ("days", "int4"),
    ("hours", "int4"),
    ("mins", "int4"),
    ("secs", "float8"),
];

/// Whether the call passes an argument by name.
pub(crate) fn has_named(f: &Function) -> bool {
    matches!(&f.args, FunctionArguments::List(list)
        if list.args.iter().any(|a| matches!(a, FunctionArg::Named { .. } | FunctionArg::ExprNamed { .. })))
}

/// `make_interval(days => 3, …)`: each named argument is typed by its parameter.
pub(crate) fn named_call(
    cx: &mut Ctx,
    sc: &Scope,
    f: &Function,
    name: &str,
    range: Range<usize>,
) -> Typed {
    let FunctionArguments::List(list) = &f.args else {
        return Typed::error(range);
    };
    if name != "make_interval" {
        cx.error(
            range.clone(),
            format!("named arguments of {name}() are not supported by the analyzer"),
            Some("pass the arguments by position".into()),
        );
        return Typed::error(range);
    }
    let mut out = Typed::known(builtin("interval"), range.clone());
    out.name = Some(name.to_string());
    for (i, a) in list.args.iter().enumerate() {
        let (param, e) = match a {
            FunctionArg::Named {
                name: n,
                arg: FunctionArgExpr::Expr(e),
                operator: FunctionArgOperator::RightArrow | FunctionArgOperator::Assignment,
            } => (norm(n), e),
            FunctionArg::ExprNamed {
                name: Expr::Identifier(n),
                arg: FunctionArgExpr::Expr(e),
                ..
            } => (norm(n), e),
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => match MAKE_INTERVAL.get(i) {
                Some((p, _)) => (p.to_string(), e),
                None => return too_many(cx, range),
            },
            _ => {
                cx.error(
                    range.clone(),
                    "this argument form is not supported by the analyzer",
                    Some("write name => value, or pass the arguments by position".into()),
                );
                return Typed::error(range);
            }
        };
        let Some((_, ty)) = MAKE_INTERVAL.iter().find(|(p, _)| *p == param) else {
            let names: Vec<&str> = MAKE_INTERVAL.iter().map(|(p, _)| *p).collect();
            cx.error(
                range.clone(),
                format!("make_interval() has no parameter named \"{param}\""),
                Some(format!("use one of: {}", names.join(", "))),
            );
            return Typed::error(range);
        };
        let t = expect(cx, sc, e, &builtin(ty), Fit::Implicit, &param);
        if t.is_error() {
            return Typed::error(range);
        }
        out.absorb(&t);
    }
    out
}

fn too_many(cx: &mut Ctx, range: Range<usize>) -> Typed {
    cx.error(
        range.clone(),
        format!(
            "make_interval() takes at most {} arguments",
            MAKE_INTERVAL.len()
        ),
        Some("pass years, months, weeks, days, hours, mins, secs".into()),
    );
    Typed::error(range)
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
    for item in items {
        let mut t = expr(cx, sc, item);
        if matches!(t.ty, Ty::Unknown) {
            conform(cx, &mut t, &builtin("text"), Fit::Implicit, "row field");
        }
        if t.is_error() || matches!(t.ty, Ty::Param(_)) {
            return Some(Typed::error(range));
        }
    }
    Some(out)
}
