//! Operators: the built-in operator catalog (qail-catalog's generated `pg_operator` table),
//! binary operator resolution including the polymorphic cases (enums, arrays,
//! `anynonarray || text`), and the typing of operator expressions (`a op b`, `op a`,
//! AND/OR/NOT). A built-in operator that not every targeted version has is refused with the
//! version named, as a function is.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::OnceLock;

use sqlparser::ast::{BinaryOperator, Expr, UnaryOperator};

use crate::call::builtins::{is_pseudo, spelled};
use crate::ctx::Ctx;
use crate::diag::version_gap;
use crate::expr::{Ty, Typed, condition, expr, predicate, settle};
use crate::scope::Scope;
use crate::types::overload::{Pick, pick};
use crate::types::{
    base, builtin, category, display, element_of, implicit, is_enum, range_subtype, scalar_name,
    sql_name,
};
use qail_schema::snapshot::{Snapshot, TypeRef};

const COMPARE: &[&str] = &["=", "<>", "<", ">", "<=", ">="];

const INTS: &[&str] = &["int2", "int4", "int8"];

/// A catalog type name, `text[]` for an array.
fn named(t: &str) -> TypeRef {
    match t.strip_suffix("[]") {
        Some(e) => builtin(e).with_array_dims(1),
        None => builtin(t),
    }
}

/// The candidates of one operator name: operand types and result types, built once.
struct Candidates {
    operands: Vec<Vec<TypeRef>>,
    results: Vec<TypeRef>,
}

fn by_op(op: &str) -> Option<&'static Candidates> {
    index().candidates.get(op)
}

/// The built-in operators, indexed once per process.
struct Index {
    /// The binary operators whose operand and result types are concrete; the polymorphic
    /// ones (arrays, enums, ranges, records) are [`polymorphic`].
    candidates: HashMap<&'static str, Candidates>,
    /// Per operator name, the operand types of each row with both operands spelled as the
    /// analyzer types them (pseudo-types included), and the versions that have it.
    versions: HashMap<&'static str, Vec<(TypeRef, TypeRef, qail_catalog::Versions)>>,
}

/// Both indexes of the `pg_operator` table, built in one pass: every resolved operator asks
/// them (spelling the catalog's names per call was most of an analysis' time).
fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut types = CatalogTypes::default();
        let mut index = Index {
            candidates: HashMap::new(),
            versions: HashMap::new(),
        };
        for o in qail_catalog::OPERATORS {
            let (Some((left, left_pseudo)), Some((right, right_pseudo))) =
                (types.spelled(o.left), types.spelled(o.right))
            else {
                continue;
            };
            if !(left_pseudo || right_pseudo)
                && let Some((result, false)) = types.spelled(o.result)
            {
                let entry = index
                    .candidates
                    .entry(o.name)
                    .or_insert_with(|| Candidates {
                        operands: Vec::new(),
                        results: Vec::new(),
                    });
                entry.operands.push(vec![left.clone(), right.clone()]);
                entry.results.push(result);
            }
            index
                .versions
                .entry(o.name)
                .or_default()
                .push((left, right, o.versions));
        }
        index
    })
}

/// The analyzer's types of the catalog's type names, each spelled once: the operator table
/// names a few dozen types over hundreds of rows.
#[derive(Default)]
struct CatalogTypes(HashMap<&'static str, Option<(TypeRef, bool)>>);

impl CatalogTypes {
    /// The type a catalog `typname` spells and whether it is a pseudo-type, if the analyzer
    /// has it.
    fn spelled(&mut self, typname: &'static str) -> Option<(TypeRef, bool)> {
        self.0
            .entry(typname)
            .or_insert_with(|| spelled(typname).map(|s| (named(&s), is_pseudo(&s))))
            .clone()
    }
}

/// The snapshot's binary operators spelled `op` (an extension's: citext's `=` and `~~`,
/// pg_trgm's `%`, hstore's `->`), resolved together with the built-in ones as PostgreSQL
/// does with every operator on the search_path.
fn snapshot_operators(op: &str, snap: &Snapshot) -> Candidates {
    let mut c = Candidates {
        operands: Vec::new(),
        results: Vec::new(),
    };
    for o in snap.operators.iter().filter(|o| o.name == op) {
        let Some(left) = &o.left else { continue };
        if [left, &o.right, &o.result]
            .iter()
            .any(|t| scalar_name(t).is_some_and(is_pseudo))
        {
            continue;
        }
        c.operands.push(vec![left.clone(), o.right.clone()]);
        c.results.push(o.result.clone());
    }
    c
}

/// A resolved operator: the types its operands are coerced to, and its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OpSig {
    pub(crate) left: TypeRef,
    pub(crate) right: TypeRef,
    pub(crate) result: TypeRef,
}

