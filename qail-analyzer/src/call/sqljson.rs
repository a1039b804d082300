//! The SQL/JSON functions written with SQL syntax rather than found in `pg_proc`:
//! the constructors `JSON_OBJECT('k': v, …)`, `JSON_ARRAY(…)` and the aggregates
//! `JSON_OBJECTAGG(k: v)`, `JSON_ARRAYAGG(v)` (PostgreSQL 16); the query functions
//! `JSON_VALUE`, `JSON_QUERY`, `JSON_EXISTS`, and `JSON(x … WITH UNIQUE KEYS)` (with input
//! clauses: without, `json(x)` is a cast), `JSON_SCALAR`, `JSON_SERIALIZE` (PostgreSQL 17). Typed as the server's Describe reports them: the `RETURNING` type, else
//! the default one (`json`, `text`, `jsonb`, `boolean`; a constructor with a `jsonb` input
//! is `jsonb`). The query functions' clauses
//! (`PASSING x AS name`, `RETURNING type [FORMAT JSON]`, the wrapper and quotes of
//! `JSON_QUERY`, `… ON EMPTY`, `… ON ERROR`) and the constructors' `RETURNING` are set aside
//! before parsing ([`crate::set_aside`]) and read here: their expressions are typed in the
//! call's scope, and a clause a function does not have is refused as the server refuses it.

use std::ops::Range;

use qail_catalog::{NEWEST, Versions};
use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgOperator, FunctionArgumentClause,
    FunctionArguments,
};

use crate::ctx::Ctx;
use crate::diag::version_gap;
use crate::expr::{Fit, Typed, expect, expr, settle};
use crate::scope::Scope;
use crate::set_aside::{parser_over, take_word, take_words};
use crate::types::{base, builtin, castable, category, display, written};
use qail_schema::snapshot::TypeRef;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// The SQL/JSON aggregates (not in `pg_proc`).
pub(crate) const AGGREGATES: &[&str] = &["json_objectagg", "json_arrayagg"];

