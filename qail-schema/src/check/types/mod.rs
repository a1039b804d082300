//! Built-in types: OIDs, categories, implicit and assignment casts, display names.
//!
//! The data mirrors PostgreSQL 15's `pg_type` and `pg_cast` for the built-in types the
//! analyzer reasons about.

pub(crate) mod overload;
pub(crate) mod written;

use crate::snapshot::{Snapshot, TypeRef, UserTypeKind};

/// (typname, oid, array oid, category, preferred, display name)
const BUILTINS: &[(&str, u32, u32, char, bool, &str)] = &[
    ("bool", 16, 1000, 'B', true, "boolean"),
    ("bytea", 17, 1001, 'U', false, "bytea"),
    ("char", 18, 1002, 'Z', false, "\"char\""),
    ("name", 19, 1003, 'S', false, "name"),
    ("int8", 20, 1016, 'N', false, "bigint"),
    ("int2", 21, 1005, 'N', false, "smallint"),
    ("int4", 23, 1007, 'N', false, "integer"),
    ("text", 25, 1009, 'S', true, "text"),
    ("oid", 26, 1028, 'N', true, "oid"),
    ("json", 114, 199, 'U', false, "json"),
    ("xml", 142, 143, 'U', false, "xml"),
    ("cidr", 650, 651, 'I', false, "cidr"),
    ("float4", 700, 1021, 'N', false, "real"),
    ("float8", 701, 1022, 'N', true, "double precision"),
    ("unknown", 705, 0, 'X', false, "unknown"),
    ("money", 790, 791, 'N', false, "money"),
    ("macaddr", 829, 1040, 'U', false, "macaddr"),
    ("inet", 869, 1041, 'I', true, "inet"),
    ("bpchar", 1042, 1014, 'S', false, "character"),
    ("varchar", 1043, 1015, 'S', false, "character varying"),
    ("date", 1082, 1182, 'D', false, "date"),
    ("time", 1083, 1183, 'D', false, "time without time zone"),
    (
        "timestamp",
        1114,
        1115,
        'D',
        false,
        "timestamp without time zone",
    ),
    (
        "timestamptz",
        1184,
        1185,
        'D',
        true,
        "timestamp with time zone",
    ),
    ("interval", 1186, 1187, 'T', true, "interval"),
    ("timetz", 1266, 1270, 'D', false, "time with time zone"),
    ("bit", 1560, 1561, 'V', false, "bit"),
    ("varbit", 1562, 1563, 'V', true, "bit varying"),
    ("numeric", 1700, 1231, 'N', false, "numeric"),
    ("regclass", 2205, 2210, 'N', false, "regclass"),
    ("record", 2249, 2287, 'P', false, "record"),
    ("void", 2278, 0, 'P', false, "void"),
    ("uuid", 2950, 2951, 'U', false, "uuid"),
    ("jsonb", 3802, 3807, 'U', false, "jsonb"),
    ("regproc", 24, 1008, 'N', false, "regproc"),
    ("tid", 27, 1010, 'U', false, "tid"),
    ("xid", 28, 1011, 'U', false, "xid"),
    ("cid", 29, 1012, 'U', false, "cid"),
    ("regtype", 2206, 2211, 'N', false, "regtype"),
    ("regnamespace", 4089, 4090, 'N', false, "regnamespace"),
    ("regrole", 4096, 4097, 'N', false, "regrole"),
    ("regconfig", 3734, 3735, 'N', false, "regconfig"),
    ("tsvector", 3614, 3643, 'U', false, "tsvector"),
    ("tsquery", 3615, 3645, 'U', false, "tsquery"),
    ("jsonpath", 4072, 4073, 'U', false, "jsonpath"),
    ("macaddr8", 774, 775, 'U', false, "macaddr8"),
    ("int4range", 3904, 3905, 'R', false, "int4range"),
    ("numrange", 3906, 3907, 'R', false, "numrange"),
    ("tsrange", 3908, 3909, 'R', false, "tsrange"),
    ("tstzrange", 3910, 3911, 'R', false, "tstzrange"),
    ("daterange", 3912, 3913, 'R', false, "daterange"),
    ("int8range", 3926, 3927, 'R', false, "int8range"),
];

