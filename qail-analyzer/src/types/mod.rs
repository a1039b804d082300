//! Built-in types: OIDs, categories, implicit and assignment casts, display names.
//!
//! The data is qail-catalog's table generated from `pg_type` and `pg_cast`; this module adds
//! what the catalog does not hold: domains, user types, arrays and I/O conversions.

pub(crate) mod overload;
pub(crate) mod shape;
pub(crate) mod written;

use qail_catalog::CastContext;

use qail_schema::snapshot::{CastContext as SnapshotCast, Snapshot, TypeRef, UserTypeKind};

/// The catalog row of a built-in type.
fn builtin_row(name: &str) -> Option<&'static qail_catalog::Type> {
    qail_catalog::type_by_name(name)
}

/// The `pg_cast` context of the cast between two built-in types, if there is one.
fn cast_context(from: &str, to: &str) -> Option<CastContext> {
    qail_catalog::cast(from, to).map(|c| c.context)
}

/// A built-in type by `typname`; panics in debug builds on a name missing from the table.
pub(crate) fn builtin(name: &str) -> TypeRef {
    let row = builtin_row(name);
    debug_assert!(row.is_some(), "unknown builtin {name}");
    TypeRef {
        schema: "pg_catalog".into(),
        name: name.into(),
        oid: row.map(|b| b.oid),
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
        0 => Some(row.oid),
        _ => (row.array_oid != 0).then_some(row.array_oid),
    }
}

/// PostgreSQL's type category letter (`pg_type.typcategory`).
pub(crate) fn category(t: &TypeRef, snap: &Snapshot) -> char {
    if t.array_dims > 0 {
        return 'A';
    }
    if t.schema == "pg_catalog" {
        return builtin_row(&t.name).map_or('U', |b| b.category);
    }
    match user_kind(t, snap) {
        Some(UserTypeKind::Enum { .. }) => 'E',
        Some(UserTypeKind::Composite { .. }) => 'C',
        Some(UserTypeKind::Range { .. }) => 'R',
        Some(UserTypeKind::Domain { base, .. }) => category(base, snap),
        // Note: a table's or view's row type is composite.
        None if let Some(b) = snap.base_type(t) => b.category,
        None if snap
            .relations
            .iter()
            .any(|r| r.schema == t.schema && r.name == t.name) =>
        {
            'C'
        }
        None => 'U',
    }
}

pub(crate) fn is_preferred(t: &TypeRef) -> bool {
    t.array_dims == 0
        && t.schema == "pg_catalog"
        && builtin_row(&t.name).is_some_and(|b| b.preferred)
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
    // Note: every composite value is a record (row_to_json(t) over a table's whole row).
    if scalar_name(to) == Some("record") && category(from, snap) == 'C' {
        return true;
    }
    match (scalar_name(from), scalar_name(to)) {
        (Some(f), Some(t)) => cast_context(f, t) == Some(CastContext::Implicit),
        // Note: an extension's casts (citext → text) are the snapshot's.
        _ => snap.cast_context(from, to) == Some(SnapshotCast::Implicit),
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
    if let Some(row) = scalar_name(t).and_then(builtin_row)
        && !row.range_subtype.is_empty()
    {
        return Some(builtin(row.range_subtype));
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
    // Note: every type converts to and from a string type through its text form (I/O
    // conversion casts), arrays included.
    let string = |t: &TypeRef| t.array_dims == 0 && category(t, snap) == 'S';
    if string(&from) || string(&to) || (to.array_dims == 0 && scalar_name(&to) == Some("record")) {
        return true;
    }
    if from.array_dims > 0 || to.array_dims > 0 {
        return from.array_dims == to.array_dims
            && castable(&strip_array(&from), &strip_array(&to), snap);
    }
    // Note: a row value converts to a composite type field by field (`ROW(1, 'x')::pair`).
    if scalar_name(&from) == Some("record") && category(&to, snap) == 'C' {
        return true;
    }
    match (scalar_name(&from), scalar_name(&to)) {
        (Some(f), Some(t)) => cast_context(f, t).is_some(),
        _ => snap.cast_context(&from, &to).is_some(),
    }
}

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
        (Some(f), Some(t)) => cast_context(f, t).is_some_and(|c| c <= CastContext::Assignment),
        _ if snap
            .cast_context(from, to)
            .is_some_and(|c| c <= SnapshotCast::Assignment) =>
        {
            true
        }
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

/// How PostgreSQL spells a type in messages: `integer`, `character varying`, `mood[]`.
pub(crate) fn display(t: &TypeRef) -> String {
    let base = match builtin_row(&t.name) {
        Some(row) if t.schema == "pg_catalog" => row.display.to_string(),
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
