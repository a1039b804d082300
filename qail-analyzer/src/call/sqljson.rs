//! The SQL/JSON functions written with SQL syntax rather than found in `pg_proc`:
//! the constructors `JSON_OBJECT('k': v, …)`, `JSON_ARRAY(…)` and the aggregates
//! `JSON_OBJECTAGG(k: v)`, `JSON_ARRAYAGG(v)` (PostgreSQL 16); the query functions
//! `JSON_VALUE`, `JSON_QUERY`, `JSON_EXISTS`, and `JSON_SCALAR`, `JSON_SERIALIZE`
//! (PostgreSQL 17). Typed as the server's Describe reports their default `RETURNING` type
//! (`json`, `text`, `jsonb`, `boolean`); a `RETURNING`, `PASSING` or `ON ERROR` clause is a
//! syntax error the parser reports.

use std::ops::Range;

use qail_catalog::{NEWEST, Versions};
use sqlparser::ast::{
    Function, FunctionArg, FunctionArgExpr, FunctionArgOperator, FunctionArgumentClause,
    FunctionArguments,
};

use crate::ctx::Ctx;
use crate::diag::version_gap;
use crate::expr::{Typed, expr, settle};
use crate::scope::Scope;
use crate::types::builtin;

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
    let (since, result, aggregate) = match name {
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
    let mut t = Typed::known(builtin(result), range);
    t.name = Some(name.to_owned());
    match name {
        // Note: a constructor builds a value from any input (a NULL value is `null` or left out).
        "json_object" | "json_array" => {}
        _ if aggregate => {
            t.nullable = true;
            t.why.push(format!(
                "{}() is NULL when there are no input rows",
                name.to_uppercase()
            ));
        }
        "json_scalar" | "json_serialize" => typed.iter().for_each(|(a, _)| t.absorb(a)),
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
