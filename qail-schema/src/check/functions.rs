//! The built-in function catalog and function overload resolution.
//!
//! Each row is `(name, argument types, result type, nullability, kind)`. Argument and result
//! types are `typname`s or PostgreSQL's pseudo-types `any`, `anyelement`, `anynonarray`,
//! `anyenum`, `anyarray`, `anycompatible`, `anycompatiblearray`; a trailing `...` marks a
//! VARIADIC argument. Nullability: `S` strict (NULL only from a NULL argument), `N` never NULL,
//! `A` may be NULL whatever the arguments. Kind: `f` function, `a` aggregate, `w` window.

use super::resolve::{Pick, pick};
use super::types::{array_of, builtin, common_type, element_of, is_enum};
use crate::snapshot::{Snapshot, TypeRef};

type Row = (
    &'static str,
    &'static [&'static str],
    &'static str,
    char,
    char,
);

/// Types that have `min`/`max` aggregates.
const MINMAX: &[&str] = &[
    "int2",
    "int4",
    "int8",
    "float4",
    "float8",
    "numeric",
    "text",
    "bpchar",
    "date",
    "time",
    "timetz",
    "timestamp",
    "timestamptz",
    "interval",
    "money",
    "oid",
    "inet",
    "anyenum",
    "anyarray",
];

