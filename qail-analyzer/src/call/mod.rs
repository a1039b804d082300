//! Function calls: catalog and snapshot functions, aggregates and window functions, their
//! ORDER BY/FILTER/OVER clauses, and the errors for calls that do not resolve. Functions
//! written with SQL syntax, ordered-set aggregates, named arguments and functions in FROM
//! have modules of their own.

pub(crate) mod builtins;
pub(crate) mod frame;
pub(crate) mod named;
pub(crate) mod ordered_set;
pub(crate) mod session;
pub(crate) mod sqljson;
pub(crate) mod srf;
pub(crate) mod syntax;

use std::borrow::Cow;
use std::ops::Range;

use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentClause, FunctionArguments,
    WindowSpec, WindowType,
};

use crate::call::builtins::{CallError, NullRule};
use crate::ctx::Ctx;
use crate::diag::closest;
use crate::expr::{
    Ty, Typed, condition, conditional, constructor, expr, json, record, settle, subquery,
};
use crate::query::group::{has_aggregate, has_window};
use crate::scope::{Scope, norm, parts};
use crate::types::overload::{Pick, pick};
use crate::types::{base, builtin, castable, display, element_of, written};
use qail_schema::snapshot::TypeRef;

/// A function call.
pub(crate) fn call(cx: &mut Ctx, sc: &Scope, e: &Expr, range: Range<usize>) -> Typed {
    match e {
        Expr::Function(f) => match constructor::row(cx, sc, e, range.clone()) {
            Some(t) => t,
            None => function(cx, sc, f, range),
        },
        _ => Typed::error(range),
    }
}

/// A catalog function called by name with plain arguments.
pub(crate) fn by_name(
    cx: &mut Ctx,
    sc: &Scope,
    name: &str,
    args: &[&Expr],
    range: Range<usize>,
) -> Typed {
    let typed: Vec<Typed> = args.iter().map(|a| expr(cx, sc, a)).collect();
    resolve_call(cx, None, name, typed, range)
}

fn function(cx: &mut Ctx, sc: &Scope, f: &Function, range: Range<usize>) -> Typed {
    let ids = parts(&f.name);
    let name = ids.last().map(|i| norm(i)).unwrap_or_default();
    let schema = (ids.len() == 2).then(|| norm(ids[0]));
    session::builtin_call(cx, schema.as_deref(), &name);
    if let (FunctionArguments::Subquery(q), "array") = (&f.args, name.as_str()) {
        return subquery::array_subquery(cx, sc, q, range);
    }
    if schema.is_none() && builtins::ORDERED_SET.contains(&name.as_str()) {
        side_clauses(cx, sc, f, range.clone());
        return ordered_set::ordered_set(cx, sc, f, &name, range);
    }
    if schema.is_none() && name == "merge_action" {
        return merge_action(cx, f, range);
    }
    if schema.is_none()
        && let Some(t) = sqljson::call(cx, sc, f, &name, range.clone())
    {
        side_clauses(cx, sc, f, range.clone());
        return t;
    }
    if named::has_named(f) {
        return named::named_call(cx, sc, f, schema.as_deref(), &name, range);
    }
    if schema.is_none() && ordered_set::refused(cx, sc, f, &name) {
        return Typed::error(range);
    }
    let Some((args, star)) = arguments(cx, f, range.clone()) else {
        return Typed::error(range);
    };
    if let Some(over) = &f.over
        && schema.is_none()
        && let Some(message) = window_misuse(f, over, &name, &args)
    {
        cx.error(
            range.clone(),
            message,
            Some("compute the inner window function in a subquery".into()),
        );
        return Typed::error(range);
    }
    if f.over.is_none()
        && schema.is_none()
        && builtins::is_aggregate(&name)
        && let Some(inner) = args
            .iter()
            .map(|a| a.as_ref())
            .chain(f.filter.as_deref())
            .find(|a| has_aggregate(a))
    {
        cx.error(
            cx.range(inner),
            "aggregate function calls cannot be nested",
            Some("aggregate in a subquery first, then aggregate its result".into()),
        );
        return Typed::error(range);
    }
    let mut typed: Vec<Typed> = args.iter().map(|a| expr(cx, sc, a)).collect();
    // Note: `f(…, VARIADIC arr)` passes the array as the variadic parameter: it resolves
    // like a call with one element in its place.
    if let (Some(last), Some(a)) = (typed.last_mut(), args.last())
        && cx.variadic.contains(&cx.range(a.as_ref()).start)
        && let Some(elem) = last.arg().filter(|t| t.array_dims > 0).and_then(element_of)
    {
        last.ty = Ty::Known(elem);
    }
    side_clauses(cx, sc, f, range.clone());
    if star && name != "count" {
        cx.error(
            range.clone(),
            format!("{name}(*) is not a function call PostgreSQL accepts"),
            Some("only count(*) takes *".into()),
        );
        return Typed::error(range);
    }
    if !star && args.is_empty() && schema.is_none() && name == "count" {
        cx.error(
            range.clone(),
            "count(*) must be used to call a parameterless aggregate function",
            Some("write count(*)".into()),
        );
        return Typed::error(range);
    }
    let inputs: Vec<Typed> = typed.clone();
    let mut t = match name.as_str() {
        "coalesce" | "greatest" | "least" if schema.is_none() => {
            conditional::coalesce(cx, name.clone(), typed, range)
        }
        "nullif" if schema.is_none() && typed.len() == 2 => conditional::nullif(cx, typed, range),
        _ => {
            let mut t = resolve_call(cx, schema.as_deref(), &name, typed, range);
            if sc.grouped && f.filter.is_none() && f.over.is_none() && !t.is_error() {
                group_aggregate(&mut t, &name, &inputs);
            }
            t
        }
    };
    if schema.is_none() {
        record::through_call(&mut t, &name, &inputs);
        json::through_call(&mut t, &name, &inputs, cx.snap);
    }
    t
}