/// The SQL/JSON call `f` named `name` (lower case, unqualified), typed; `None` when it is not
/// one (`json_object(text[])` is the older `pg_proc` function).
pub(crate) fn call(
    cx: &mut Ctx,
    sc: &Scope,
    f: &Function,
    name: &str,
    range: Range<usize>,
) -> Option<Typed> {
    let list = match &f.args {
        FunctionArguments::List(list) => Some(list),
        FunctionArguments::None => None,
        FunctionArguments::Subquery(_) => return None,
    };
    let args: &[FunctionArg] = list.map_or(&[], |l| &l.args);
    let pairs = args.iter().any(|a| {
        matches!(
            a,
            FunctionArg::ExprNamed {
                operator: FunctionArgOperator::Colon | FunctionArgOperator::Value,
                ..
            }
        )
    });
    let json_clause = list.is_some_and(|l| {
        l.clauses
            .iter()
            .any(|c| matches!(c, FunctionArgumentClause::JsonNullClause(_)))
    });
    // Note: `JSON(x)` without input clauses is the cast to json.
    let input = cx
        .aside
        .json_call(range.start)
        .map(|c| c.input.clone())
        .unwrap_or_default();
    let (since, result, aggregate) = match name {
        "json" if !input.is_empty() => (17, "json", false),
        "json_object" if pairs || args.is_empty() || json_clause => (16, "json", false),
        "json_array" => (16, "json", false),
        "json_objectagg" => (16, "json", true),
        "json_arrayagg" => (16, "json", true),
        "json_value" => (17, "text", false),
        "json_query" => (17, "jsonb", false),
        "json_exists" => (17, "bool", false),
        "json_scalar" => (17, "json", false),
        "json_serialize" => (17, "text", false),
        _ => return None,
    };
    let have = Versions::span(since, NEWEST);
    if !have.covers(cx.target) {
        let (message, hint) = version_gap(&format!("{}()", name.to_uppercase()), have, cx.target);
        cx.error(range.clone(), message, Some(hint));
        return Some(Typed::error(range));
    }
    let arity = match name {
        "json" | "json_scalar" | "json_serialize" => Some(1),
        "json_value" | "json_query" | "json_exists" => Some(2),
        _ => None,
    };
    if let Some(n) = arity
        && args.len() != n
    {
        cx.error(
            range.clone(),
            format!(
                "{}() takes {n} argument{}, not {}",
                name.to_uppercase(),
                if n == 1 { "" } else { "s" },
                args.len()
            ),
            Some(if n == 1 {
                "pass the JSON value".into()
            } else {
                "pass the JSON value and a JSON path".into()
            }),
        );
        return Some(Typed::error(range));
    }
    let mut typed = Vec::new();
    for (i, a) in args.iter().enumerate() {
        match a {
            FunctionArg::ExprNamed {
                name: key,
                arg: FunctionArgExpr::Expr(value),
                ..
            } => {
                let mut k = expr(cx, sc, key);
                settle(cx, &mut k, &builtin("text"));
                let mut v = expr(cx, sc, value);
                settle(cx, &mut v, &builtin("text"));
                typed.push((k, true));
                typed.push((v, false));
            }
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => {
                let mut t = expr(cx, sc, e);
                // Note: an untyped context item of a query function is text (the server reads
                // it as jsonb), its path a jsonpath.
                let to = match (name, i) {
                    ("json_value" | "json_query" | "json_exists", 1) => "jsonpath",
                    _ => "text",
                };
                // Note: a path of another type is cast to jsonpath (`'$' || '.a'` is one).
                if to == "jsonpath"
                    && let Some(have) = t.arg().filter(|h| !castable(h, &builtin(to), cx.snap))
                {
                    cx.error(
                        t.range.clone(),
                        format!(
                            "JSON path expression must be of type jsonpath, not of type {}",
                            display(have)
                        ),
                        Some("pass a jsonpath, or text that holds one".into()),
                    );
                    return Some(Typed::error(range));
                }
                settle(cx, &mut t, &builtin(to));
                typed.push((t, false));
            }
            _ => {
                cx.error(
                    range.clone(),
                    format!(
                        "this argument form of {} is not supported by the analyzer",
                        name.to_uppercase()
                    ),
                    Some("write 'key': value pairs, or plain values".into()),
                );
                return Some(Typed::error(range));
            }
        }
    }
    if typed.iter().any(|(t, _)| t.is_error()) {
        return Some(Typed::error(range));
    }
    if name == "json"
        && let [(t, _)] = typed.as_slice()
        && !json_input(cx, t, &input, false)
    {
        return Some(Typed::error(range));
    }
    // Note: a constructor's input clauses follow the value they qualify.
    if name != "json" && !input.is_empty() {
        for (k, (t, key)) in typed.iter().enumerate() {
            let next = typed.get(k + 1).map_or(usize::MAX, |(n, _)| n.range.start);
            let own: Vec<Range<usize>> = input
                .iter()
                .filter(|r| r.start >= t.range.end && r.start < next)
                .cloned()
                .collect();
            if !key && !own.is_empty() && !json_input(cx, t, &own, true) {
                return Some(Typed::error(range));
            }
        }
    }
    let aside = cx.aside.json_call(range.start).cloned();
    let parsed_returning = list.and_then(|l| {
        l.clauses.iter().find_map(|c| match c {
            FunctionArgumentClause::JsonReturningClause(r) => Some(&r.data_type),
            _ => None,
        })
    });
    let result = match (name, parsed_returning) {
        ("json_value" | "json_query" | "json_exists", _) => {
            let clauses = aside.map_or(range.end..range.end, |a| a.clauses);
            query_clauses(cx, sc, name, clauses, builtin(result))
        }
        (_, Some(dt)) => {
            written::resolve(cx, dt).and_then(|ty| constructor_result(cx, name, ty, range.clone()))
        }
        _ => match aside.and_then(|a| a.returning) {
            Some(clause) => constructor_returning(cx, name, clause),
            // Note: a constructor with any `jsonb` input builds `jsonb` (the server's
            // transformJsonConstructorOutput).
            None if (matches!(name, "json_object" | "json_array") || aggregate)
                && typed
                    .iter()
                    .any(|(a, _)| a.arg().is_some_and(|t| *t == builtin("jsonb"))) =>
            {
                Some(builtin("jsonb"))
            }
            None => Some(builtin(result)),
        },
    };
    let Some(result) = result else {
        return Some(Typed::error(range));
    };
    let mut t = Typed::known(result, range.clone());
    t.name = Some(name.to_owned());
    // Note: `JSON_ARRAY(SELECT …)` (the parse parenthesized the query) aggregates the rows,
    // NULL when there are none; `JSON_ARRAY((SELECT …))` is a one-element array.
    let query_form = name == "json_array"
        && matches!(
            args,
            [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Subquery(
                _
            )))]
        )
        && cx
            .sql
            .get(range.clone())
            .and_then(|call| call.split_once('('))
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('('));
    match name {
        "json_array" if query_form => {
            t.nullable = true;
            t.why
                .push("JSON_ARRAY(query) is NULL when the query returns no rows".into());
        }
        // Note: a constructor builds a value from any input (a NULL value is `null` or left out).
        "json_object" | "json_array" => {}
        _ if aggregate => {
            t.nullable = true;
            t.why.push(format!(
                "{}() is NULL when there are no input rows",
                name.to_uppercase()
            ));
        }
        "json" | "json_scalar" | "json_serialize" => typed.iter().for_each(|(a, _)| t.absorb(a)),
        _ => {
            t.nullable = true;
            t.why.push(format!(
                "{}() is NULL when the path finds nothing",
                name.to_uppercase()
            ));
        }
    }
    Some(t)
}

