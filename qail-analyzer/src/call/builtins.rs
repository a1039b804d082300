//! The built-in functions: lookup in qail-catalog's `pg_proc` table (with its reviewed
//! nullability overlay), overload resolution, and PostgreSQL's polymorphic pseudo-types.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use qail_catalog::{Function, Null, Versions};

use crate::types::overload::{Pick, pick};
use crate::types::{array_of, builtin, common_type, element_of, is_enum, range_subtype};
use qail_schema::snapshot::{Snapshot, TypeRef};

/// One catalog signature, in the analyzer's notation: `text[]` for an array, a trailing
/// `...` on a VARIADIC argument (`any...`, `text...`).
#[derive(Debug, Clone)]
pub(crate) struct Row {
    args: Vec<String>,
    /// Arguments without a default.
    required: usize,
    ret: String,
    null: NullRule,
    /// `f` function, `a` aggregate, `w` window function, `s` set-returning.
    kind: char,
    /// The PostgreSQL major versions that have this signature.
    versions: Versions,
}

/// Calls that SQL spells like functions but `pg_proc` does not hold: the SQL value
/// functions (written without parentheses, which sqlparser reports as calls) and GROUPING.
const SYNTAX: &[(&str, &[&str], &str, NullRule, char)] = &[
    (
        "current_timestamp",
        &[],
        "timestamptz",
        NullRule::Never,
        'f',
    ),
    ("current_date", &[], "date", NullRule::Never, 'f'),
    ("current_time", &[], "timetz", NullRule::Never, 'f'),
    ("localtimestamp", &[], "timestamp", NullRule::Never, 'f'),
    ("localtime", &[], "time", NullRule::Never, 'f'),
    ("current_role", &[], "name", NullRule::Never, 'f'),
    ("current_catalog", &[], "name", NullRule::Never, 'f'),
    ("user", &[], "name", NullRule::Never, 'f'),
    ("grouping", &["any..."], "int4", NullRule::Never, 'a'),
];

/// Ordered-set aggregates, typed from their `WITHIN GROUP (ORDER BY …)` in `calls`.
pub(crate) const ORDERED_SET: &[&str] = &["percentile_cont", "percentile_disc", "mode"];

/// The pseudo-types [`Bound::bind`] understands.
const PSEUDO: &[&str] = &[
    "any",
    "anyelement",
    "anynonarray",
    "anyenum",
    "anyarray",
    "anyrange",
    "anycompatible",
    "anycompatiblearray",
    "anycompatiblenonarray",
];

/// The analyzer's spelling of a catalog type (`_text` → `text[]`), or `None` for a type no
/// SQL expression can have here (`internal`, `cstring`, multiranges' pseudo-types, …).
pub(crate) fn spelled(typname: &str) -> Option<String> {
    if PSEUDO.contains(&typname) || typname == "record" {
        return Some(typname.to_owned());
    }
    let row = qail_catalog::type_by_name(typname).or_else(|| {
        typname
            .strip_prefix('_')
            .and_then(qail_catalog::type_by_name)
            .filter(|t| t.array_name == typname)
    })?;
    if row.category == 'P' {
        return None;
    }
    Some(if row.name == typname {
        typname.to_owned()
    } else {
        format!("{}[]", row.name)
    })
}

/// Whether an analyzer type spelling is a pseudo-type (`anyelement`, `record`).
pub(crate) fn is_pseudo(spelled: &str) -> bool {
    PSEUDO.contains(&spelled) || spelled == "record"
}

/// A `pg_proc` row as the analyzer's [`Row`], or `None` when a type in it cannot occur.
fn from_catalog(f: &Function) -> Option<Row> {
    let mut args = f
        .args
        .iter()
        .map(|a| spelled(a))
        .collect::<Option<Vec<String>>>()?;
    if f.variadic {
        let last = args.last_mut()?;
        *last = match last.strip_suffix("[]") {
            Some(elem) => format!("{elem}..."),
            None => format!("{last}..."),
        };
    }
    let ret = spelled(f.result).or_else(|| (f.result == "void").then(|| "void".to_owned()))?;
    Some(Row {
        required: args.len().saturating_sub(usize::from(f.defaults)),
        args,
        ret,
        null: match f.null {
            Null::Strict => NullRule::Strict,
            Null::First => NullRule::First,
            Null::Never => NullRule::Never,
            Null::Format => NullRule::Format,
            Null::Maybe => NullRule::Always,
        },
        kind: if f.set { 's' } else { f.kind },
        versions: f.versions,
    })
}