/// `merge_action()` in a MERGE's RETURNING list (PostgreSQL 17): `INSERT`, `UPDATE` or
/// `DELETE`, never NULL.
fn merge_action(cx: &mut Ctx, f: &Function, range: Range<usize>) -> Typed {
    let have = qail_catalog::Versions::span(17, qail_catalog::NEWEST);
    let no_args = match &f.args {
        FunctionArguments::List(l) => l.args.is_empty(),
        FunctionArguments::None => true,
        FunctionArguments::Subquery(_) => false,
    };
    if !have.covers(cx.target) {
        let (message, hint) = crate::diag::version_gap("merge_action()", have, cx.target);
        cx.error(range.clone(), message, Some(hint));
    } else if !cx.merge_returning {
        cx.error(
            range.clone(),
            "merge_action() can only be used in the RETURNING list of a MERGE command",
            Some("use it in MERGE … RETURNING".into()),
        );
    } else if !no_args {
        cx.error(
            range.clone(),
            "merge_action() takes no arguments",
            Some("write merge_action()".into()),
        );
    } else {
        let mut t = Typed::known(builtin("text"), range);
        t.name = Some("merge_action".into());
        return t;
    }
    Typed::error(range)
}

/// Why PostgreSQL refuses a call with OVER: a function that is neither a window function nor
/// an aggregate, or a window function nested in its arguments or its window.
fn window_misuse(
    f: &Function,
    over: &WindowType,
    name: &str,
    args: &[Cow<'_, Expr>],
) -> Option<String> {
    if builtins::exists(name) && !builtins::takes_over(name) {
        return Some(format!(
            "OVER specified, but {name} is not a window function nor an aggregate function"
        ));
    }
    let mut window_exprs: Vec<&Expr> = args.iter().map(AsRef::as_ref).collect();
    if let WindowType::WindowSpec(spec) = over {
        window_exprs.extend(&spec.partition_by);
        window_exprs.extend(spec.order_by.iter().map(|o| &o.expr));
    }
    window_exprs.extend(f.filter.as_deref());
    window_exprs
        .into_iter()
        .any(has_window)
        .then(|| "window function calls cannot be nested".to_string())
}

/// Aggregates that are non-null over a non-empty group of non-null inputs.
const NON_EMPTY_STRICT: &[&str] = &[
    "sum",
    "avg",
    "min",
    "max",
    "array_agg",
    "string_agg",
    "json_agg",
    "jsonb_agg",
    "json_object_agg",
    "jsonb_object_agg",
    "bool_and",
    "bool_or",
    "every",
    "bit_and",
    "bit_or",
];

/// In a query with GROUP BY every group has a row, so `sum(x)` is NULL only if `x` is
/// (without FILTER, which can leave a group's input empty).
fn group_aggregate(t: &mut Typed, name: &str, inputs: &[Typed]) {
    if !NON_EMPTY_STRICT.contains(&name) {
        return;
    }
    t.nullable = false;
    t.why.clear();
    // Note: an array or JSON aggregate of a non-empty group is a value even if its elements
    // are NULL; the others (string_agg too) skip NULL inputs and are NULL when all of them are.
    if !name.contains("_agg") || name == "string_agg" {
        for input in inputs.iter().take(1) {
            t.absorb(input);
        }
    }
}

/// The positional arguments, and whether the call is `f(*)`. A `t.*` argument is the whole
/// row of `t`, written as the bare relation name.
fn arguments<'f>(
    cx: &mut Ctx,
    f: &'f Function,
    range: Range<usize>,
) -> Option<(Vec<Cow<'f, Expr>>, bool)> {
    let mut args = Vec::new();
    let mut star = false;
    match &f.args {
        FunctionArguments::List(list) => {
            for a in &list.args {
                match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => args.push(Cow::Borrowed(e)),
                    FunctionArg::Unnamed(FunctionArgExpr::QualifiedWildcard(name)) => {
                        match parts(name).last() {
                            Some(id) => args.push(Cow::Owned(Expr::Identifier((*id).clone()))),
                            None => star = true,
                        }
                    }
                    FunctionArg::Unnamed(_) => star = true,
                    _ => {
                        cx.error(
                            range,
                            "named function arguments are not supported by the analyzer yet",
                            Some("pass the arguments by position".into()),
                        );
                        return None;
                    }
                }
            }
        }
        FunctionArguments::Subquery(_) => {
            cx.error(
                range,
                "a subquery as function argument is not supported",
                Some("use a scalar subquery: f((SELECT …))".into()),
            );
            return None;
        }
        FunctionArguments::None => {}
    }
    Some((args, star))
}