/// Whether the input `t` of `JSON(t …)` (`constructor` false) or a constructor's value suits
/// its input clauses (at `input`), as the server decides (transformJsonValueExpr,
/// transformJsonParseArg): `WITH UNIQUE KEYS` needs a string type or bytea, `ENCODING`
/// bytea; a constructor's `FORMAT JSON` a string type, bytea, json or jsonb; `JSON()`'s input
/// but bytea a cast to json. Reports the error when not.
fn json_input(cx: &mut Ctx, t: &Typed, input: &[Range<usize>], constructor: bool) -> bool {
    let Some(have) = t.arg() else {
        return true;
    };
    let said = |word: &str| {
        input.iter().any(|r| {
            cx.sql[r.clone()]
                .split_whitespace()
                .next()
                .is_some_and(|w| w.eq_ignore_ascii_case(word))
        })
    };
    let encoding = input.iter().any(|r| {
        cx.sql[r.clone()]
            .split_whitespace()
            .any(|w| w.eq_ignore_ascii_case("encoding"))
    });
    let b = base(have, cx.snap);
    let bytea = b == builtin("bytea");
    let string = b.array_dims == 0 && category(&b, cx.snap) == 'S';
    let json = b == builtin("json") || b == builtin("jsonb");
    // Note: a constructor's `WITH UNIQUE KEYS` is about its keys, not about one value.
    let (message, hint) = if !constructor && said("with") && !(bytea || string) {
        (
            "cannot use non-string types with WITH UNIQUE KEYS clause".to_owned(),
            "pass text (or bytea) holding the JSON, or leave out WITH UNIQUE KEYS",
        )
    } else if encoding && !bytea {
        (
            "JSON ENCODING clause is only allowed for bytea input type".to_owned(),
            "leave out ENCODING, or pass bytea",
        )
    } else if !constructor && !bytea && !castable(have, &builtin("json"), cx.snap) {
        (
            format!("cannot cast type {} to json", display(have)),
            "pass text holding the JSON",
        )
    } else if constructor && said("format") && !(bytea || string || json) {
        (
            "cannot use non-string types with explicit FORMAT JSON clause".to_owned(),
            "leave out FORMAT JSON: a value of another type is converted as it is",
        )
    } else {
        return true;
    };
    cx.error(t.range.clone(), message, Some(hint.into()));
    false
}