/// The element type of each built-in range type.
const RANGES: &[(&str, &str)] = &[
    ("int4range", "int4"),
    ("int8range", "int8"),
    ("numrange", "numeric"),
    ("tsrange", "timestamp"),
    ("tstzrange", "timestamptz"),
    ("daterange", "date"),
];

/// The reg* types: integer-like handles for catalog objects.
const REG: &[&str] = &[
    "regclass",
    "regproc",
    "regtype",
    "regnamespace",
    "regrole",
    "regconfig",
];

/// Implicit casts between built-ins (`pg_cast.castcontext = 'i'`), as (from, to).
const IMPLICIT: &[(&str, &[&str])] = &[
    (
        "int2",
        &["int4", "int8", "float4", "float8", "numeric", "oid"],
    ),
    ("int4", &["int8", "float4", "float8", "numeric", "oid"]),
    ("int8", &["float4", "float8", "numeric", "oid"]),
    ("float4", &["float8"]),
    ("numeric", &["float4", "float8"]),
    ("text", &["bpchar", "varchar", "name", "regclass"]),
    ("varchar", &["text", "bpchar", "name", "regclass"]),
    ("bpchar", &["text", "varchar", "name"]),
    ("name", &["text", "varchar", "bpchar"]),
    ("char", &["text"]),
    ("date", &["timestamp", "timestamptz"]),
    ("time", &["interval", "timetz"]),
    ("timestamp", &["timestamptz"]),
    ("cidr", &["inet"]),
    ("bit", &["varbit"]),
    ("varbit", &["bit"]),
];

/// Assignment-only casts (`castcontext = 'a'`) beyond the implicit ones.
const ASSIGNMENT: &[(&str, &[&str])] = &[
    ("int8", &["int2", "int4"]),
    ("int4", &["int2", "bool", "char"]),
    ("float8", &["int2", "int4", "int8", "float4", "numeric"]),
    ("float4", &["int2", "int4", "int8", "numeric"]),
    ("numeric", &["int2", "int4", "int8"]),
    ("timestamptz", &["date", "time", "timestamp", "timetz"]),
    ("timestamp", &["date", "time"]),
    ("interval", &["time"]),
    ("timetz", &["time"]),
    ("json", &["jsonb"]),
    ("jsonb", &["json"]),
    ("inet", &["cidr"]),
    ("numeric", &["money"]),
    ("int4", &["money"]),
    ("int8", &["money"]),
    ("money", &["numeric"]),
    ("text", &["char"]),
];

/// Explicit-only casts (`castcontext = 'e'`) beyond the assignment ones. Conversions to and
/// from the string types (I/O conversion) are handled by rule, not listed.
const EXPLICIT: &[(&str, &[&str])] = &[
    ("int4", &["bool", "bit"]),
    ("int8", &["bit"]),
    ("bool", &["int4"]),
    ("bit", &["int4", "int8"]),
    (
        "jsonb",
        &[
            "bool", "numeric", "int2", "int4", "int8", "float4", "float8",
        ],
    ),
];

fn builtin_row(name: &str) -> Option<&'static (&'static str, u32, u32, char, bool, &'static str)> {
    BUILTINS.iter().find(|b| b.0 == name)
}

/// A built-in type by `typname`; panics in debug builds on a name missing from the table.
pub(crate) fn builtin(name: &str) -> TypeRef {
    debug_assert!(builtin_row(name).is_some(), "unknown builtin {name}");
    TypeRef {
        schema: "pg_catalog".into(),
        name: name.into(),
        oid: builtin_row(name).map(|b| b.1),
        array_dims: 0,
    }
}

/// The same type with one more array dimension.
pub(crate) fn array_of(t: &TypeRef) -> TypeRef {
    TypeRef {
        array_dims: t.array_dims + 1,
        ..t.clone()
    }
}