/// Whether `op` is a comparison whose result is boolean for every operand pair.
pub(crate) fn is_comparison(op: &str) -> bool {
    COMPARE.contains(&op)
}

/// Resolves `left op right`; `None` operands are unknown. `Err(true)` when ambiguous.
pub(crate) fn resolve_binary(
    op: &str,
    l: Option<&TypeRef>,
    r: Option<&TypeRef>,
    snap: &Snapshot,
) -> Result<OpSig, bool> {
    // Note: PostgreSQL resolves operators on a domain as on its base type.
    let (lb, rb) = (l.map(|t| base(t, snap)), r.map(|t| base(t, snap)));
    let (l, r) = (lb.as_ref(), rb.as_ref());
    let own = snapshot_operators(op, snap);
    // Note: an operand whose type is not built in and has an operator of its own here
    // (hstore's `||`, ltree's `|| text`) takes that operator, not a polymorphic built-in one.
    let own_type = |t: Option<&TypeRef>| {
        t.is_some_and(|t| t.schema != "pg_catalog" && own.operands.iter().any(|o| o.contains(t)))
    };
    if !(own_type(l) || own_type(r))
        && let Some(sig) = polymorphic(op, l, r, snap)
    {
        return Ok(sig);
    }
    let mut merged;
    let c = match (by_op(op), own.operands.is_empty()) {
        (Some(c), true) => c,
        (None, true) => return Err(false),
        (None, false) => &own,
        (Some(c), false) => {
            merged = own;
            merged.operands.extend(c.operands.iter().cloned());
            merged.results.extend(c.results.iter().cloned());
            &merged
        }
    };
    match pick(&[l, r], &c.operands, true, snap) {
        Pick::One(i) => Ok(OpSig {
            left: c.operands[i][0].clone(),
            right: c.operands[i][1].clone(),
            result: c.results[i].clone(),
        }),
        Pick::NoMatch => Err(false),
        Pick::Ambiguous => Err(true),
    }
}

/// Operators over `anyenum`, `anyarray`, `anycompatible…` and `anynonarray || text`.
fn polymorphic(
    op: &str,
    l: Option<&TypeRef>,
    r: Option<&TypeRef>,
    snap: &Snapshot,
) -> Option<OpSig> {
    if op == "||"
        && let Some(sig) = concat_unknown(l, r, snap)
    {
        return Some(sig);
    }
    let (lt, rt) = match (l, r) {
        (Some(l), Some(r)) => (l.clone(), r.clone()),
        (Some(l), None) => (l.clone(), unknown_partner(op, l, snap)?),
        (None, Some(r)) => (unknown_partner(op, r, snap)?, r.clone()),
        (None, None) => return None,
    };
    let sig = |result: TypeRef| {
        Some(OpSig {
            left: lt.clone(),
            right: rt.clone(),
            result,
        })
    };
    let bool_t = builtin("bool");
    let same_poly = lt == rt
        && (lt.array_dims > 0
            || is_enum(&lt, snap)
            || is_citext(&lt, snap)
            || matches!(category(&lt, snap), 'C' | 'R'));
    if is_comparison(op) && same_poly {
        return sig(bool_t);
    }
    if let Some(result) = range_op(op, &lt, &rt, snap) {
        return sig(result);
    }
    if lt.array_dims > 0 && lt == rt && matches!(op, "@>" | "<@" | "&&") {
        return sig(bool_t);
    }
    if op == "||" {
        if lt.array_dims > 0 && (lt == rt || element_of(&lt).as_ref() == Some(&rt)) {
            return sig(lt.clone());
        }
        if rt.array_dims > 0 && element_of(&rt).as_ref() == Some(&lt) {
            return sig(rt.clone());
        }
        let text = builtin("text");
        let stringish = |t: &TypeRef| category(t, snap) == 'S';
        let plain = |t: &TypeRef| t.array_dims == 0 && scalar_name(t) != Some("unknown");
        if (stringish(&lt) && plain(&rt) && !stringish(&rt))
            || (stringish(&rt) && plain(&lt) && !stringish(&lt))
        {
            return Some(OpSig {
                left: lt.clone(),
                right: rt.clone(),
                result: text,
            });
        }
    }
    None
}