/// ORDER BY inside an aggregate, FILTER (WHERE …) and OVER (…): checked, not typed into the result.
fn side_clauses(cx: &mut Ctx, sc: &Scope, f: &Function, range: Range<usize>) {
    if let FunctionArguments::List(list) = &f.args {
        for clause in &list.clauses {
            if let FunctionArgumentClause::OrderBy(items) = clause {
                for item in items {
                    expr(cx, sc, &item.expr);
                }
            }
        }
    }
    if let Some(filter) = &f.filter {
        condition(cx, sc, filter, "FILTER");
    }
    if let Some(WindowType::WindowSpec(spec)) = &f.over {
        window_spec(cx, sc, spec, range);
    }
}

/// A window's PARTITION BY and ORDER BY expressions, and its frame's offsets (`ROWS BETWEEN
/// $1 PRECEDING …`): `bigint` for ROWS and GROUPS; for RANGE, the type the sort key's
/// `in_range` support takes (the key's own type for integers and numeric, `double
/// precision` for floats, `interval` for dates and times).
pub(crate) fn window_spec(cx: &mut Ctx, sc: &Scope, spec: &WindowSpec, range: Range<usize>) {
    for p in &spec.partition_by {
        expr(cx, sc, p);
    }
    let keys: Vec<Typed> = spec
        .order_by
        .iter()
        .map(|o| expr(cx, sc, &o.expr))
        .collect();
    frame::check(cx, sc, spec, &keys, range);
}