/// Whether `e` may be the DEFAULT of an `ON EMPTY` / `ON ERROR` behaviour (of a query
/// function or a JSON_TABLE column), as the server decides (transformJsonBehavior): a
/// constant, a function or an operator at the top (no subquery, aggregate or window function
/// there), with no column reference and no set-returning function anywhere. Reports the error
/// when not.
pub(crate) fn behavior_default(cx: &mut Ctx, e: &Expr) -> bool {
    fn strip(e: &Expr) -> &Expr {
        match e {
            Expr::Nested(inner) | Expr::Cast { expr: inner, .. } => strip(inner),
            other => other,
        }
    }
    fn calls(f: &Function) -> Vec<&Expr> {
        match &f.args {
            FunctionArguments::List(l) => l
                .args
                .iter()
                .filter_map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e))
                    | FunctionArg::Named {
                        arg: FunctionArgExpr::Expr(e),
                        ..
                    }
                    | FunctionArg::ExprNamed {
                        arg: FunctionArgExpr::Expr(e),
                        ..
                    } => Some(e),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }
    /// The first column reference or set-returning call, outside subqueries.
    fn inside(cx: &Ctx, e: &Expr) -> Option<&'static str> {
        match e {
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
                Some("DEFAULT expression must not contain column references")
            }
            Expr::Nested(x) | Expr::Cast { expr: x, .. } | Expr::UnaryOp { expr: x, .. } => {
                inside(cx, x)
            }
            Expr::BinaryOp { left, right, .. } => inside(cx, left).or_else(|| inside(cx, right)),
            Expr::Function(f) => {
                let name = f.name.0.last().map(|p| p.to_string().to_lowercase());
                let set = name.as_deref().is_some_and(|n| {
                    super::builtins::returns_set(n)
                        || cx
                            .snap
                            .functions_named(None, n)
                            .iter()
                            .any(|u| u.returns_set)
                });
                if set {
                    Some("DEFAULT expression must not return a set")
                } else {
                    calls(f).into_iter().find_map(|a| inside(cx, a))
                }
            }
            _ => None,
        }
    }
    let top = strip(e);
    let refused = match top {
        Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } => Some(
            "can only specify a constant, non-aggregate function, or operator expression for DEFAULT",
        ),
        Expr::Function(f)
            if f.over.is_some()
                || f.name.0.last().is_some_and(|p| {
                    super::builtins::is_aggregate(&p.to_string().to_lowercase())
                }) =>
        {
            Some(
                "can only specify a constant, non-aggregate function, or operator expression for DEFAULT",
            )
        }
        _ => inside(cx, e),
    };
    let Some(message) = refused else {
        return true;
    };
    cx.error(
        cx.range(e),
        message,
        Some("write a constant, or an expression of constants and function calls".into()),
    );
    false
}

/// The result type of a query function (`default` without RETURNING) after typing its clauses
/// at `clauses`; `None` after reporting an error.
fn query_clauses(
    cx: &mut Ctx,
    sc: &Scope,
    name: &str,
    clauses: Range<usize>,
    default: TypeRef,
) -> Option<TypeRef> {
    if clauses.is_empty() {
        return Some(default);
    }
    let upper = name.to_uppercase();
    let read = parser_over(cx.sql, clauses.clone())
        .and_then(|mut p| read_clauses(cx, sc, &mut p, name, default));
    match read {
        Ok(Some(ty)) if is_pseudo(cx, &ty) => {
            cx.error(
                clauses,
                format!("{upper}() cannot return type {}", display(&ty)),
                Some("a pseudo-type is no result type: name a concrete type".into()),
            );
            None
        }
        Ok(ty) => ty,
        Err(e) => {
            let message = match e {
                ParserError::ParserError(m) | ParserError::TokenizerError(m) => m,
                ParserError::RecursionLimitExceeded => "nested too deeply".to_owned(),
            };
            cx.error(
                clauses,
                format!("{upper}(): {message}"),
                Some(
                    "write its clauses in PostgreSQL's order: PASSING, RETURNING, the wrapper, \
                     QUOTES, … ON EMPTY, … ON ERROR"
                        .into(),
                ),
            );
            None
        }
    }
}

/// Whether `ty` is a pseudo-type (`record`, `anyelement`, …), which no function returns as
/// its declared result.
fn is_pseudo(cx: &Ctx, ty: &TypeRef) -> bool {
    let b = base(ty, cx.snap);
    b.array_dims == 0 && category(&b, cx.snap) == 'P'
}