/// `'x' || 42` and `42 || 'x'`: an unknown operand next to a non-string scalar without a `||`
/// of its own is text (`text || anynonarray`).
fn concat_unknown(l: Option<&TypeRef>, r: Option<&TypeRef>, snap: &Snapshot) -> Option<OpSig> {
    let known = match (l, r) {
        (None, Some(k)) | (Some(k), None) => k,
        _ => return None,
    };
    let own =
        by_op("||").is_some_and(|c| c.operands.iter().any(|o| o[0] == *known && o[1] == *known));
    if known.array_dims > 0
        || own
        || category(known, snap) == 'S'
        || scalar_name(known) == Some("unknown")
    {
        return None;
    }
    let text = builtin("text");
    let (left, right) = if l.is_none() {
        (text.clone(), known.clone())
    } else {
        (known.clone(), text.clone())
    };
    Some(OpSig {
        left,
        right,
        result: text,
    })
}

/// The citext extension's type in a snapshot written before operators were pulled: it
/// defines the comparison operators over itself (compared case-insensitively). A newer
/// snapshot holds them in [`Snapshot::operators`].
fn is_citext(t: &TypeRef, snap: &Snapshot) -> bool {
    t.array_dims == 0 && t.is_citext() && snap.operators.is_empty()
}

/// For a polymorphic operand type, the type an unknown partner takes.
fn unknown_partner(op: &str, known: &TypeRef, snap: &Snapshot) -> Option<TypeRef> {
    (known.array_dims > 0
        || range_subtype(known, snap).is_some()
        || (known.schema != "pg_catalog" && (is_comparison(op) || op == "||")))
        .then(|| known.clone())
}

/// Operators over ranges: containment of a range or an element, overlap, adjacency, position,
/// union, intersection and difference.
fn range_op(op: &str, lt: &TypeRef, rt: &TypeRef, snap: &Snapshot) -> Option<TypeRef> {
    let bool_t = builtin("bool");
    let same = lt == rt && range_subtype(lt, snap).is_some();
    match op {
        "@>" if range_subtype(lt, snap).is_some_and(|s| same || implicit(rt, &s, snap)) => {
            Some(bool_t)
        }
        "<@" if range_subtype(rt, snap).is_some_and(|s| same || implicit(lt, &s, snap)) => {
            Some(bool_t)
        }
        "&&" | "<<" | ">>" | "&<" | "&>" | "-|-" if same => Some(bool_t),
        "+" | "*" | "-" if same => Some(lt.clone()),
        _ => None,
    }
}

/// Resolves a prefix operator (`-x`, `+x`, `~x`).
pub(crate) fn resolve_prefix(op: &str, t: &TypeRef) -> Option<TypeRef> {
    let name = scalar_name(t)?;
    let numeric = ["int2", "int4", "int8", "float4", "float8", "numeric"].contains(&name);
    match op {
        "-" | "+" if numeric || name == "interval" => Some(t.clone()),
        "~" if INTS.contains(&name) => Some(t.clone()),
        _ => None,
    }
}

pub(crate) fn binary(
    cx: &mut Ctx,
    sc: &Scope,
    l: &Expr,
    op: &BinaryOperator,
    r: &Expr,
    range: Range<usize>,
) -> Typed {
    if matches!(op, BinaryOperator::And | BinaryOperator::Or) {
        let word = if *op == BinaryOperator::And {
            "AND"
        } else {
            "OR"
        };
        let a = condition(cx, sc, l, word);
        let b = condition(cx, sc, r, word);
        let mut t = Typed::known(builtin("bool"), range);
        if a.is_error() || b.is_error() {
            t.ty = Ty::Error;
        }
        t.absorb(&a);
        t.absorb(&b);
        return t;
    }
    if let (Expr::Tuple(ls), Expr::Tuple(rs)) = (l, r) {
        return predicate::row_compare(cx, sc, ls, &op.to_string(), rs, range);
    }
    let a = expr(cx, sc, l);
    let b = expr(cx, sc, r);
    apply(cx, &op.to_string(), a, b, range)
}

