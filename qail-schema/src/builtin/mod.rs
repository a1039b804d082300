//! PostgreSQL's built-in types: catalog names, OIDs, and the SQL spellings that name them,
//! read from qail-catalog's generated table; the system catalogs and `information_schema` views
//! as relations.

use crate::snapshot::TypeRef;

mod relations;

pub use relations::{SYSTEM_SCHEMAS, system_relation, system_relations};

/// The OID of the built-in type called `typname` (`int4`, `timestamptz`), if there is one.
pub fn oid(typname: &str) -> Option<u32> {
    qail_catalog::type_by_name(typname).map(|t| t.oid)
}

/// The OID of the array type whose elements are the built-in type `typname`.
pub fn array_oid(typname: &str) -> Option<u32> {
    qail_catalog::type_by_name(typname)
        .map(|t| t.array_oid)
        .filter(|arr| *arr != 0)
}

/// The catalog name of the built-in type with this OID (element or array type; an array OID
/// gives the element's name).
pub fn name_of(oid: u32) -> Option<&'static str> {
    qail_catalog::type_by_oid(oid)
        .or_else(|| qail_catalog::type_by_array_oid(oid))
        .map(|t| t.name)
}

/// The catalog name for an SQL spelling of a built-in type as a column type, lower-case and
/// without modifiers: `integer` → `int4`, `character varying` → `varchar`, `timestamp with
/// time zone` → `timestamptz`, `serial` → `int4`. Unknown names come back unchanged.
pub fn canonical_name(sql_name: &str) -> &str {
    qail_catalog::column_alias(sql_name).map_or(sql_name, |t| t.name)
}

impl TypeRef {
    /// A reference to the built-in type `typname` (a catalog name), with its OID when known.
    pub fn builtin(typname: &str) -> TypeRef {
        TypeRef {
            schema: "pg_catalog".to_owned(),
            name: typname.to_owned(),
            oid: oid(typname),
            array_dims: 0,
        }
    }

    /// The same type as an array with `dims` dimensions.
    pub fn with_array_dims(mut self, dims: u32) -> TypeRef {
        self.array_dims = dims;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_oids() {
        assert_eq!(oid("int4"), Some(23));
        assert_eq!(oid("text"), Some(25));
        assert_eq!(oid("timestamptz"), Some(1184));
        assert_eq!(array_oid("int4"), Some(1007));
        assert_eq!(name_of(1007), Some("int4"));
        assert_eq!(oid("mood"), None);
    }

    #[test]
    fn aliases() {
        assert_eq!(canonical_name("integer"), "int4");
        assert_eq!(canonical_name("character varying"), "varchar");
        assert_eq!(canonical_name("citext"), "citext");
        assert_eq!(canonical_name("smallserial"), "int2");
        assert_eq!(canonical_name("char"), "bpchar");
        assert_eq!(canonical_name("double precision"), "float8");
    }
}
