//! Functions in FROM: set-returning functions (`generate_series`, `unnest … WITH ORDINALITY`,
//! `jsonb_each`, `jsonb_to_recordset(…) AS x(a int, b text)`), user functions returning
//! `SETOF` or `TABLE (…)`, and column aliases over all of them.

use std::ops::Range;

use sqlparser::ast::{Expr, FunctionArg, FunctionArgExpr, ObjectName, TableAlias, TableFactor};

use crate::call::{self, named};
use crate::ctx::Ctx;
use crate::expr::{Fit, Ty, Typed, conform, expr};
use crate::scope::{Col, Rel, Scope, norm, parts};
use crate::types::{base, builtin, display, element_of, user_kind, written};
use qail_schema::snapshot::{RelationKind, TypeRef, UserTypeKind};

/// What a FROM-clause function call looks like.
struct Call<'a> {
    name: &'a ObjectName,
    args: &'a [FunctionArg],
    alias: Option<&'a TableAlias>,
    ordinality: bool,
    range: Range<usize>,
}

/// A FROM item that calls a function: `f(…)`, `LATERAL f(…)`, `UNNEST(…)`.
pub(crate) fn table_factor(cx: &mut Ctx, sc: &Scope, tf: &TableFactor) -> Option<Rel> {
    let range = cx.range(tf);
    match tf {
        TableFactor::Table {
            name,
            alias,
            args: Some(args),
            with_ordinality,
            ..
        } => {
            let call = Call {
                name,
                args: &args.args,
                alias: alias.as_ref(),
                ordinality: *with_ordinality,
                range,
            };
            factor(cx, sc, &call)
        }
        TableFactor::Function {
            name, args, alias, ..
        } => {
            let call = Call {
                name,
                args,
                alias: alias.as_ref(),
                ordinality: false,
                range,
            };
            factor(cx, sc, &call)
        }
        TableFactor::UNNEST {
            alias,
            array_exprs,
            with_ordinality,
            ..
        } => unnest(cx, sc, array_exprs, alias.as_ref(), *with_ordinality, range),
        _ => None,
    }
}

/// A function in FROM as a relation.
fn factor(cx: &mut Ctx, sc: &Scope, call: &Call) -> Option<Rel> {
    let ids = parts(call.name);
    let fname = ids.last().map(|i| norm(i)).unwrap_or_default();
    let schema = (ids.len() == 2).then(|| norm(ids[0]));
    let mut args = Vec::with_capacity(call.args.len());
    let named = call
        .args
        .iter()
        .any(|a| !matches!(a, FunctionArg::Unnamed(FunctionArgExpr::Expr(_))));
    if named && let Some(ordered) = named::positional(cx.snap, schema.as_deref(), &fname, call.args)
    {
        args = ordered;
    }
    let given = if args.is_empty() { call.args } else { &[] };
    for a in given {
        match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => args.push(e),
            _ => {
                cx.error(
                    call.range.clone(),
                    "named or * arguments of a function in FROM are not supported by the analyzer",
                    Some("pass the arguments by position".into()),
                );
                return None;
            }
        }
    }
    let mut row_type = None;
    let cols = match fname.as_str() {
        "jsonb_to_recordset" | "jsonb_to_record" | "json_to_recordset" | "json_to_record" => {
            let json = if fname.starts_with("jsonb") {
                "jsonb"
            } else {
                "json"
            };
            record_columns(cx, sc, &args, json, call)?
        }
        "jsonb_each" | "json_each" | "jsonb_each_text" | "json_each_text" => {
            each_columns(cx, sc, &args, &fname, call)?
        }
        "unnest" if args.len() > 1 => unnest_columns(cx, sc, &args)?,
        _ => {
            let (cols, row) = function_columns(cx, sc, schema.as_deref(), &fname, &args, call)?;
            row_type = row;
            cols
        }
    };
    let scalar = row_type.is_none() && scalar_result(cx, schema.as_deref(), &fname, &cols);
    let mut rel = relation(cols, &fname, call);
    rel.scalar = scalar && !call.ordinality;
    // Note: with ORDINALITY the whole row is a record.
    rel.row_type = row_type.filter(|_| !call.ordinality);
    Some(rel)
}

