//! The SQL/JSON functions written with SQL syntax rather than found in `pg_proc`:
//! the constructors `JSON_OBJECT('k': v, …)`, `JSON_ARRAY(…)` and the aggregates
//! `JSON_OBJECTAGG(k: v)`, `JSON_ARRAYAGG(v)` (PostgreSQL 16); the query functions
//! `JSON_VALUE`, `JSON_QUERY`, `JSON_EXISTS`, and `JSON_SCALAR`, `JSON_SERIALIZE`
//! (PostgreSQL 17). Typed as the server's Describe reports them: the `RETURNING` type when
//! there is one, else the default (`json`, `text`, `jsonb`, `boolean`; a constructor with a
//! `jsonb` argument is `jsonb`); a `PASSING` or `ON ERROR` clause is a syntax error the parser
//! reports.

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
use crate::types::{base, builtin, castable, category, display, written};
use qail_schema::snapshot::TypeRef;

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
    let returning = list.and_then(|l| {
        l.clauses.iter().find_map(|c| match c {
            FunctionArgumentClause::JsonReturningClause(r) => Some(&r.data_type),
            _ => None,
        })
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
    let arity = match name {
        "json_scalar" | "json_serialize" => Some(1),
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
    let constructor = matches!(name, "json_object" | "json_array") || aggregate;
    let result = match returning {
        Some(dt) => {
            let Some(ty) = written::resolve(cx, dt) else {
                return Some(Typed::error(range));
            };
            if let Some(hint) = refused_returning(cx, name, constructor, &ty) {
                cx.error(
                    range.clone(),
                    format!(
                        "{}() cannot return type {}",
                        name.to_uppercase(),
                        display(&ty)
                    ),
                    Some(hint),
                );
                return Some(Typed::error(range));
            }
            ty
        }
        // Note: a constructor with any `jsonb` input builds `jsonb` (the server's
        // transformJsonConstructorOutput).
        None if constructor
            && typed
                .iter()
                .any(|(a, _)| a.arg().is_some_and(|t| *t == builtin("jsonb"))) =>
        {
            builtin("jsonb")
        }
        None => builtin(result),
    };
    let mut t = Typed::known(result, range);
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

/// Why the server refuses `RETURNING ty` on the SQL/JSON function `name`, as a hint; `None`
/// when it takes it. `JSON_SERIALIZE` returns a string type or `bytea`; a constructor those,
/// `json` or `jsonb` (the analyzer types no other conversion of its JSON text); `JSON_VALUE`
/// and `JSON_QUERY` any type but a pseudo-type; `JSON_EXISTS` and `JSON_SCALAR` take no
/// `RETURNING`.
fn refused_returning(cx: &Ctx, name: &str, constructor: bool, ty: &TypeRef) -> Option<String> {
    let b = base(ty, cx.snap);
    let string = b.array_dims == 0 && (b == builtin("bytea") || category(&b, cx.snap) == 'S');
    let json = b == builtin("json") || b == builtin("jsonb");
    let then_cast = "and cast the result to the type wanted";
    match name {
        "json_exists" | "json_scalar" => Some(format!(
            "{}() takes no RETURNING clause; cast its result instead",
            name.to_uppercase()
        )),
        "json_serialize" => {
            (!string).then(|| format!("return a string type or bytea, {then_cast}"))
        }
        _ if constructor => (!string && !json)
            .then(|| format!("return json, jsonb, a string type or bytea, {then_cast}")),
        _ => (b.array_dims == 0 && category(&b, cx.snap) == 'P')
            .then(|| "a pseudo-type is no result type: name a concrete type".to_owned()),
    }
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
        assert_eq!(message, "JSON_SERIALIZE() cannot return type jsonb");
        assert!(hint.contains("a string type or bytea"), "{hint}");
        let (message, _) = refused("SELECT JSON_VALUE(j, '$' RETURNING record) FROM t");
        assert_eq!(message, "JSON_VALUE() cannot return type record");
        let (message, _) = refused("SELECT JSON_OBJECT('a': n RETURNING int4) FROM t");
        assert_eq!(message, "JSON_OBJECT() cannot return type integer");
        let (message, _) = refused("SELECT JSON_SERIALIZE()");
        assert_eq!(message, "JSON_SERIALIZE() takes 1 argument, not 0");
        let (message, _) = refused("SELECT JSON_VALUE(j, t) FROM t");
        assert_eq!(
            message,
            "JSON path expression must be of type jsonpath, not of type t"
        );
    }
}