/// Resolves a call of `name` on typed arguments (catalog, then snapshot functions).
pub(crate) fn resolve_call(
    cx: &mut Ctx,
    schema: Option<&str>,
    name: &str,
    mut args: Vec<Typed>,
    range: Range<usize>,
) -> Typed {
    session::builtin_call(cx, schema, name);
    if args.iter().any(Typed::is_error) {
        return Typed::error(range);
    }
    let types: Vec<Option<&TypeRef>> = args.iter().map(Typed::arg).collect();
    let builtin_schema = schema.is_none_or(|s| s == "pg_catalog");
    // Note: over an extension's own type (citext), the extension's overload (max(citext))
    // is the exact match the server picks; a built-in one would need a cast (max(text)).
    let own_type = types.iter().flatten().any(|t| {
        cx.snap
            .base_type(&TypeRef {
                array_dims: 0,
                ..(*t).clone()
            })
            .is_some()
    });
    let resolved = match own_type.then(|| user_function(cx, schema, name, &types)) {
        Some(Ok(r)) => Ok(r),
        _ if builtin_schema => builtins::resolve(name, &types, cx.snap, cx.target),
        _ => Err(CallError::UnknownName),
    };
    // Note: an extension may overload a built-in name for its own types (citext's
    // strpos(citext, citext)): when no built-in fits, the snapshot's functions are tried.
    let resolved = match resolved {
        Err(CallError::UnknownName) => user_function(cx, schema, name, &types),
        Err(e) => user_function(cx, schema, name, &types).map_err(|_| e),
        other => other,
    };
    // Note: a call of a type's name with one argument and no such function is a cast
    // (`tsquery('a & b')`), as PostgreSQL's function-style cast.
    if let Err(CallError::UnknownName) = resolved
        && let [arg] = args.as_mut_slice()
        && let Some(target) = written::lookup(cx.snap, schema, name, false)
        && arg
            .arg()
            .is_none_or(|from| castable(from, &target, cx.snap))
    {
        settle(cx, arg, &target);
        let mut t = Typed::known(target, range);
        t.absorb(arg);
        t.name = Some(name.to_string());
        return t;
    }
    match resolved {
        Ok(r) => {
            // Note: settling takes a literal's text; NullRule::Format needs the format's.
            let format_given = args
                .last()
                .and_then(|a| a.literal.as_deref())
                .is_some_and(|f| !f.is_empty());
            for (a, p) in args.iter_mut().zip(&r.params) {
                settle(cx, a, p);
            }
            let mut t = Typed::known(r.result, range);
            t.name = Some(name.to_string());
            match r.null {
                NullRule::Never => {}
                NullRule::Strict => args.iter().for_each(|a| t.absorb(a)),
                NullRule::First => args.iter().take(1).for_each(|a| t.absorb(a)),
                NullRule::Format if format_given => {
                    args.iter().for_each(|a| t.absorb(a));
                }
                NullRule::Format => {
                    args.iter().for_each(|a| t.absorb(a));
                    t.nullable = true;
                    t.why.push(format!(
                        "{name}() is NULL for an empty format; write the format as a string literal"
                    ));
                }
                NullRule::Always => {
                    t.nullable = true;
                    t.why.push(if r.aggregate {
                        format!("{name}() is NULL when there are no input rows")
                    } else {
                        format!("{name}() can return NULL")
                    });
                }
            }
            t
        }
        Err(e) => {
            call_error(cx, name, &args, e, range.clone());
            Typed::error(range)
        }
    }
}

fn call_error(cx: &mut Ctx, name: &str, args: &[Typed], e: CallError, range: Range<usize>) {
    let shown: Vec<String> = args
        .iter()
        .map(|a| a.arg().map_or_else(|| "unknown".into(), display))
        .collect();
    let sig = format!("{name}({})", shown.join(", "));
    let (msg, hint) = match e {
        CallError::UnknownName => {
            let user: Vec<&str> = cx.snap.functions.iter().map(|f| f.name.as_str()).collect();
            let hint = closest(name, user)
                .map(str::to_string)
                .or_else(|| known_close(name))
                .map_or_else(
                    || {
                        "check the name, or run `cargo qail schema pull` if the function is new"
                            .to_string()
                    },
                    |c| format!("did you mean \"{c}\"?"),
                );
            (format!("function {sig} does not exist"), hint)
        }
        CallError::NoMatch => (
            format!("function {sig} does not exist"),
            "no overload takes these argument types; add explicit casts".to_string(),
        ),
        CallError::Ambiguous => (
            format!("function {sig} is not unique"),
            "add a cast to the unknown arguments, e.g. $1::int4".to_string(),
        ),
        CallError::Version(versions, whole) => {
            let what = if whole {
                format!("{name}()")
            } else {
                format!("function {sig}")
            };
            crate::diag::version_gap(&what, versions, cx.target)
        }
        CallError::Differs(how) => (
            format!("function {sig} {how}"),
            "add casts so every targeted PostgreSQL version picks the same function".to_string(),
        ),
    };
    cx.error(range, msg, Some(hint));
}

fn known_close(name: &str) -> Option<String> {
    const COMMON: &[&str] = &[
        "count",
        "sum",
        "avg",
        "min",
        "max",
        "lower",
        "upper",
        "length",
        "coalesce",
        "now",
        "array_agg",
        "string_agg",
        "date_trunc",
        "round",
        "concat",
        "substr",
        "replace",
        "jsonb_build_object",
    ];
    closest(name, COMMON.iter().copied()).map(str::to_string)
}

/// Whether a declared parameter or result type is polymorphic: `Some(true)` for the array
/// kinds (`anyarray`, `anycompatiblearray`), `Some(false)` for the element kinds.
fn polymorphic(t: &TypeRef) -> Option<bool> {
    if t.schema != "pg_catalog" || t.array_dims > 0 {
        return None;
    }
    match t.name.as_str() {
        "anyarray" | "anycompatiblearray" => Some(true),
        "anyelement" | "anynonarray" | "anyenum" | "anycompatible" | "anycompatiblenonarray" => {
            Some(false)
        }
        _ => None,
    }
}