/// The fields of a composite type: a user composite type's, or a table's or view's columns
/// (its row type). None for any other type.
pub(crate) fn composite_fields(cx: &Ctx, ty: &TypeRef) -> Option<Vec<(String, TypeRef)>> {
    if ty.array_dims > 0 {
        return None;
    }
    if let Some(UserTypeKind::Composite { fields }) = user_kind(ty, cx.snap) {
        return Some(
            fields
                .iter()
                .map(|f| (f.name.clone(), f.ty.clone()))
                .collect(),
        );
    }
    cx.snap
        .relations
        .iter()
        .find(|r| r.schema == ty.schema && r.name == ty.name && r.kind != RelationKind::Sequence)
        .map(|r| {
            r.columns
                .iter()
                .map(|c| (c.name.clone(), c.ty.clone()))
                .collect()
        })
}

/// The name PostgreSQL gives the one result column of a catalog function in FROM that has
/// a named OUT parameter.
fn out_name(fname: &str) -> Option<&'static str> {
    match fname {
        "json_array_elements"
        | "json_array_elements_text"
        | "jsonb_array_elements"
        | "jsonb_array_elements_text" => Some("value"),
        _ => None,
    }
}

/// Whether a function in FROM returns a scalar (one column that is not a user function's
/// OUT/TABLE column): its whole-row reference is then that value.
fn scalar_result(cx: &Ctx, schema: Option<&str>, fname: &str, cols: &[Col]) -> bool {
    let special = [
        "jsonb_to_recordset",
        "jsonb_to_record",
        "json_to_recordset",
        "json_to_record",
        "jsonb_each",
        "json_each",
        "jsonb_each_text",
        "json_each_text",
    ];
    let out = cx.snap.functions.iter().any(|f| {
        f.name == fname && !f.out_columns.is_empty() && schema.is_none_or(|s| s == f.schema)
    });
    cols.len() == 1
        && !special.contains(&fname)
        && !out
        && user_kind(&cols[0].ty, cx.snap)
            .is_none_or(|k| !matches!(k, UserTypeKind::Composite { .. }))
}

/// Applies the alias (relation name, column names) and WITH ORDINALITY.
fn relation(mut cols: Vec<Col>, fname: &str, call: &Call) -> Rel {
    if call.ordinality {
        cols.push(col("ordinality", builtin("int8"), true));
    }
    let name = call
        .alias
        .map_or_else(|| fname.to_string(), |a| norm(&a.name));
    if let Some(a) = call.alias {
        for (c, new) in cols.iter_mut().zip(&a.columns) {
            c.name = norm(&new.name);
        }
    }
    let label = if name == fname {
        format!("{fname}()")
    } else {
        format!("{fname}() AS {name}")
    };
    Rel::new(name, None, label, cols)
}

fn col(name: &str, ty: TypeRef, not_null: bool) -> Col {
    Col {
        name: name.to_string(),
        ty,
        not_null,
        source: None,
        why: Vec::new(),
        shape: None,
    }
}

fn typed_args(cx: &mut Ctx, sc: &Scope, args: &[&Expr]) -> Option<Vec<Typed>> {
    let typed: Vec<Typed> = args.iter().map(|a| expr(cx, sc, a)).collect();
    (!typed.iter().any(Typed::is_error)).then_some(typed)
}