/// Reads a query function's clauses with `p`; `Ok(None)` after reporting an error of
/// meaning, `Err` for one of syntax.
fn read_clauses(
    cx: &mut Ctx,
    sc: &Scope,
    p: &mut Parser,
    name: &str,
    default: TypeRef,
) -> Result<Option<TypeRef>, ParserError> {
    let upper = name.to_uppercase();
    let refuse = |what: &str| {
        Err(ParserError::ParserError(format!(
            "{upper}() has no {what} clause"
        )))
    };
    let mut failed = false;
    if take_word(p, "PASSING") {
        failed |= passing(cx, sc, p)?;
    }
    let mut ty = default;
    if take_word(p, "RETURNING") {
        if name == "json_exists" {
            return refuse("RETURNING");
        }
        let dt = p.parse_data_type()?;
        let Some(resolved) = written::resolve(cx, &dt) else {
            return Ok(None);
        };
        ty = resolved;
        let format = take_words(p, &["FORMAT", "JSON"]);
        if format && name == "json_value" {
            return Err(ParserError::ParserError(
                "cannot specify FORMAT JSON in RETURNING clause of JSON_VALUE()".into(),
            ));
        }
        if format && take_word(p, "ENCODING") {
            p.parse_identifier()?;
            if ty != builtin("bytea") {
                return Err(ParserError::ParserError(
                    "cannot set JSON encoding for non-bytea output types".into(),
                ));
            }
        }
    }
    let mut with_wrapper = false;
    if take_word(p, "WITH") {
        if name != "json_query" {
            return refuse("wrapper");
        }
        with_wrapper = true;
        let _ = take_word(p, "CONDITIONAL") || take_word(p, "UNCONDITIONAL");
        take_word(p, "ARRAY");
        if !take_word(p, "WRAPPER") {
            return Err(ParserError::ParserError("expected WRAPPER".into()));
        }
    } else if take_word(p, "WITHOUT") {
        if name != "json_query" {
            return refuse("wrapper");
        }
        take_word(p, "ARRAY");
        if !take_word(p, "WRAPPER") {
            return Err(ParserError::ParserError("expected WRAPPER".into()));
        }
    }
    let omit = take_words(p, &["OMIT", "QUOTES"]);
    if omit || take_words(p, &["KEEP", "QUOTES"]) {
        if name != "json_query" {
            return refuse("QUOTES");
        }
        if omit && with_wrapper {
            return Err(ParserError::ParserError(
                "SQL/JSON QUOTES behavior must not be specified when WITH WRAPPER is used".into(),
            ));
        }
        take_words(p, &["ON", "SCALAR", "STRING"]);
    }
    let mut seen_error = false;
    for _ in 0..2 {
        let behaviour = if take_word(p, "ERROR") {
            "ERROR"
        } else if take_word(p, "NULL") {
            "NULL"
        } else if take_word(p, "TRUE") {
            "TRUE"
        } else if take_word(p, "FALSE") {
            "FALSE"
        } else if take_word(p, "UNKNOWN") {
            "UNKNOWN"
        } else if take_word(p, "EMPTY") {
            let _ = take_word(p, "ARRAY") || take_word(p, "OBJECT");
            "EMPTY"
        } else if take_word(p, "DEFAULT") {
            let value = p.parse_expr()?;
            let what = format!("the DEFAULT of {upper}()");
            failed |= !behavior_default(cx, &value)
                || expect(cx, sc, &value, &ty, Fit::Assign, &what).is_error();
            "DEFAULT"
        } else {
            break;
        };
        if !take_word(p, "ON") {
            return Err(ParserError::ParserError(format!(
                "expected ON EMPTY or ON ERROR after {behaviour}"
            )));
        }
        let on = if !seen_error && take_word(p, "EMPTY") {
            if name == "json_exists" {
                return refuse("ON EMPTY");
            }
            "EMPTY"
        } else if take_word(p, "ERROR") {
            seen_error = true;
            "ERROR"
        } else {
            return Err(ParserError::ParserError(
                "expected EMPTY or ERROR after ON (ON EMPTY comes before ON ERROR)".into(),
            ));
        };
        let allowed: &[&str] = match name {
            "json_exists" => &["ERROR", "TRUE", "FALSE", "UNKNOWN"],
            "json_value" => &["ERROR", "NULL", "DEFAULT"],
            _ => &["ERROR", "NULL", "EMPTY", "DEFAULT"],
        };
        if !allowed.contains(&behaviour) {
            return Err(ParserError::ParserError(format!(
                "invalid ON {on} behavior {behaviour}: {upper}() allows {}",
                allowed.join(", ")
            )));
        }
        if seen_error {
            break;
        }
    }
    let next = p.peek_token();
    if next.token != Token::EOF {
        return Err(ParserError::ParserError(format!(
            "unexpected {} here",
            next.token
        )));
    }
    Ok((!failed).then_some(ty))
}