/// The element type of an array (one dimension less), if `t` is an array.
pub(crate) fn element_of(t: &TypeRef) -> Option<TypeRef> {
    (t.array_dims > 0).then(|| TypeRef {
        array_dims: t.array_dims - 1,
        ..t.clone()
    })
}

/// Whether the type is a built-in scalar with this name.
pub(crate) fn scalar_name(t: &TypeRef) -> Option<&str> {
    (t.array_dims == 0 && t.schema == "pg_catalog").then_some(t.name.as_str())
}

/// The OID PostgreSQL reports for a type (array OIDs included), for built-ins only.
pub fn type_oid(t: &TypeRef) -> Option<u32> {
    if t.schema != "pg_catalog" {
        return None;
    }
    let row = builtin_row(&t.name)?;
    match t.array_dims {
        0 => Some(row.1),
        _ => (row.2 != 0).then_some(row.2),
    }
}

/// PostgreSQL's type category letter (`pg_type.typcategory`).
pub(crate) fn category(t: &TypeRef, snap: &Snapshot) -> char {
    if t.array_dims > 0 {
        return 'A';
    }
    if t.schema == "pg_catalog" {
        return builtin_row(&t.name).map_or('U', |b| b.3);
    }
    match user_kind(t, snap) {
        Some(UserTypeKind::Enum { .. }) => 'E',
        Some(UserTypeKind::Composite { .. }) => 'C',
        Some(UserTypeKind::Range { .. }) => 'R',
        Some(UserTypeKind::Domain { base, .. }) => category(base, snap),
        None => 'U',
    }
}

pub(crate) fn is_preferred(t: &TypeRef) -> bool {
    t.array_dims == 0 && t.schema == "pg_catalog" && builtin_row(&t.name).is_some_and(|b| b.4)
}

pub(crate) fn user_kind<'s>(t: &TypeRef, snap: &'s Snapshot) -> Option<&'s UserTypeKind> {
    snap.types
        .iter()
        .find(|u| u.schema == t.schema && u.name == t.name)
        .map(|u| &u.kind)
}

pub(crate) fn is_enum(t: &TypeRef, snap: &Snapshot) -> bool {
    t.array_dims == 0 && matches!(user_kind(t, snap), Some(UserTypeKind::Enum { .. }))
}

/// `from` converts to `to` without an explicit cast (same type, binary coercion or implicit cast).
pub(crate) fn implicit(from: &TypeRef, to: &TypeRef, snap: &Snapshot) -> bool {
    if from == to {
        return true;
    }
    if from.schema != "pg_catalog"
        && let Some(UserTypeKind::Domain { base, .. }) = user_kind(from, snap)
    {
        return implicit(base, to, snap);
    }
    if from.array_dims > 0 && from.array_dims == to.array_dims {
        return implicit(&strip_array(from), &strip_array(to), snap);
    }
    match (scalar_name(from), scalar_name(to)) {
        (Some(f), Some(t)) if REG.contains(&t) => {
            matches!(f, "oid" | "int2" | "int4" | "int8") || listed(IMPLICIT, f, t)
        }
        (Some(f), Some("oid")) if REG.contains(&f) => true,
        (Some(f), Some(t)) => listed(IMPLICIT, f, t),
        _ => false,
    }
}

/// A domain's base type (followed through nested domains); other types unchanged.
pub(crate) fn base(t: &TypeRef, snap: &Snapshot) -> TypeRef {
    if t.schema != "pg_catalog"
        && let Some(UserTypeKind::Domain { base, .. }) = user_kind(t, snap)
    {
        let mut b = self::base(base, snap);
        b.array_dims += t.array_dims;
        return b;
    }
    t.clone()
}

/// Whether values of the type can never be NULL (a `NOT NULL` domain).
pub(crate) fn not_null_domain(t: &TypeRef, snap: &Snapshot) -> bool {
    t.array_dims == 0
        && matches!(
            user_kind(t, snap),
            Some(UserTypeKind::Domain { not_null: true, .. })
        )
}