const CATALOG: &[Row] = &[
    ("count", &[], "int8", 'N', 'a'),
    ("count", &["any"], "int8", 'N', 'a'),
    ("sum", &["int2"], "int8", 'A', 'a'),
    ("sum", &["int4"], "int8", 'A', 'a'),
    ("sum", &["int8"], "numeric", 'A', 'a'),
    ("sum", &["numeric"], "numeric", 'A', 'a'),
    ("sum", &["float4"], "float4", 'A', 'a'),
    ("sum", &["float8"], "float8", 'A', 'a'),
    ("sum", &["interval"], "interval", 'A', 'a'),
    ("sum", &["money"], "money", 'A', 'a'),
    ("avg", &["int2"], "numeric", 'A', 'a'),
    ("avg", &["int4"], "numeric", 'A', 'a'),
    ("avg", &["int8"], "numeric", 'A', 'a'),
    ("avg", &["numeric"], "numeric", 'A', 'a'),
    ("avg", &["float4"], "float8", 'A', 'a'),
    ("avg", &["float8"], "float8", 'A', 'a'),
    ("avg", &["interval"], "interval", 'A', 'a'),
    ("bool_and", &["bool"], "bool", 'A', 'a'),
    ("bool_or", &["bool"], "bool", 'A', 'a'),
    ("every", &["bool"], "bool", 'A', 'a'),
    ("array_agg", &["anynonarray"], "anyarray", 'A', 'a'),
    ("string_agg", &["text", "text"], "text", 'A', 'a'),
    ("string_agg", &["bytea", "bytea"], "bytea", 'A', 'a'),
    ("jsonb_agg", &["anyelement"], "jsonb", 'A', 'a'),
    ("json_agg", &["anyelement"], "json", 'A', 'a'),
    ("jsonb_object_agg", &["any", "any"], "jsonb", 'A', 'a'),
    ("row_number", &[], "int8", 'N', 'w'),
    ("rank", &[], "int8", 'N', 'w'),
    ("dense_rank", &[], "int8", 'N', 'w'),
    ("percent_rank", &[], "float8", 'N', 'w'),
    ("cume_dist", &[], "float8", 'N', 'w'),
    ("ntile", &["int4"], "int4", 'A', 'w'),
    ("lag", &["anyelement"], "anyelement", 'A', 'w'),
    ("lag", &["anyelement", "int4"], "anyelement", 'A', 'w'),
    ("lead", &["anyelement"], "anyelement", 'A', 'w'),
    ("lead", &["anyelement", "int4"], "anyelement", 'A', 'w'),
    ("first_value", &["anyelement"], "anyelement", 'A', 'w'),
    ("last_value", &["anyelement"], "anyelement", 'A', 'w'),
    ("now", &[], "timestamptz", 'N', 'f'),
    ("current_timestamp", &[], "timestamptz", 'N', 'f'),
    ("current_date", &[], "date", 'N', 'f'),
    ("current_time", &[], "timetz", 'N', 'f'),
    ("localtimestamp", &[], "timestamp", 'N', 'f'),
    ("statement_timestamp", &[], "timestamptz", 'N', 'f'),
    ("clock_timestamp", &[], "timestamptz", 'N', 'f'),
    ("random", &[], "float8", 'N', 'f'),
    ("gen_random_uuid", &[], "uuid", 'N', 'f'),
    ("lower", &["text"], "text", 'S', 'f'),
    ("upper", &["text"], "text", 'S', 'f'),
    ("initcap", &["text"], "text", 'S', 'f'),
    ("length", &["text"], "int4", 'S', 'f'),
    ("length", &["bytea"], "int4", 'S', 'f'),
    ("char_length", &["text"], "int4", 'S', 'f'),
    ("octet_length", &["text"], "int4", 'S', 'f'),
    ("btrim", &["text"], "text", 'S', 'f'),
    ("btrim", &["text", "text"], "text", 'S', 'f'),
    ("ltrim", &["text"], "text", 'S', 'f'),
    ("rtrim", &["text"], "text", 'S', 'f'),
    ("substr", &["text", "int4"], "text", 'S', 'f'),
    ("substr", &["text", "int4", "int4"], "text", 'S', 'f'),
    ("left", &["text", "int4"], "text", 'S', 'f'),
    ("right", &["text", "int4"], "text", 'S', 'f'),
    ("replace", &["text", "text", "text"], "text", 'S', 'f'),
    ("reverse", &["text"], "text", 'S', 'f'),
    ("repeat", &["text", "int4"], "text", 'S', 'f'),
    ("lpad", &["text", "int4"], "text", 'S', 'f'),
    ("lpad", &["text", "int4", "text"], "text", 'S', 'f'),
    ("rpad", &["text", "int4"], "text", 'S', 'f'),
    ("rpad", &["text", "int4", "text"], "text", 'S', 'f'),
    ("strpos", &["text", "text"], "int4", 'S', 'f'),
    ("split_part", &["text", "text", "int4"], "text", 'S', 'f'),
    ("starts_with", &["text", "text"], "bool", 'S', 'f'),
    ("md5", &["text"], "text", 'S', 'f'),
    (
        "regexp_replace",
        &["text", "text", "text"],
        "text",
        'S',
        'f',
    ),
    (
        "regexp_replace",
        &["text", "text", "text", "text"],
        "text",
        'S',
        'f',
    ),
    ("concat", &["any..."], "text", 'N', 'f'),
    ("concat_ws", &["text", "any..."], "text", 'S', 'f'),
    ("format", &["text", "any..."], "text", 'S', 'f'),
    ("to_char", &["timestamptz", "text"], "text", 'S', 'f'),
    ("to_char", &["timestamp", "text"], "text", 'S', 'f'),
    ("to_char", &["interval", "text"], "text", 'S', 'f'),
    ("to_char", &["numeric", "text"], "text", 'S', 'f'),
    ("to_char", &["int4", "text"], "text", 'S', 'f'),
    ("to_char", &["int8", "text"], "text", 'S', 'f'),
    ("to_char", &["float8", "text"], "text", 'S', 'f'),
    ("to_date", &["text", "text"], "date", 'S', 'f'),
    ("to_timestamp", &["float8"], "timestamptz", 'S', 'f'),
    ("to_timestamp", &["text", "text"], "timestamptz", 'S', 'f'),
    ("to_number", &["text", "text"], "numeric", 'S', 'f'),
    ("abs", &["int2"], "int2", 'S', 'f'),
    ("abs", &["int4"], "int4", 'S', 'f'),
    ("abs", &["int8"], "int8", 'S', 'f'),
    ("abs", &["float4"], "float4", 'S', 'f'),
    ("abs", &["float8"], "float8", 'S', 'f'),
    ("abs", &["numeric"], "numeric", 'S', 'f'),
    ("round", &["float8"], "float8", 'S', 'f'),
    ("round", &["numeric"], "numeric", 'S', 'f'),
    ("round", &["numeric", "int4"], "numeric", 'S', 'f'),
    ("trunc", &["float8"], "float8", 'S', 'f'),
    ("trunc", &["numeric"], "numeric", 'S', 'f'),
    ("trunc", &["numeric", "int4"], "numeric", 'S', 'f'),
    ("ceil", &["float8"], "float8", 'S', 'f'),
    ("ceil", &["numeric"], "numeric", 'S', 'f'),
    ("floor", &["float8"], "float8", 'S', 'f'),
    ("floor", &["numeric"], "numeric", 'S', 'f'),
    ("sqrt", &["float8"], "float8", 'S', 'f'),
    ("sqrt", &["numeric"], "numeric", 'S', 'f'),
    ("power", &["float8", "float8"], "float8", 'S', 'f'),
    ("power", &["numeric", "numeric"], "numeric", 'S', 'f'),
    ("mod", &["int2", "int2"], "int2", 'S', 'f'),
    ("mod", &["int4", "int4"], "int4", 'S', 'f'),
    ("mod", &["int8", "int8"], "int8", 'S', 'f'),
    ("mod", &["numeric", "numeric"], "numeric", 'S', 'f'),
    (
        "date_trunc",
        &["text", "timestamptz"],
        "timestamptz",
        'S',
        'f',
    ),
    ("date_trunc", &["text", "timestamp"], "timestamp", 'S', 'f'),
    ("date_trunc", &["text", "interval"], "interval", 'S', 'f'),
    ("date_part", &["text", "timestamptz"], "float8", 'S', 'f'),
    ("date_part", &["text", "timestamp"], "float8", 'S', 'f'),
    ("date_part", &["text", "date"], "float8", 'S', 'f'),
    ("date_part", &["text", "interval"], "float8", 'S', 'f'),
    ("age", &["timestamptz", "timestamptz"], "interval", 'S', 'f'),
    ("age", &["timestamp", "timestamp"], "interval", 'S', 'f'),
    ("age", &["timestamptz"], "interval", 'S', 'f'),
    ("make_date", &["int4", "int4", "int4"], "date", 'S', 'f'),
    ("to_jsonb", &["anyelement"], "jsonb", 'S', 'f'),
    ("to_json", &["anyelement"], "json", 'S', 'f'),
    ("jsonb_build_object", &["any..."], "jsonb", 'N', 'f'),
    ("jsonb_build_array", &["any..."], "jsonb", 'N', 'f'),
    ("json_build_object", &["any..."], "json", 'N', 'f'),
    ("jsonb_typeof", &["jsonb"], "text", 'S', 'f'),
    ("jsonb_array_length", &["jsonb"], "int4", 'S', 'f'),
    (
        "jsonb_set",
        &["jsonb", "text[]", "jsonb"],
        "jsonb",
        'S',
        'f',
    ),
    (
        "jsonb_set",
        &["jsonb", "text[]", "jsonb", "bool"],
        "jsonb",
        'S',
        'f',
    ),
    ("jsonb_strip_nulls", &["jsonb"], "jsonb", 'S', 'f'),
    ("jsonb_pretty", &["jsonb"], "text", 'S', 'f'),
    ("array_length", &["anyarray", "int4"], "int4", 'A', 'f'),
    ("cardinality", &["anyarray"], "int4", 'S', 'f'),
    (
        "array_position",
        &["anycompatiblearray", "anycompatible"],
        "int4",
        'A',
        'f',
    ),
    (
        "array_append",
        &["anycompatiblearray", "anycompatible"],
        "anycompatiblearray",
        'N',
        'f',
    ),
    (
        "array_prepend",
        &["anycompatible", "anycompatiblearray"],
        "anycompatiblearray",
        'N',
        'f',
    ),
    (
        "array_remove",
        &["anycompatiblearray", "anycompatible"],
        "anycompatiblearray",
        'A',
        'f',
    ),
    (
        "array_cat",
        &["anycompatiblearray", "anycompatiblearray"],
        "anycompatiblearray",
        'A',
        'f',
    ),
    ("array_to_string", &["anyarray", "text"], "text", 'S', 'f'),
    ("string_to_array", &["text", "text"], "text[]", 'A', 'f'),
    ("unnest", &["anyarray"], "anyelement", 'A', 'f'),
    ("enum_first", &["anyenum"], "anyenum", 'N', 'f'),
    ("generate_series", &["int4", "int4"], "int4", 'N', 'f'),
    ("generate_series", &["int8", "int8"], "int8", 'N', 'f'),
    (
        "generate_series",
        &["int4", "int4", "int4"],
        "int4",
        'N',
        'f',
    ),
    (
        "generate_series",
        &["timestamptz", "timestamptz", "interval"],
        "timestamptz",
        'N',
        'f',
    ),
    ("current_user", &[], "name", 'N', 'f'),
    ("session_user", &[], "name", 'N', 'f'),
    ("current_schema", &[], "name", 'N', 'f'),
    ("enum_last", &["anyenum"], "anyenum", 'N', 'f'),
];