/// Resolves `a op b` on typed operands and fixes pending parameters.
pub(crate) fn apply(
    cx: &mut Ctx,
    op: &str,
    mut a: Typed,
    mut b: Typed,
    range: Range<usize>,
) -> Typed {
    if a.is_error() || b.is_error() {
        return Typed::error(range);
    }
    match resolve_binary(op, a.arg(), b.arg(), cx.snap) {
        Ok(sig) => {
            if let Some(have) = builtin_versions(op, &sig)
                && !have.covers(cx.target)
            {
                let what = format!(
                    "operator {} {op} {}",
                    display(&sig.left),
                    display(&sig.right)
                );
                let (message, hint) = version_gap(&what, have, cx.target);
                cx.error(range.clone(), message, Some(hint));
                return Typed::error(range);
            }
            settle(cx, &mut a, &sig.left);
            settle(cx, &mut b, &sig.right);
            let mut t = Typed::known(sig.result, range);
            t.absorb(&a);
            t.absorb(&b);
            if matches!(op, "->" | "->>" | "#>" | "#>>") {
                t.nullable = true;
                t.why
                    .push(format!("{op} yields NULL for a missing key or index"));
            }
            t
        }
        Err(ambiguous) => {
            operator_error(cx, op, &a, &b, range.clone(), ambiguous);
            Typed::error(range)
        }
    }
}

/// The versions that have the built-in binary operator `op` with the operands of `sig`
/// (`None` when it is polymorphic or not built in: those follow their types' versions).
fn builtin_versions(op: &str, sig: &OpSig) -> Option<qail_catalog::Versions> {
    index()
        .versions
        .get(op)?
        .iter()
        .filter(|(left, right, _)| *left == sig.left && *right == sig.right)
        .map(|(_, _, versions)| *versions)
        .reduce(|a, b| a.or(b))
}

fn operator_error(
    cx: &mut Ctx,
    op: &str,
    a: &Typed,
    b: &Typed,
    range: Range<usize>,
    ambiguous: bool,
) {
    let show = |t: &Typed| t.arg().map_or_else(|| "unknown".to_string(), display);
    let reused = [a, b]
        .into_iter()
        .find(|t| t.param.is_some() && t.arg().is_some());
    let other = if reused.is_some_and(|r| std::ptr::eq(r, a)) {
        b
    } else {
        a
    };
    if let (Some(p), Some(want)) = (reused, other.arg()) {
        let n = p.param.unwrap_or(0);
        let msg = format!(
            "parameter ${n} is used as {} here but as {} elsewhere",
            display(want),
            show(p)
        );
        cx.error(
            p.range.clone(),
            msg,
            Some(format!(
                "use a separate parameter, or cast: ${n}::{}",
                sql_name(want)
            )),
        );
        return;
    }
    let (msg, hint) = if ambiguous {
        (
            format!("operator is not unique: {} {op} {}", show(a), show(b)),
            "add a cast to the unknown operand, e.g. $1::int4".to_string(),
        )
    } else {
        let hint = match (a.arg(), cx.sql.get(b.range.clone())) {
            (Some(l), Some(text)) if !text.is_empty() => {
                format!(
                    "add a cast so both sides have the same type, e.g. {text}::{}",
                    sql_name(l)
                )
            }
            _ => "add a cast so both sides have the same type".to_string(),
        };
        (
            format!("operator does not exist: {} {op} {}", show(a), show(b)),
            hint,
        )
    };
    cx.error(range, msg, Some(hint));
}