/// The element type of a range type.
pub(crate) fn range_subtype(t: &TypeRef, snap: &Snapshot) -> Option<TypeRef> {
    if t.array_dims > 0 {
        return None;
    }
    if let Some((_, sub)) = scalar_name(t).and_then(|n| RANGES.iter().find(|r| r.0 == n)) {
        return Some(builtin(sub));
    }
    match user_kind(t, snap) {
        Some(UserTypeKind::Range { subtype }) => Some(subtype.clone()),
        Some(UserTypeKind::Domain { base, .. }) => range_subtype(base, snap),
        _ => None,
    }
}

/// Whether `CAST(x AS to)` has a path from `from`: an implicit, assignment or explicit cast,
/// an I/O conversion to or from a string type, or element-wise between arrays.
pub(crate) fn castable(from: &TypeRef, to: &TypeRef, snap: &Snapshot) -> bool {
    let (from, to) = (base(from, snap), base(to, snap));
    if from == to || assignable(&from, &to, snap) {
        return true;
    }
    if from.array_dims > 0 || to.array_dims > 0 {
        return from.array_dims == to.array_dims
            && castable(&strip_array(&from), &strip_array(&to), snap);
    }
    let string = |t: &TypeRef| category(t, snap) == 'S';
    if string(&from) || string(&to) || scalar_name(&to) == Some("record") {
        return true;
    }
    match (scalar_name(&from), scalar_name(&to)) {
        (Some(f), Some(t)) => listed(EXPLICIT, f, t) || (REG.contains(&f) && INT_LIKE.contains(&t)),
        _ => false,
    }
}

const INT_LIKE: &[&str] = &["int4", "int8", "oid"];

/// `from` converts to `to` in an INSERT or UPDATE target (assignment context).
pub(crate) fn assignable(from: &TypeRef, to: &TypeRef, snap: &Snapshot) -> bool {
    if implicit(from, to, snap) {
        return true;
    }
    if to.schema != "pg_catalog"
        && let Some(UserTypeKind::Domain { base, .. }) = user_kind(to, snap)
    {
        return assignable(from, base, snap);
    }
    match (scalar_name(from), scalar_name(to)) {
        // Note: PostgreSQL treats I/O conversion to a string type as an assignment cast.
        (_, Some("text" | "varchar" | "bpchar" | "name")) if from.array_dims == 0 => true,
        (Some(f), Some(t)) => listed(ASSIGNMENT, f, t),
        _ => {
            from.array_dims > 0 && from.array_dims == to.array_dims && {
                let (fe, te) = (strip_array(from), strip_array(to));
                assignable(&fe, &te, snap)
            }
        }
    }
}

fn strip_array(t: &TypeRef) -> TypeRef {
    TypeRef {
        array_dims: 0,
        ..t.clone()
    }
}

fn listed(table: &[(&str, &[&str])], from: &str, to: &str) -> bool {
    table.iter().any(|(f, tos)| *f == from && tos.contains(&to))
}

/// How PostgreSQL spells a type in messages: `integer`, `character varying`, `mood[]`.
pub(crate) fn display(t: &TypeRef) -> String {
    let base = match builtin_row(&t.name) {
        Some(row) if t.schema == "pg_catalog" => row.5.to_string(),
        _ if t.schema == "public" || t.schema == "pg_catalog" => t.name.clone(),
        _ => format!("{}.{}", t.schema, t.name),
    };
    format!(
        "{base}{}",
        "[]".repeat(usize::try_from(t.array_dims).unwrap_or(1))
    )
}

/// How a cast to the type is written in SQL: `int4`, `text[]`, `billing.currency`.
pub(crate) fn sql_name(t: &TypeRef) -> String {
    let base = if t.schema == "pg_catalog" || t.schema == "public" {
        t.name.clone()
    } else {
        format!("{}.{}", t.schema, t.name)
    };
    format!(
        "{base}{}",
        "[]".repeat(usize::try_from(t.array_dims).unwrap_or(1))
    )
}

