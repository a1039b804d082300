//! Calls with named arguments (`make_interval(days => 3)`).

use std::ops::Range;

use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgOperator, FunctionArguments,
};

use crate::ctx::Ctx;
use crate::expr::{Fit, Typed, expect};
use crate::scope::{Scope, norm};
use crate::types::builtin;

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
    schema: Option<&str>,
    name: &str,
    range: Range<usize>,
) -> Typed {
    let FunctionArguments::List(list) = &f.args else {
        return Typed::error(range);
    };
    if name != "make_interval" {
        super::session::user_call(cx);
        return user_named_call(cx, sc, &list.args, schema, name, range);
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

/// The name of a named argument and its value; `None` for a positional one.
fn split_arg(a: &FunctionArg) -> Option<(Option<String>, &Expr)> {
    match a {
        FunctionArg::Named {
            name,
            arg: FunctionArgExpr::Expr(e),
            operator: FunctionArgOperator::RightArrow | FunctionArgOperator::Assignment,
        } => Some((Some(norm(name)), e)),
        FunctionArg::ExprNamed {
            name: Expr::Identifier(n),
            arg: FunctionArgExpr::Expr(e),
            ..
        } => Some((Some(norm(n)), e)),
        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some((None, e)),
        _ => None,
    }
}

/// Which parameter each argument fills, when `f` takes this call: positional arguments in
/// order, then named ones by name; every parameter left out must have a default.
fn placement(
    f: &qail_schema::snapshot::Function,
    args: &[(Option<String>, &Expr)],
) -> Option<Vec<usize>> {
    let mut at = Vec::with_capacity(args.len());
    for (i, (n, _)) in args.iter().enumerate() {
        let p = match n {
            None => i,
            Some(n) => f.arg_names.iter().position(|a| a == n)?,
        };
        if p >= f.args.len() || at.contains(&p) {
            return None;
        }
        at.push(p);
    }
    let required = f.args.len() - usize::try_from(f.defaults).unwrap_or(0).min(f.args.len());
    (0..required).all(|p| at.contains(&p)).then_some(at)
}

/// A snapshot function called in named or mixed notation.
fn user_named_call(
    cx: &mut Ctx,
    sc: &Scope,
    list: &[FunctionArg],
    schema: Option<&str>,
    name: &str,
    range: Range<usize>,
) -> Typed {
    let Some(args) = list.iter().map(split_arg).collect::<Option<Vec<_>>>() else {
        cx.error(
            range.clone(),
            "this argument form is not supported by the analyzer",
            Some("write name => value, or pass the arguments by position".into()),
        );
        return Typed::error(range);
    };
    let snap = cx.snap;
    let fits: Vec<(&qail_schema::snapshot::Function, Vec<usize>)> = snap
        .functions
        .iter()
        .filter(|f| {
            f.name == name
                && schema.map_or_else(|| snap.on_search_path(&f.schema), |s| s == f.schema)
        })
        .filter_map(|f| placement(f, &args).map(|at| (f, at)))
        .collect();
    let (f, at) = match fits.as_slice() {
        [one] => one.clone(),
        [] => {
            let known: Vec<String> = snap
                .functions
                .iter()
                .filter(|f| f.name == name && !f.arg_names.is_empty())
                .map(|f| format!("{name}({})", f.arg_names.join(", ")))
                .collect();
            let hint = if known.is_empty() {
                "pass the arguments by position, or run `cargo qail schema pull` if the function is new".to_string()
            } else {
                format!(
                    "the parameters are {}; every one left out needs a default",
                    known.join(" or ")
                )
            };
            cx.error(
                range.clone(),
                format!("function {name} has no parameters matching these names"),
                Some(hint),
            );
            return Typed::error(range);
        }
        _ => {
            cx.error(
                range.clone(),
                format!("function {name}() is not unique for these named arguments"),
                Some("pass the arguments by position with casts".into()),
            );
            return Typed::error(range);
        }
    };
    // Note: one OUT parameter makes a scalar result, its type.
    let result = if f.returns_set || f.out_columns.len() <= 1 {
        f.returns.clone()
    } else {
        builtin("record")
    };
    let mut out = Typed::known(result, range.clone());
    out.name = Some(name.to_string());
    for ((n, e), p) in args.iter().zip(&at) {
        let what = n.clone().unwrap_or_else(|| format!("argument {}", p + 1));
        let t = expect(cx, sc, e, &f.args[*p], Fit::Implicit, &what);
        if t.is_error() {
            return Typed::error(range);
        }
        out.absorb(&t);
    }
    if !f.strict {
        out.nullable = true;
        out.why.push(format!("{name}() can return NULL"));
    } else if at.len() < f.args.len() {
        // Note: a default can be NULL, which a STRICT function returns NULL for.
        out.nullable = true;
        out.why.push(format!(
            "{name}() is STRICT and an omitted argument's default may be NULL"
        ));
    }
    out
}

/// A call of a snapshot function in named or mixed notation as positional arguments, when
/// the arguments given fill the leading parameters (those left out are trailing defaults).
pub(crate) fn positional<'a>(
    snap: &qail_schema::snapshot::Snapshot,
    schema: Option<&str>,
    name: &str,
    list: &'a [FunctionArg],
) -> Option<Vec<&'a Expr>> {
    let args = list.iter().map(split_arg).collect::<Option<Vec<_>>>()?;
    let mut fits = snap
        .functions
        .iter()
        .filter(|f| {
            f.name == name
                && schema.map_or_else(|| snap.on_search_path(&f.schema), |s| s == f.schema)
        })
        .filter_map(|f| placement(f, &args));
    let at = fits.next()?;
    if fits.next().is_some() {
        return None;
    }
    let mut ordered: Vec<Option<&Expr>> = vec![None; args.len()];
    for ((_, e), p) in args.iter().zip(&at) {
        *ordered.get_mut(*p)? = Some(*e);
    }
    ordered.into_iter().collect()
}