/// The signatures of the function `name` (`None` when there is none), converted from the
/// catalog on first use and kept for the process: a compiler process converts only the
/// functions its queries call, not all of `pg_proc`.
fn rows(name: &str) -> Option<&'static [Row]> {
    static CACHE: OnceLock<Mutex<HashMap<&'static str, &'static [Row]>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    // Note: a panic elsewhere cannot leave the map half-written: entries are inserted whole.
    let mut cache = cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(found) = cache.get(name) {
        return (!found.is_empty()).then_some(*found);
    }
    let catalog = qail_catalog::functions(name);
    let mut built: Vec<Row> = catalog.iter().filter_map(from_catalog).collect();
    built.extend(
        SYNTAX
            .iter()
            .filter(|(n, ..)| *n == name)
            .map(|(_, args, ret, null, kind)| Row {
                args: args.iter().map(|a| (*a).to_owned()).collect(),
                required: args.len(),
                ret: (*ret).to_owned(),
                null: *null,
                kind: *kind,
                versions: Versions::ALL,
            }),
    );
    let key: &'static str = match catalog.first() {
        Some(f) => f.name,
        None => Box::leak(name.to_owned().into_boxed_str()),
    };
    let found: &'static [Row] = Box::leak(built.into_boxed_slice());
    cache.insert(key, found);
    (!found.is_empty()).then_some(found)
}

/// How a function's result can be NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NullRule {
    /// NULL only when an argument is NULL.
    Strict,
    /// NULL only when the first argument is NULL (`concat_ws`, `format`).
    First,
    /// Never NULL.
    Never,
    /// NULL only when an argument is NULL or the last argument, a format, is an empty string.
    Format,
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
    /// Only versions outside the target have a signature that accepts them: the versions
    /// that have it, and whether the target has no overload of the name at all.
    Version(Versions, bool),
    /// The versions of the target resolve it to different results (said how).
    Differs(String),
}

/// Whether the catalog knows a function of this name.
pub(crate) fn exists(name: &str) -> bool {
    rows(name).is_some()
}

/// Whether `name` is an aggregate function (ordered-set aggregates included).
pub(crate) fn is_aggregate(name: &str) -> bool {
    ORDERED_SET.contains(&name)
        || super::sqljson::AGGREGATES.contains(&name)
        || rows(name).is_some_and(|rows| rows.iter().any(|r| r.kind == 'a'))
}

/// Whether every built-in function of this name returns a set (`generate_series`, `unnest`).
pub(crate) fn returns_set(name: &str) -> bool {
    rows(name).is_some_and(|rows| rows.iter().all(|r| r.kind == 's'))
}

/// Whether `name` may be called with OVER: a window function or an aggregate.
pub(crate) fn takes_over(name: &str) -> bool {
    is_aggregate(name) || rows(name).is_some_and(|rows| rows.iter().any(|r| r.kind == 'w'))
}

/// Whether `name` returns a set (a row per element) when called in a select list.
pub(crate) fn is_set_returning(name: &str) -> bool {
    rows(name).is_some_and(|rows| rows.iter().all(|r| r.kind == 's'))
}

/// The candidate signatures for `name` with `argc` arguments that `keep` keeps.
fn candidates(name: &str, argc: usize, keep: impl Fn(&Row) -> bool) -> Vec<&'static Row> {
    let Some(rows) = rows(name) else {
        return Vec::new();
    };
    rows.iter()
        .filter(|r| keep(r))
        .filter(|r| {
            (r.required..=r.args.len()).contains(&argc)
                || r.args
                    .last()
                    .is_some_and(|a| a.ends_with("...") && argc >= r.args.len())
        })
        .collect()
}