pub(crate) fn unary(
    cx: &mut Ctx,
    sc: &Scope,
    op: UnaryOperator,
    inner: &Expr,
    range: Range<usize>,
) -> Typed {
    if op == UnaryOperator::Not {
        let a = condition(cx, sc, inner, "NOT");
        let mut t = Typed::known(builtin("bool"), range);
        t.ty = if a.is_error() { Ty::Error } else { t.ty };
        t.absorb(&a);
        return t;
    }
    let a = expr(cx, sc, inner);
    let sym = op.to_string();
    let result = match &a.ty {
        Ty::Error => return Typed::error(range),
        Ty::Known(t) => resolve_prefix(&sym, t),
        _ => None,
    };
    match result {
        Some(ty) => {
            let mut t = Typed::known(ty, range);
            t.absorb(&a);
            t
        }
        None => {
            let have = a.arg().map_or_else(|| "unknown".into(), display);
            cx.error(
                range.clone(),
                format!("operator does not exist: {sym} {have}"),
                Some("add a cast to a numeric type, e.g. -$1::int4".into()),
            );
            Typed::error(range)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(op: &str, l: &str, r: &str) -> Option<String> {
        let s = Snapshot::default();
        let (l, r) = (builtin(l), builtin(r));
        resolve_binary(op, Some(&l), Some(&r), &s)
            .ok()
            .map(|sig| sig.result.name)
    }

    #[test]
    fn arithmetic_follows_pg() {
        assert_eq!(resolve("+", "int4", "int8").as_deref(), Some("int8"));
        assert_eq!(resolve("+", "int2", "int2").as_deref(), Some("int2"));
        assert_eq!(resolve("*", "int4", "numeric").as_deref(), Some("numeric"));
        assert_eq!(resolve("+", "int4", "float8").as_deref(), Some("float8"));
        assert_eq!(resolve("-", "date", "date").as_deref(), Some("int4"));
        assert_eq!(resolve("+", "date", "int4").as_deref(), Some("date"));
        assert_eq!(
            resolve("-", "timestamptz", "timestamptz").as_deref(),
            Some("interval")
        );
        assert_eq!(
            resolve("+", "date", "interval").as_deref(),
            Some("timestamp")
        );
        assert_eq!(resolve("%", "int4", "int8").as_deref(), Some("int8"));
    }

    #[test]
    fn comparisons_and_mismatches() {
        assert_eq!(resolve("=", "varchar", "text").as_deref(), Some("bool"));
        assert_eq!(resolve("<", "date", "timestamptz").as_deref(), Some("bool"));
        assert_eq!(resolve("=", "int4", "numeric").as_deref(), Some("bool"));
        assert_eq!(resolve("=", "text", "int4"), None);
        assert_eq!(resolve("=", "uuid", "text"), None);
        assert_eq!(resolve("=", "json", "json"), None);
    }

    #[test]
    fn unknown_operand_takes_other_type() {
        let s = Snapshot::default();
        let tz = builtin("timestamptz");
        let sig = resolve_binary("-", Some(&tz), None, &s).expect("resolves");
        assert_eq!(sig.right, tz);
        assert_eq!(sig.result, builtin("interval"));
    }

    #[test]
    fn citext_compares_with_citext_and_unknown() {
        let s = Snapshot::default();
        let citext = TypeRef {
            schema: "public".into(),
            name: "citext".into(),
            oid: None,
            array_dims: 0,
        };
        let sig = resolve_binary("=", Some(&citext), None, &s).expect("resolves");
        assert_eq!((&sig.right, sig.result.name.as_str()), (&citext, "bool"));
        assert!(resolve_binary("<", Some(&citext), Some(&citext), &s).is_ok());
        assert!(resolve_binary("=", Some(&citext), Some(&builtin("int4")), &s).is_err());
    }

    #[test]
    fn json_range_and_system_operators() {
        assert_eq!(resolve("#>>", "jsonb", "text").as_deref(), None);
        let s = Snapshot::default();
        let jsonb = builtin("jsonb");
        let sig = resolve_binary("#>>", Some(&jsonb), None, &s).expect("resolves");
        assert_eq!(
            (sig.right.array_dims, sig.result.name.as_str()),
            (1, "text")
        );
        assert_eq!(
            resolve("@>", "tstzrange", "timestamptz").as_deref(),
            Some("bool")
        );
        assert_eq!(resolve("<@", "date", "daterange").as_deref(), Some("bool"));
        assert_eq!(
            resolve("*", "int4range", "int4range").as_deref(),
            Some("int4range")
        );
        assert_eq!(resolve("=", "xid", "int4").as_deref(), Some("bool"));
        let i8 = builtin("int8");
        let sig = resolve_binary("||", None, Some(&i8), &s).expect("text || anynonarray");
        assert_eq!(
            (sig.left.name.as_str(), sig.result.name.as_str()),
            ("text", "text")
        );
    }

    #[test]
    fn concat_with_non_string() {
        assert_eq!(resolve("||", "text", "int4").as_deref(), Some("text"));
        assert_eq!(resolve("||", "varchar", "varchar").as_deref(), Some("text"));
    }
}
