//! Calls with named arguments (`make_interval(days => 3)`).

use std::ops::Range;

use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgOperator, FunctionArguments,
};

use crate::check::ctx::Ctx;
use crate::check::expr::{Fit, Typed, expect};
use crate::check::scope::{Scope, norm};
use crate::check::types::builtin;

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