/// Resolves `name(args)` as every PostgreSQL major version of `target` does; `None`
/// arguments are unknown. A call only other versions accept is [`CallError::Version`]; one
/// the versions resolve differently is [`CallError::Differs`].
pub(crate) fn resolve(
    name: &str,
    args: &[Option<&TypeRef>],
    snap: &Snapshot,
    target: Versions,
) -> Result<Resolved, CallError> {
    let Some(all) = rows(name) else {
        return Err(CallError::UnknownName);
    };
    // Note: most names have the same signatures in every version: one resolution.
    if all.iter().all(|r| r.versions.covers(target)) {
        return resolve_among(name, args, snap, |_| true).map(|(r, _)| r);
    }
    let mut answer: Option<(u8, Resolved)> = None;
    let (mut lacking, mut first_error) = (Versions::span(1, 0), None);
    for major in target.majors() {
        match resolve_among(name, args, snap, |r| r.versions.contains(major)) {
            Ok((r, _)) => match &answer {
                None => answer = Some((major, r)),
                Some((_, a)) if *a == r => {}
                Some((m, a)) => {
                    return Err(CallError::Differs(format!(
                        "returns {} on PostgreSQL {m} but {} on {major}",
                        crate::types::display(&a.result),
                        crate::types::display(&r.result)
                    )));
                }
            },
            Err(CallError::Ambiguous) => return Err(CallError::Ambiguous),
            Err(e) => {
                lacking = lacking.or(Versions::span(major, major));
                first_error.get_or_insert(e);
            }
        }
    }
    match (answer, first_error) {
        (Some((_, r)), None) => Ok(r),
        (_, e) => {
            let none_in_target = !all.iter().any(|r| r.versions.covers(target));
            let have = qail_catalog::Versions::ALL
                .majors()
                .filter(|m| {
                    !target.contains(*m)
                        && resolve_among(name, args, snap, |r| r.versions.contains(*m)).is_ok()
                })
                .fold(target.without(lacking), |v, m| v.or(Versions::span(m, m)));
            if have.is_empty() {
                Err(e.unwrap_or(CallError::NoMatch))
            } else {
                Err(CallError::Version(have, none_in_target))
            }
        }
    }
}

/// Resolves `name(args)` among the signatures `keep` keeps: the call and the versions that
/// have the chosen signature.
fn resolve_among(
    name: &str,
    args: &[Option<&TypeRef>],
    snap: &Snapshot,
    keep: impl Fn(&Row) -> bool,
) -> Result<(Resolved, Versions), CallError> {
    let based: Vec<Option<TypeRef>> = args.iter().map(|a| a.map(|t| base(t, snap))).collect();
    let args: Vec<Option<&TypeRef>> = based.iter().map(Option::as_ref).collect();
    let mut inst: Vec<(&Row, Vec<TypeRef>, TypeRef)> = candidates(name, args.len(), keep)
        .into_iter()
        .filter_map(|r| instantiate(r, &args, snap).map(|(p, ret)| (r, p, ret)))
        .collect();
    // Note: a variadic candidate whose expansion has a plain candidate's signature yields to
    // it, as in PostgreSQL (jsonb_delete(jsonb, text) over jsonb_delete(jsonb, VARIADIC
    // text[]) for one key).
    let variadic = |r: &Row| r.args.last().is_some_and(|a| a.ends_with("..."));
    let plain: Vec<Vec<TypeRef>> = inst
        .iter()
        .filter(|i| !variadic(i.0))
        .map(|i| i.1.clone())
        .collect();
    inst.retain(|i| !variadic(i.0) || !plain.contains(&i.1));
    let cands: Vec<Vec<TypeRef>> = inst.iter().map(|i| i.1.clone()).collect();
    match pick(&args, &cands, false, snap) {
        Pick::One(i) => {
            let (row, params, result) = inst.swap_remove(i);
            let resolved = Resolved {
                params,
                result,
                null: row.null,
                aggregate: row.kind == 'a',
                window: row.kind == 'w',
            };
            Ok((resolved, row.versions))
        }
        Pick::NoMatch => Err(CallError::NoMatch),
        Pick::Ambiguous => Err(CallError::Ambiguous),
    }
}

fn base(t: &TypeRef, snap: &Snapshot) -> TypeRef {
    crate::types::base(t, snap)
}

/// What the polymorphic arguments of one call bind.
#[derive(Default)]
struct Bound {
    elems: Vec<TypeRef>,
    range: Option<TypeRef>,
}

impl Bound {
    /// Binds one actual argument to its declared pseudo-type; `None` when it cannot bind.
    fn bind(&mut self, decl: &str, a: &TypeRef, snap: &Snapshot) -> Option<()> {
        match decl {
            "anyelement" | "anynonarray" | "anycompatible" | "anycompatiblenonarray" => {
                self.elems.push(a.clone());
            }
            "anyenum" if is_enum(a, snap) => self.elems.push(a.clone()),
            "anyenum" => return None,
            "anyarray" | "anycompatiblearray" => self.elems.push(element_of(a)?),
            "anyrange" => {
                self.elems.push(range_subtype(a, snap)?);
                self.range = Some(a.clone());
            }
            _ => {}
        }
        Some(())
    }
}