/// A `PASSING` list's `value AS name, …` (after the keyword): each value typed in `sc` (an
/// untyped one is text, as the server's Describe reports). Whether one failed.
pub(crate) fn passing(cx: &mut Ctx, sc: &Scope, p: &mut Parser) -> Result<bool, ParserError> {
    let mut failed = false;
    loop {
        let value = p.parse_expr()?;
        if !take_word(p, "AS") {
            return Err(ParserError::ParserError(
                "a PASSING value needs a name: PASSING value AS name".into(),
            ));
        }
        p.parse_identifier()?;
        let mut t = expr(cx, sc, &value);
        settle(cx, &mut t, &builtin("text"));
        failed |= t.is_error();
        if !p.consume_token(&Token::Comma) {
            return Ok(failed);
        }
    }
}

/// The result type of a constructor's `RETURNING type [FORMAT JSON [ENCODING e]]` at `clause`.
fn constructor_returning(cx: &mut Ctx, name: &str, clause: Range<usize>) -> Option<TypeRef> {
    let read = parser_over(cx.sql, clause.clone()).and_then(|mut p| {
        if !take_word(&mut p, "RETURNING") {
            return Err(ParserError::ParserError("expected RETURNING".into()));
        }
        let dt = p.parse_data_type()?;
        let mut encoding = None;
        if take_words(&mut p, &["FORMAT", "JSON"]) && take_word(&mut p, "ENCODING") {
            encoding = Some(p.parse_identifier()?.value.to_ascii_lowercase());
        }
        match p.peek_token().token {
            Token::EOF => Ok((dt, encoding)),
            other => Err(ParserError::ParserError(format!(
                "unexpected {other} after the RETURNING type"
            ))),
        }
    });
    match read {
        Ok((dt, encoding)) => {
            let ty = written::resolve(cx, &dt)?;
            let ty = constructor_result(cx, name, ty, clause.clone())?;
            output_encoding(cx, &ty, encoding.as_deref(), clause)?;
            Some(ty)
        }
        Err(e) => {
            cx.error(
                clause,
                format!("{}(): {e}", name.to_uppercase()),
                Some("write RETURNING type [FORMAT JSON] last".into()),
            );
            None
        }
    }
}

/// `Some` if the output `ENCODING` (when written) suits the RETURNING type `ty`, as the server
/// decides: bytea only, in UTF8 only (UTF16 and UTF32 are names it knows and refuses).
fn output_encoding(
    cx: &mut Ctx,
    ty: &TypeRef,
    encoding: Option<&str>,
    at: Range<usize>,
) -> Option<()> {
    let Some(encoding) = encoding else {
        return Some(());
    };
    let (message, hint) = if !matches!(encoding, "utf8" | "utf16" | "utf32") {
        (
            format!("unrecognized JSON encoding: {encoding}"),
            "write ENCODING UTF8, or leave it out",
        )
    } else if base(ty, cx.snap) != builtin("bytea") {
        (
            "cannot set JSON encoding for non-bytea output types".to_owned(),
            "leave out ENCODING, or return bytea",
        )
    } else if encoding != "utf8" {
        (
            "unsupported JSON encoding".to_owned(),
            "only UTF8 JSON encoding is supported",
        )
    } else {
        return Some(());
    };
    cx.error(at, message, Some(hint.into()));
    None
}