/// The element type the arguments bind for a user function's polymorphic parameters:
/// `Some(None)` when it has none, `None` when they bind nothing or conflict.
pub(crate) fn polymorphic_element(
    params: &[TypeRef],
    args: &[Option<&TypeRef>],
) -> Option<Option<TypeRef>> {
    let mut elem: Option<TypeRef> = None;
    let mut any = false;
    for (p, a) in params.iter().zip(args) {
        let Some(array) = polymorphic(p) else {
            continue;
        };
        any = true;
        let Some(a) = a else { continue };
        let bound = match (array, a.array_dims) {
            (true, 0) => return None,
            (true, _) => TypeRef {
                array_dims: 0,
                ..(*a).clone()
            },
            (false, _) => (*a).clone(),
        };
        match &elem {
            Some(e) if *e != bound => return None,
            _ => elem = Some(bound),
        }
    }
    match (any, elem) {
        (false, _) => Some(None),
        (true, Some(e)) => Some(Some(e)),
        (true, None) => None,
    }
}

/// A declared type with the bound element type put in for a polymorphic one.
pub(crate) fn polymorphic_instance(t: &TypeRef, elem: Option<&TypeRef>) -> TypeRef {
    match (polymorphic(t), elem) {
        // Note: an element that is itself an array has that array type as its array.
        (Some(true), Some(e)) => TypeRef {
            array_dims: e.array_dims.max(1),
            ..e.clone()
        },
        (Some(false), Some(e)) => e.clone(),
        _ => t.clone(),
    }
}

/// A function from the snapshot, by name and arity, resolved like a built-in; one found
/// marks the statement ([`session::user_call`]: its body is not known).
fn user_function(
    cx: &mut Ctx,
    schema: Option<&str>,
    name: &str,
    args: &[Option<&TypeRef>],
) -> Result<builtins::Resolved, CallError> {
    let snap = cx.snap;
    let fns: Vec<_> = snap
        .functions
        .iter()
        .filter(|f| {
            f.name == name
                && schema.map_or_else(|| snap.on_search_path(&f.schema), |s| s == f.schema)
        })
        .filter(|f| {
            let defaults = usize::try_from(f.defaults).unwrap_or(0);
            (f.args.len().saturating_sub(defaults)..=f.args.len()).contains(&args.len())
        })
        .collect();
    if fns.is_empty() {
        return Err(CallError::UnknownName);
    }
    let based: Vec<Option<TypeRef>> = args.iter().map(|a| a.map(|t| base(t, snap))).collect();
    let args: Vec<Option<&TypeRef>> = based.iter().map(Option::as_ref).collect();
    // Note: a polymorphic candidate takes the element type its arguments bind; one they
    // cannot bind (only unknown literals, or two different elements) does not fit.
    let elems: Vec<Option<Option<TypeRef>>> = fns
        .iter()
        .map(|f| polymorphic_element(&f.args[..args.len()], &args))
        .collect();
    let (fns, elems): (Vec<_>, Vec<_>) = fns
        .into_iter()
        .zip(elems)
        .filter_map(|(f, e)| e.map(|e| (f, e)))
        .unzip();
    if fns.is_empty() {
        return Err(CallError::NoMatch);
    }
    let cands: Vec<Vec<TypeRef>> = fns
        .iter()
        .zip(&elems)
        .map(|(f, e)| {
            f.args[..args.len()]
                .iter()
                .map(|t| polymorphic_instance(t, e.as_ref()))
                .collect()
        })
        .collect();
    match pick(&args, &cands, false, snap) {
        Pick::One(i) => {
            session::user_call(cx);
            Ok(builtins::Resolved {
                params: cands[i].clone(),
                result: if fns[i].returns_set || fns[i].out_columns.len() <= 1 {
                    polymorphic_instance(&fns[i].returns, elems[i].as_ref())
                } else {
                    builtin("record")
                },
                // Note: an omitted argument takes its default, which may be NULL; an aggregate
                // is NULL over no rows.
                null: if fns[i].strict && args.len() == fns[i].args.len() && !fns[i].aggregate {
                    NullRule::Strict
                } else {
                    NullRule::Always
                },
                aggregate: fns[i].aggregate,
                window: false,
            })
        }
        Pick::NoMatch => Err(CallError::NoMatch),
        Pick::Ambiguous => Err(CallError::Ambiguous),
    }
}
