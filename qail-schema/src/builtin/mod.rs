//! PostgreSQL's built-in types: catalog names, OIDs, and the SQL spellings that name them.

mod table;

use table::BUILTIN_TYPES;

use crate::snapshot::TypeRef;

/// The OID of the built-in type called `typname` (`int4`, `timestamptz`), if there is one.
pub fn oid(typname: &str) -> Option<u32> {
    find(typname).map(|(_, oid, _)| oid)
}

/// The OID of the array type whose elements are the built-in type `typname`.
pub fn array_oid(typname: &str) -> Option<u32> {
    find(typname).map(|(_, _, arr)| arr).filter(|arr| *arr != 0)
}

/// The catalog name of the built-in type with this OID (element or array type; an array OID
/// gives the element's name).
pub fn name_of(oid: u32) -> Option<&'static str> {
    BUILTIN_TYPES
        .iter()
        .find(|(_, o, a)| *o == oid || *a == oid)
        .map(|(n, _, _)| *n)
}

fn find(typname: &str) -> Option<(&'static str, u32, u32)> {
    BUILTIN_TYPES
        .binary_search_by(|(n, _, _)| (*n).cmp(typname))
        .ok()
        .and_then(|i| BUILTIN_TYPES.get(i).copied())
}

/// The catalog name for an SQL spelling of a built-in type, lower-case and without modifiers:
/// `integer` → `int4`, `character varying` → `varchar`, `timestamp with time zone` →
/// `timestamptz`. Unknown names come back unchanged.
pub fn canonical_name(sql_name: &str) -> &str {
    match sql_name {
        "int" | "integer" | "serial" | "serial4" => "int4",
        "smallint" | "smallserial" | "serial2" => "int2",
        "bigint" | "bigserial" | "serial8" => "int8",
        "boolean" => "bool",
        "real" => "float4",
        "double precision" | "float" => "float8",
        "character varying" | "char varying" => "varchar",
        "character" | "char" => "bpchar",
        "decimal" | "dec" => "numeric",
        "timestamp without time zone" => "timestamp",
        "timestamp with time zone" => "timestamptz",
        "time without time zone" => "time",
        "time with time zone" => "timetz",
        "bit varying" => "varbit",
        other => other,
    }
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
    fn table_is_sorted_for_binary_search() {
        assert!(BUILTIN_TYPES.windows(2).all(|w| w[0].0 < w[1].0));
    }

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
    }
}