/// `ty` if a constructor can return it: JSON_SERIALIZE a string type or bytea, the others a
/// type json converts to (json, jsonb, bytea, a string type).
fn constructor_result(cx: &mut Ctx, name: &str, ty: TypeRef, at: Range<usize>) -> Option<TypeRef> {
    if name == "json_scalar" {
        cx.error(
            at,
            "JSON_SCALAR() has no RETURNING clause",
            Some("cast its result instead".into()),
        );
        return None;
    }
    let b = base(&ty, cx.snap);
    let string_or_bytea =
        b.array_dims == 0 && (b == builtin("bytea") || category(&b, cx.snap) == 'S');
    let json = b == builtin("json") || b == builtin("jsonb");
    if string_or_bytea || (json && name != "json_serialize") {
        return Some(ty);
    }
    let (message, hint) = if name == "json_serialize" {
        (
            format!(
                "cannot use type {} in RETURNING clause of JSON_SERIALIZE()",
                display(&ty)
            ),
            "return a string type or bytea",
        )
    } else {
        (
            format!("cannot cast type json to {}", display(&ty)),
            "return json, jsonb, bytea or a string type, and cast the result",
        )
    };
    cx.error(at, message, Some(hint.into()));
    None
}

#[cfg(test)]
mod tests {
    use qail_schema::snapshot::Snapshot;

    fn snapshot() -> Snapshot {
        let ddl = "CREATE DOMAIN small AS int4; CREATE TABLE t (j jsonb, n int4);".to_owned();
        let (mut snap, _) = qail_schema::ddl::from_sql(&[("t.sql".to_owned(), ddl)]);
        snap.postgres = Some("18".into());
        snap
    }

    #[test]
    fn the_returning_clause_and_a_jsonb_input_decide_the_result_type() {
        let snap = snapshot();
        let types = |sql: &str| match crate::analyze(sql, &snap) {
            Ok(a) => a
                .columns
                .iter()
                .map(|c| c.ty.name.clone())
                .collect::<Vec<_>>(),
            Err(d) => panic!("{sql}: {}", d[0].message),
        };
        assert_eq!(
            types(
                "SELECT JSON_VALUE(j, '$.a' RETURNING int4), JSON_QUERY(j, '$' RETURNING text), \
                 JSON_SERIALIZE(j RETURNING bytea), JSON_VALUE(j, '$' RETURNING small), \
                 JSON_EXISTS(j, '$' || '.a') FROM t"
            ),
            ["int4", "text", "bytea", "int4", "bool"]
        );
        assert_eq!(
            types(
                "SELECT JSON_OBJECT('a': j), JSON_ARRAY(n, j), JSON_ARRAY(n), \
                 JSON_OBJECT(RETURNING text) FROM t"
            ),
            ["jsonb", "jsonb", "json", "text"]
        );
        assert_eq!(
            types("SELECT JSON_ARRAYAGG(n RETURNING jsonb), JSON_OBJECTAGG('k': j) FROM t"),
            ["jsonb", "jsonb"]
        );
    }

    #[test]
    fn a_returning_type_the_server_refuses_is_refused() {
        let snap = snapshot();
        let refused = |sql: &str| match crate::analyze(sql, &snap) {
            Ok(_) => panic!("{sql} was accepted"),
            Err(d) => (d[0].message.clone(), d[0].hint.clone().unwrap_or_default()),
        };
        let (message, hint) = refused("SELECT JSON_SERIALIZE(j RETURNING jsonb) FROM t");
        assert_eq!(
            message,
            "cannot use type jsonb in RETURNING clause of JSON_SERIALIZE()"
        );
        assert!(hint.contains("a string type or bytea"), "{hint}");
        let (message, _) = refused("SELECT JSON_VALUE(j, '$' RETURNING record) FROM t");
        assert_eq!(message, "JSON_VALUE() cannot return type record");
        let (message, _) = refused("SELECT JSON_OBJECT('a': n RETURNING int4) FROM t");
        assert_eq!(message, "cannot cast type json to integer");
        let (message, _) = refused("SELECT JSON_SERIALIZE()");
        assert_eq!(message, "JSON_SERIALIZE() takes 1 argument, not 0");
        let (message, _) = refused("SELECT JSON_VALUE(j, t) FROM t");
        assert_eq!(
            message,
            "JSON path expression must be of type jsonpath, not of type t"
        );
    }
}