/// How a function's result can be NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NullRule {
    /// NULL only when an argument is NULL.
    Strict,
    /// Never NULL.
    Never,
    /// May be NULL whatever the arguments.
    Always,
}

/// A function call resolved against the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// Types the arguments are coerced to (unknown arguments and parameters take these).
    pub(crate) params: Vec<TypeRef>,
    pub(crate) result: TypeRef,
    pub(crate) null: NullRule,
    pub(crate) aggregate: bool,
    pub(crate) window: bool,
}

/// Why a call did not resolve.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum CallError {
    /// No function of this name at all.
    UnknownName,
    /// The name exists but no signature accepts these arguments.
    NoMatch,
    /// Several signatures accept them.
    Ambiguous,
}

/// Whether the catalog knows a function of this name.
pub(crate) fn exists(name: &str) -> bool {
    CATALOG.iter().any(|r| r.0 == name) || name == "min" || name == "max"
}

/// Whether `name` is an aggregate function.
pub(crate) fn is_aggregate(name: &str) -> bool {
    name == "min" || name == "max" || CATALOG.iter().any(|r| r.0 == name && r.4 == 'a')
}

/// The candidate signatures for `name` with `argc` arguments.
fn candidates(name: &str, argc: usize) -> Vec<Row> {
    let mut rows: Vec<Row> = CATALOG.iter().copied().filter(|r| r.0 == name).collect();
    if name == "min" || name == "max" {
        rows.extend(
            MINMAX
                .iter()
                .map(|t| (name_static(name), one(t), *t, 'A', 'a')),
        );
    }
    rows.retain(|r| {
        r.1.len() == argc
            || r.1
                .last()
                .is_some_and(|a| a.ends_with("...") && argc >= r.1.len())
    });
    rows
}