/// Substitutes pseudo-types with the concrete types the arguments bind them to.
fn instantiate(
    row: &Row,
    args: &[Option<&TypeRef>],
    snap: &Snapshot,
) -> Option<(Vec<TypeRef>, TypeRef)> {
    let decl = |i: usize| -> &str {
        let d = row
            .args
            .get(i)
            .or(row.args.last())
            .map_or("any", String::as_str);
        d.strip_suffix("...").unwrap_or(d)
    };
    let mut bound = Bound::default();
    for (i, a) in args.iter().enumerate() {
        if let Some(a) = a {
            bound.bind(decl(i), a, snap)?;
        }
    }
    let poly = if bound.elems.is_empty() {
        None
    } else {
        Some(common_type(&bound.elems, snap).ok()?)
    };
    if matches!(decl(0), "anynonarray" | "anycompatiblenonarray")
        && poly.as_ref().is_some_and(|p| p.array_dims > 0)
    {
        return None;
    }
    let concrete = |d: &str, actual: Option<&TypeRef>| -> Option<TypeRef> {
        Some(match d {
            "any" => actual.cloned().unwrap_or_else(|| builtin("text")),
            "anyelement"
            | "anynonarray"
            | "anycompatible"
            | "anycompatiblenonarray"
            | "anyenum" => poly.clone()?,
            "anyarray" | "anycompatiblearray" => array_of(poly.as_ref()?),
            "anyrange" => bound.range.clone()?,
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
    Some((params, concrete(&row.ret, None)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: &[&str]) -> Result<String, CallError> {
        let s = Snapshot::default();
        let types: Vec<TypeRef> = args.iter().map(|a| builtin(a)).collect();
        let refs: Vec<Option<&TypeRef>> = types.iter().map(Some).collect();
        resolve(name, &refs, &s, Versions::ALL).map(|r| crate::types::sql_name(&r.result))
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
    fn every_catalog_type_is_known() {
        let mut names: Vec<&str> = qail_catalog::FUNCTIONS.iter().map(|f| f.name).collect();
        names.extend(SYNTAX.iter().map(|(n, ..)| *n));
        names.dedup();
        let mut known = 0;
        for name in names {
            let Some(rows) = rows(name) else { continue };
            known += 1;
            for r in rows {
                for t in r.args.iter().chain(std::iter::once(&r.ret)) {
                    let t = t.trim_end_matches("...").trim_end_matches("[]");
                    assert!(
                        PSEUDO.contains(&t)
                            || matches!(t, "record" | "void")
                            || crate::types::type_oid(&builtin(t)).is_some(),
                        "{name}: unknown type {t}"
                    );
                }
                assert!("fawso".contains(r.kind), "{name}");
            }
        }
        assert!(known > 1500, "{known} names");
    }

    #[test]
    fn nullability_comes_from_the_overlay() {
        let s = Snapshot::default();
        let text = builtin("text");
        let null = |name: &str, args: &[&TypeRef]| {
            let refs: Vec<Option<&TypeRef>> = args.iter().copied().map(Some).collect();
            resolve(name, &refs, &s, Versions::ALL).map(|r| r.null)
        };
        assert_eq!(null("lower", &[&text]), Ok(NullRule::Strict));
        assert_eq!(null("regexp_match", &[&text, &text]), Ok(NullRule::Always));
        assert_eq!(null("substring", &[&text, &text]), Ok(NullRule::Always));
        assert_eq!(null("concat", &[&text]), Ok(NullRule::Never));
        let ts = builtin("timestamptz");
        assert_eq!(null("to_char", &[&ts, &text]), Ok(NullRule::Format));
    }

    #[test]
    fn defaults_polymorphism_and_ranges() {
        assert_eq!(call("make_interval", &[]).as_deref(), Ok("interval"));
        assert_eq!(
            call("make_interval", &["int4", "int4"]).as_deref(),
            Ok("interval")
        );
        assert_eq!(
            call("lag", &["numeric", "int4", "int4"]).as_deref(),
            Ok("numeric")
        );
        assert_eq!(call("lower", &["tstzrange"]).as_deref(), Ok("timestamptz"));
        assert_eq!(
            call("generate_series", &["numeric", "numeric"]).as_deref(),
            Ok("numeric")
        );
        assert_eq!(call("log", &["int4"]).as_deref(), Ok("float8"));
        assert!(is_set_returning("jsonb_array_elements"));
        assert!(!is_set_returning("lower"));
        assert!(is_aggregate("percentile_cont") && is_aggregate("grouping"));
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