/// The type PostgreSQL picks for a set of branch types (CASE, COALESCE, UNION…):
/// `select_common_type` — the first non-unknown type, moved to a preferred type of the same
/// category that all others convert to implicitly.
pub(crate) fn common_type(
    types: &[TypeRef],
    snap: &Snapshot,
) -> Result<TypeRef, Box<(TypeRef, TypeRef)>> {
    let Some(mut best) = types.first().cloned() else {
        return Ok(builtin("text"));
    };
    for t in &types[1..] {
        if *t == best {
            continue;
        }
        if category(t, snap) != category(&best, snap) {
            return Err(Box::new((best, t.clone())));
        }
        if !is_preferred(&best) && implicit(&best, t, snap) && !implicit(t, &best, snap) {
            best = t.clone();
        }
    }
    if let Some(bad) = types.iter().find(|t| !implicit(t, &best, snap)) {
        return Err(Box::new((best, bad.clone())));
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap() -> Snapshot {
        Snapshot::default()
    }

    #[test]
    fn oids_of_scalars_and_arrays() {
        assert_eq!(type_oid(&builtin("int4")), Some(23));
        assert_eq!(type_oid(&array_of(&builtin("text"))), Some(1009));
        assert_eq!(type_oid(&array_of(&builtin("uuid"))), Some(2951));
    }

    #[test]
    fn implicit_casts_follow_pg_cast() {
        let s = snap();
        assert!(implicit(&builtin("int4"), &builtin("int8"), &s));
        assert!(!implicit(&builtin("int8"), &builtin("int4"), &s));
        assert!(implicit(&builtin("varchar"), &builtin("text"), &s));
        assert!(implicit(&builtin("date"), &builtin("timestamptz"), &s));
        assert!(!implicit(&builtin("text"), &builtin("int4"), &s));
        assert!(assignable(&builtin("int8"), &builtin("int4"), &s));
        assert!(assignable(&builtin("uuid"), &builtin("text"), &s));
        assert!(!assignable(&builtin("text"), &builtin("int4"), &s));
    }

    #[test]
    fn common_types_promote() {
        let s = snap();
        let t = |n: &[&str]| common_type(&n.iter().map(|n| builtin(n)).collect::<Vec<_>>(), &s);
        assert_eq!(t(&["int4", "int8"]), Ok(builtin("int8")));
        assert_eq!(t(&["int4", "numeric"]), Ok(builtin("numeric")));
        assert_eq!(t(&["numeric", "float8"]), Ok(builtin("float8")));
        // Note: text and varchar cast implicitly both ways, so the first one wins.
        assert_eq!(t(&["varchar", "text"]), Ok(builtin("varchar")));
        assert_eq!(t(&["text", "varchar"]), Ok(builtin("text")));
        assert!(t(&["int4", "text"]).is_err());
    }

    #[test]
    fn explicit_casts_have_a_path() {
        let s = snap();
        let c = |a: &str, b: &str| castable(&builtin(a), &builtin(b), &s);
        assert!(c("text", "int4") && c("uuid", "text") && c("int4", "bool"));
        assert!(c("jsonb", "int4") && c("float8", "int2") && c("regclass", "oid"));
        assert!(!c("uuid", "date") && !c("int4", "uuid") && !c("timestamptz", "int8"));
        assert!(castable(
            &array_of(&builtin("text")),
            &array_of(&builtin("int4")),
            &s
        ));
        assert!(!castable(&array_of(&builtin("int4")), &builtin("int4"), &s));
    }

    #[test]
    fn ranges_and_arrays_coerce() {
        let s = snap();
        assert_eq!(
            range_subtype(&builtin("daterange"), &s),
            Some(builtin("date"))
        );
        assert_eq!(range_subtype(&builtin("date"), &s), None);
        assert!(implicit(
            &array_of(&builtin("numeric")),
            &array_of(&builtin("float8")),
            &s
        ));
        assert!(implicit(&builtin("int4"), &builtin("regclass"), &s));
    }

    #[test]
    fn displays_like_postgres() {
        assert_eq!(display(&builtin("int4")), "integer");
        assert_eq!(
            display(&array_of(&builtin("varchar"))),
            "character varying[]"
        );
    }
}