fn name_static(name: &str) -> &'static str {
    if name == "min" { "min" } else { "max" }
}

fn one(t: &'static str) -> &'static [&'static str] {
    MINMAX
        .iter()
        .position(|m| *m == t)
        .map_or(&[], |i| std::slice::from_ref(&MINMAX[i]))
}

/// Resolves `name(args)`; `None` arguments are unknown.
pub(crate) fn resolve(
    name: &str,
    args: &[Option<&TypeRef>],
    snap: &Snapshot,
) -> Result<Resolved, CallError> {
    if !exists(name) {
        return Err(CallError::UnknownName);
    }
    let rows = candidates(name, args.len());
    let mut inst: Vec<(Row, Vec<TypeRef>, TypeRef)> = rows
        .iter()
        .filter_map(|r| instantiate(r, args, snap).map(|(p, ret)| (*r, p, ret)))
        .collect();
    let cands: Vec<Vec<TypeRef>> = inst.iter().map(|i| i.1.clone()).collect();
    match pick(args, &cands, false, snap) {
        Pick::One(i) => {
            let (row, params, result) = inst.swap_remove(i);
            Ok(Resolved {
                params,
                result,
                null: match row.3 {
                    'S' => NullRule::Strict,
                    'N' => NullRule::Never,
                    _ => NullRule::Always,
                },
                aggregate: row.4 == 'a',
                window: row.4 == 'w',
            })
        }
        Pick::NoMatch => Err(CallError::NoMatch),
        Pick::Ambiguous => Err(CallError::Ambiguous),
    }
}

/// Substitutes pseudo-types with the concrete types the arguments bind them to.
fn instantiate(
    row: &Row,
    args: &[Option<&TypeRef>],
    snap: &Snapshot,
) -> Option<(Vec<TypeRef>, TypeRef)> {
    let decl = |i: usize| -> &str {
        let d = row.1.get(i).or(row.1.last()).copied().unwrap_or("any");
        d.strip_suffix("...").unwrap_or(d)
    };
    let mut bound: Vec<TypeRef> = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let Some(a) = a else { continue };
        match decl(i) {
            "anyelement" | "anynonarray" | "anycompatible" => bound.push((*a).clone()),
            "anyenum" if is_enum(a, snap) => bound.push((*a).clone()),
            "anyenum" => return None,
            "anyarray" | "anycompatiblearray" => bound.push(element_of(a)?),
            _ => {}
        }
    }
    let poly = if bound.is_empty() {
        None
    } else {
        Some(common_type(&bound, snap).ok()?)
    };
    if decl(0) == "anynonarray" && poly.as_ref().is_some_and(|p| p.array_dims > 0) {
        return None;
    }
    let concrete = |d: &str, actual: Option<&TypeRef>| -> Option<TypeRef> {
        Some(match d {
            "any" => actual.cloned().unwrap_or_else(|| builtin("text")),
            "anyelement" | "anynonarray" | "anycompatible" | "anyenum" => poly.clone()?,
            "anyarray" | "anycompatiblearray" => array_of(poly.as_ref()?),
            t => match t.strip_suffix("[]") {
                Some(e) => array_of(&builtin(e)),
                None => builtin(t),
            },
        })
    };
    let params = args
        .iter()
        .enumerate()
        .map(|(i, a)| concrete(decl(i), *a))
        .collect::<Option<Vec<_>>>()?;
    Some((params, concrete(row.2, None)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: &[&str]) -> Result<String, CallError> {
        let s = Snapshot::default();
        let types: Vec<TypeRef> = args.iter().map(|a| builtin(a)).collect();
        let refs: Vec<Option<&TypeRef>> = types.iter().map(Some).collect();
        resolve(name, &refs, &s).map(|r| crate::check::types::sql_name(&r.result))
    }

    #[test]
    fn aggregates_have_pg_result_types() {
        assert_eq!(call("sum", &["int4"]).as_deref(), Ok("int8"));
        assert_eq!(call("sum", &["int8"]).as_deref(), Ok("numeric"));
        assert_eq!(call("avg", &["int4"]).as_deref(), Ok("numeric"));
        assert_eq!(call("avg", &["float8"]).as_deref(), Ok("float8"));
        assert_eq!(call("count", &["uuid"]).as_deref(), Ok("int8"));
        assert_eq!(call("max", &["varchar"]).as_deref(), Ok("text"));
        assert_eq!(call("min", &["date"]).as_deref(), Ok("date"));
        assert_eq!(call("array_agg", &["uuid"]).as_deref(), Ok("uuid[]"));
    }

    #[test]
    fn scalar_functions() {
        assert_eq!(call("lower", &["varchar"]).as_deref(), Ok("text"));
        assert_eq!(call("length", &["text"]).as_deref(), Ok("int4"));
        assert_eq!(
            call("round", &["numeric", "int4"]).as_deref(),
            Ok("numeric")
        );
        assert_eq!(
            call("concat", &["text", "int4", "uuid"]).as_deref(),
            Ok("text")
        );
        assert_eq!(call("lower", &["int4"]), Err(CallError::NoMatch));
        assert_eq!(call("frobnicate", &[]), Err(CallError::UnknownName));
    }
}