/// A catalog or user function: one column of its result type, the user function's
/// `TABLE (…)` / OUT columns, the fields of a composite result (then also its type, the
/// whole-row type), or a column definition list over `record`.
fn function_columns(
    cx: &mut Ctx,
    sc: &Scope,
    schema: Option<&str>,
    fname: &str,
    args: &[&Expr],
    call: &Call,
) -> Option<(Vec<Col>, Option<TypeRef>)> {
    let typed = typed_args(cx, sc, args)?;
    let argc = typed.len();
    let arg_types: Vec<Option<TypeRef>> = typed
        .iter()
        .map(|t| t.arg().map(|a| base(a, cx.snap)))
        .collect();
    let t = call::resolve_call(cx, schema, fname, typed, call.range.clone());
    let Ty::Known(ty) = t.ty else {
        return None;
    };
    let defs = call.alias.map(|a| a.columns.as_slice()).unwrap_or(&[]);
    let record = ty.array_dims == 0 && ty.schema == "pg_catalog" && ty.name == "record";
    if !record && defs.iter().any(|d| d.data_type.is_some()) {
        cx.error(
            call.range.clone(),
            format!(
                "a column definition list is only allowed for functions returning record, and {fname}() returns {}",
                display(&ty)
            ),
            Some("name the columns without types: AS t(a, b)".into()),
        );
        return None;
    }
    if let Some(f) = cx.snap.functions.iter().find(|f| {
        f.name == fname
            && !f.out_columns.is_empty()
            && schema.is_none_or(|s| s == f.schema)
            && f.args.len() >= argc
    }) {
        if defs.iter().any(|d| d.data_type.is_some()) {
            cx.error(
                call.range.clone(),
                format!(
                    "a column definition list is redundant for {fname}(), which has OUT parameters"
                ),
                Some("name the columns without types: AS t(a, b)".into()),
            );
            return None;
        }
        let refs: Vec<Option<&TypeRef>> = arg_types.iter().map(Option::as_ref).collect();
        let elem = call::polymorphic_element(&f.args[..argc], &refs).flatten();
        // Note: an unnamed OUT parameter is named `columnN`, N counting the OUT parameters.
        let cols = f
            .out_columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let name = if c.name.is_empty() {
                    format!("column{}", i + 1)
                } else {
                    c.name.clone()
                };
                nullable_col(
                    &name,
                    call::polymorphic_instance(&c.ty, elem.as_ref()),
                    fname,
                )
            })
            .collect();
        return Some((cols, None));
    }
    if record {
        if defs.is_empty() || defs.iter().any(|d| d.data_type.is_none()) {
            cx.error(
                call.range.clone(),
                format!("{fname}() returns record: it needs a column definition list"),
                Some("write AS x(a int4, b text) after the call".into()),
            );
            return None;
        }
        let mut cols = Vec::with_capacity(defs.len());
        for d in defs {
            let ty = written::resolve(cx, d.data_type.as_ref()?)?;
            cols.push(nullable_col(&norm(&d.name), ty, fname));
        }
        return Some((cols, None));
    }
    if let Some(fields) = composite_fields(cx, &ty) {
        // Note: a function returning a composite type yields one column per field.
        let cols = fields
            .iter()
            .map(|(name, ty)| nullable_col(name, ty.clone(), fname))
            .collect();
        return Some((cols, Some(ty)));
    }
    // Note: a scalar function's column is named by its OUT parameter, else by the table
    // alias when there is no column alias list, else by the function.
    let name = match (out_name(fname), call.alias) {
        (Some(out), _) => out.to_string(),
        (None, Some(a)) if a.columns.is_empty() => norm(&a.name),
        _ => fname.to_string(),
    };
    let mut c = col(&name, ty, !t.nullable);
    c.why = t.why;
    Some((vec![c], None))
}

fn nullable_col(name: &str, ty: TypeRef, fname: &str) -> Col {
    let mut c = col(name, ty, false);
    c.why.push(format!("{fname}() can return NULL in {name}"));
    c
}

/// `jsonb_to_recordset(x) AS r(a int, b text)`: the columns come from the definition list.
fn record_columns(
    cx: &mut Ctx,
    sc: &Scope,
    args: &[&Expr],
    json: &str,
    call: &Call,
) -> Option<Vec<Col>> {
    let mut typed = typed_args(cx, sc, args)?;
    for t in &mut typed {
        conform(cx, t, &builtin(json), Fit::Implicit, "argument");
    }
    let defs = call.alias.map(|a| a.columns.as_slice()).unwrap_or(&[]);
    if defs.is_empty() || defs.iter().any(|d| d.data_type.is_none()) {
        cx.error(
            call.range.clone(),
            "a function returning record needs a column definition list",
            Some("write AS x(a int4, b text) after the call".into()),
        );
        return None;
    }
    let mut cols = Vec::with_capacity(defs.len());
    for d in defs {
        let ty = written::resolve(cx, d.data_type.as_ref()?)?;
        cols.push(nullable_col(&norm(&d.name), ty, "a JSON record"));
    }
    Some(cols)
}

