//! Type names as PostgreSQL's `format_type(oid, NULL)` spells them.

use std::borrow::Cow;

use qail_schema::builtin;
use qail_schema::snapshot::{Snapshot, TypeRef};

/// The name PostgreSQL's `format_type(type_oid, NULL)` gives the type: SQL-standard spellings
/// for the built-ins that have one (`integer`, `character varying`, `timestamp with time
/// zone`, `"char"`), `[]` after an array's element type, identifiers quoted where PostgreSQL
/// quotes them, and a user type's schema only when the type is not visible through the
/// snapshot's search_path (its schema is not on the path, or a type of the same name in an
/// earlier schema hides it; `pg_catalog` is searched first unless the path lists it).
///
/// PostgreSQL does not record array dimensions in a type, so `int4[][]` is `integer[]`, as
/// the server prints it.
///
/// ```
/// use cargo_qail::report::format_type;
/// use qail_schema::{Snapshot, snapshot::TypeRef};
/// let snap = Snapshot::new();
/// assert_eq!(format_type(&TypeRef::builtin("int4"), &snap), "integer");
/// assert_eq!(format_type(&TypeRef::builtin("timestamptz").with_array_dims(1), &snap),
///            "timestamp with time zone[]");
/// ```
pub fn format_type(ty: &TypeRef, snapshot: &Snapshot) -> String {
    let (name, array) = element(ty);
    let mut out = if ty.schema == "pg_catalog" {
        builtin_name(name).into_owned()
    } else if visible(&ty.schema, name, snapshot) {
        quote_ident(name).into_owned()
    } else {
        format!("{}.{}", quote_ident(&ty.schema), quote_ident(name))
    };
    if array {
        out.push_str("[]");
    }
    out
}

/// The element type's name and whether the type is an array. A catalog array name such as
/// `_record` counts as an array of `record`.
fn element(ty: &TypeRef) -> (&str, bool) {
    if ty.array_dims > 0 {
        return (&ty.name, true);
    }
    if ty.schema == "pg_catalog"
        && let Some(elem) = ty.name.strip_prefix('_')
        && builtin::array_oid(elem).is_some()
        && builtin::array_oid(elem) == builtin::oid(&ty.name)
    {
        return (elem, true);
    }
    (&ty.name, false)
}

/// A built-in (pg_catalog) type's name: the catalog's `format_type` spelling, else the name
/// quoted as an identifier.
fn builtin_name(name: &str) -> Cow<'_, str> {
    match qail_catalog::type_by_name(name) {
        Some(t) => Cow::Borrowed(t.display),
        None => quote_ident(name),
    }
}

/// Whether an unqualified `name` finds the type in `schema` (PostgreSQL's `TypeIsVisible`).
fn visible(schema: &str, name: &str, snapshot: &Snapshot) -> bool {
    for s in snapshot.effective_search_path() {
        if s == schema {
            return true;
        }
        if has_type(s, name, snapshot) {
            return false;
        }
    }
    false
}

/// Whether the snapshot (or, for pg_catalog, the built-in table) has a type `schema.name`;
/// every table and view has a row type of its own name.
fn has_type(schema: &str, name: &str, snapshot: &Snapshot) -> bool {
    if schema == "pg_catalog" {
        return builtin::oid(name).is_some();
    }
    snapshot
        .types
        .iter()
        .any(|t| t.schema == schema && t.name == name)
        || snapshot
            .relations
            .iter()
            .any(|r| r.schema == schema && r.name == name)
}

pub(crate) use qail_analyzer::quote_ident;

#[cfg(test)]
mod tests {
    use super::*;
    use qail_schema::snapshot::{UserType, UserTypeKind};

    fn user(schema: &str, name: &str) -> TypeRef {
        TypeRef {
            schema: schema.into(),
            name: name.into(),
            oid: None,
            array_dims: 0,
        }
    }

    fn enum_type(schema: &str, name: &str) -> UserType {
        UserType {
            schema: schema.into(),
            name: name.into(),
            kind: UserTypeKind::Enum { labels: vec![] },
        }
    }

    #[test]
    fn builtin_spellings() {
        let s = Snapshot::new();
        let f = |n: &str, dims: u32| format_type(&TypeRef::builtin(n).with_array_dims(dims), &s);
        assert_eq!(f("int8", 0), "bigint");
        assert_eq!(f("bpchar", 0), "character");
        assert_eq!(f("char", 1), "\"char\"[]");
        assert_eq!(f("text", 2), "text[]");
        assert_eq!(f("any", 0), "\"any\"");
        assert_eq!(f("_record", 0), "record[]");
        assert_eq!(f("jsonb", 1), "jsonb[]");
    }

    #[test]
    fn user_types_are_qualified_when_not_visible() {
        let mut s = Snapshot::new();
        s.types = vec![
            enum_type("billing", "currency"),
            enum_type("public", "mood"),
            enum_type("public", "Mood"),
            enum_type("billing", "mood"),
            enum_type("public", "name"),
        ];
        assert_eq!(format_type(&user("public", "mood"), &s), "mood");
        assert_eq!(format_type(&user("public", "Mood"), &s), "\"Mood\"");
        assert_eq!(
            format_type(&user("billing", "currency"), &s),
            "billing.currency"
        );
        // Hidden by pg_catalog.name, which is searched first.
        assert_eq!(format_type(&user("public", "name"), &s), "public.name");
        s.search_path = vec!["billing".into(), "public".into()];
        assert_eq!(format_type(&user("billing", "currency"), &s), "currency");
        // billing.mood comes first on the path and hides public.mood.
        assert_eq!(format_type(&user("public", "mood"), &s), "public.mood");
        assert_eq!(
            format_type(&user("Odd Schema", "user").with_array_dims(1), &s),
            "\"Odd Schema\".\"user\"[]"
        );
        s.search_path = vec!["public".into(), "pg_catalog".into()];
        assert_eq!(format_type(&user("public", "name"), &s), "name");
    }

    fn url() -> String {
        std::env::var("DATABASE_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
    }

    async fn connect() -> qail_pg::Connection {
        qail_pg::Connection::connect(&url())
            .await
            .expect("connect to PostgreSQL: start the server or set DATABASE_URL")
    }

    #[tokio::test]
    async fn builtin_names_match_the_servers_format_type() {
        let oids: Vec<u32> = (1..10_000)
            .filter(|o| builtin::name_of(*o).is_some())
            .collect();
        assert!(oids.len() > 150, "{} built-in OIDs", oids.len());
        let mut conn = connect().await;
        let rows = conn
            .query(
                "SELECT oid, format_type(oid, NULL) FROM pg_type WHERE oid = ANY($1)",
                &[&oids],
            )
            .await
            .expect("query pg_type");
        assert_eq!(rows.len(), oids.len(), "every built-in OID is in pg_type");
        let snap = Snapshot::new();
        let mut wrong = Vec::new();
        for row in &rows {
            let oid: u32 = row.get(0);
            let server: String = row.get(1);
            let name = builtin::name_of(oid).expect("an OID from the table");
            let dims = u32::from(builtin::oid(name) != Some(oid));
            let ours = format_type(&TypeRef::builtin(name).with_array_dims(dims), &snap);
            if ours != server {
                wrong.push(format!(
                    "{oid} ({name}, dims {dims}): ours {ours}, server {server}"
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
