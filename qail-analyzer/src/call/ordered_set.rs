//! Ordered-set aggregates: `percentile_cont(0.5) WITHIN GROUP (ORDER BY x)`,
//! `percentile_disc`, `mode()`.

use std::ops::Range;

use sqlparser::ast::{Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments};

use crate::ctx::Ctx;
use crate::expr::{Fit, Ty, Typed, conform, expr};
use crate::scope::Scope;
use crate::types::{array_of, builtin, scalar_name};

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