/// `jsonb_each(x)`: `key text` and `value` (jsonb, json or text).
fn each_columns(
    cx: &mut Ctx,
    sc: &Scope,
    args: &[&Expr],
    fname: &str,
    call: &Call,
) -> Option<Vec<Col>> {
    let json = if fname.starts_with("jsonb") {
        "jsonb"
    } else {
        "json"
    };
    let mut typed = typed_args(cx, sc, args)?;
    if typed.len() != 1 {
        cx.error(
            call.range.clone(),
            format!("{fname}() takes one argument"),
            Some("pass one json value".into()),
        );
        return None;
    }
    conform(cx, &mut typed[0], &builtin(json), Fit::Implicit, "argument");
    let value = if fname.ends_with("_text") {
        nullable_col("value", builtin("text"), fname)
    } else {
        col("value", builtin(json), true)
    };
    Some(vec![col("key", builtin("text"), true), value])
}

/// `unnest(a, b, …)`: one nullable column per array (shorter arrays are padded with NULL).
fn unnest_columns(cx: &mut Ctx, sc: &Scope, args: &[&Expr]) -> Option<Vec<Col>> {
    let typed = typed_args(cx, sc, args)?;
    let mut cols = Vec::with_capacity(typed.len());
    for t in typed {
        let Some(elem) = t.arg().and_then(element_of) else {
            cx.error(
                t.range.clone(),
                "unnest() needs an array argument",
                Some("cast the argument to an array type, e.g. $1::int4[]".into()),
            );
            return None;
        };
        cols.push(nullable_col("unnest", elem, "unnest"));
    }
    Some(cols)
}

/// `UNNEST(…)` as sqlparser's own table factor.
fn unnest(
    cx: &mut Ctx,
    sc: &Scope,
    exprs: &[Expr],
    alias: Option<&TableAlias>,
    ordinality: bool,
    range: Range<usize>,
) -> Option<Rel> {
    let refs: Vec<&Expr> = exprs.iter().collect();
    let name = ObjectName::from(vec![sqlparser::ast::Ident::new("unnest")]);
    let call = Call {
        name: &name,
        args: &[],
        alias,
        ordinality,
        range,
    };
    let mut cols = unnest_columns(cx, sc, &refs)?;
    let mut row_type = None;
    if cols.len() == 1
        && let Some(fields) = composite_fields(cx, &cols[0].ty)
    {
        // Note: unnest of an array of a composite type yields the fields as columns.
        row_type = Some(cols[0].ty.clone());
        cols = fields
            .iter()
            .map(|(name, ty)| nullable_col(name, ty.clone(), "unnest"))
            .collect();
    } else if let (1, Some(a)) = (cols.len(), alias)
        && a.columns.is_empty()
    {
        cols[0].name = norm(&a.name);
    }
    let mut rel = relation(cols, "unnest", &call);
    rel.scalar = row_type.is_none() && rel.cols.len() == 1 && !ordinality;
    rel.row_type = row_type.filter(|_| !ordinality);
    Some(rel)
}

#[cfg(test)]
mod tests {
    fn snapshot() -> crate::Snapshot {
        let ddl = "CREATE FUNCTION pairs(OUT a int4, OUT b text) RETURNS SETOF record \
                   LANGUAGE sql AS 'SELECT 1, ''x''';\n\
                   CREATE FUNCTION anything() RETURNS SETOF record LANGUAGE sql AS 'SELECT 1';"
            .to_owned();
        qail_schema::ddl::from_sql(&[("f.sql".to_owned(), ddl)]).0
    }

    fn first_error(sql: &str) -> Option<String> {
        crate::analyze(sql, &snapshot())
            .err()
            .map(|d| d[0].message.clone())
    }

    #[test]
    fn column_definition_lists_only_over_record() {
        let snap = snapshot();
        let ok = crate::analyze("SELECT * FROM anything() AS t(n int8, s text)", &snap)
            .expect("a record function with a definition list");
        let cols: Vec<(&str, &str)> = ok
            .columns
            .iter()
            .map(|c| (c.name.as_str(), c.ty.name.as_str()))
            .collect();
        assert_eq!(cols, [("n", "int8"), ("s", "text")]);
        assert!(
            first_error("SELECT * FROM anything()")
                .is_some_and(|m| m.contains("needs a column definition list"))
        );
        assert!(
            first_error("SELECT * FROM sin(3) AS t(f1 int8)")
                .is_some_and(|m| m.contains("only allowed for functions returning record"))
        );
        assert!(
            first_error("SELECT * FROM pairs() AS t(x int8, y int8)")
                .is_some_and(|m| m.contains("redundant"))
        );
        assert_eq!(first_error("SELECT * FROM pairs() AS t(x, y)"), None);
    }
}
