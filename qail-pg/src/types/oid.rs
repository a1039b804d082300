//! OIDs of PostgreSQL's built-in types, their array types and their names.
//!
//! The numbers are fixed by PostgreSQL (`src/include/catalog/pg_type.dat`); they live in
//! qail-catalog's table generated from `pg_type`, and this module reads them from there.

use super::Oid;

// Note: one constant per built-in type (`INT4`) and array type (`INT4_ARRAY`), and
// `FIRST_USER_OID`, generated into qail-catalog from pg_type; re-exported under their old names.
pub use qail_catalog::oid::*;

/// The array type whose elements are `elem` (`int4` → `int4[]`), for built-in types.
pub fn array_of(elem: Oid) -> Option<Oid> {
    qail_catalog::type_by_oid(elem)
        .map(|t| t.array_oid)
        .filter(|array| *array != 0)
}

/// The element type of the array type `array` (`int4[]` → `int4`), for built-in types.
pub fn element_of(array: Oid) -> Option<Oid> {
    qail_catalog::type_by_array_oid(array).map(|t| t.oid)
}

/// The `typname` of a built-in type, arrays included (`_int4`), for messages.
pub fn name(oid: Oid) -> Option<&'static str> {
    qail_catalog::type_by_oid(oid)
        .map(|t| t.name)
        .or_else(|| qail_catalog::type_by_array_oid(oid).map(|t| t.array_name))
}

/// A readable name for messages: `int4`, `int4[]`, or `type with OID 16385`.
pub(crate) fn describe(oid: Oid) -> String {
    if let Some(n) = element_of(oid).and_then(name) {
        return format!("{n}[]");
    }
    match name(oid) {
        Some(n) => n.to_owned(),
        None => format!("type with OID {oid}"),
    }
}

/// The Rust type to use for a PostgreSQL type, naming the Cargo feature it needs.
pub(crate) fn rust_hint(oid: Oid) -> Option<String> {
    let (elem, array) = match qail_catalog::type_by_array_oid(oid) {
        Some(elem) => (elem, true),
        None => (qail_catalog::type_by_oid(oid)?, false),
    };
    let rust = elem.rust?;
    let ty = if array {
        format!("Vec<{}>", rust.hint)
    } else {
        rust.hint.to_owned()
    };
    Some(
        if rust.feature.is_empty() || feature_enabled(rust.feature) {
            format!("`{ty}`")
        } else {
            format!("`{ty}` (enable the `{}` feature of qail)", rust.feature)
        },
    )
}

/// Whether a type-family feature of this crate is compiled in.
fn feature_enabled(feature: &str) -> bool {
    match feature {
        "json" => cfg!(feature = "json"),
        "uuid" => cfg!(feature = "uuid"),
        "decimal" => cfg!(feature = "decimal"),
        "chrono" => cfg!(feature = "chrono") || cfg!(feature = "time"),
        "net" => cfg!(feature = "net"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_and_elements_map_both_ways() {
        for t in qail_catalog::TYPES.iter().filter(|t| t.array_oid != 0) {
            assert_eq!(array_of(t.oid), Some(t.array_oid), "{}", t.name);
            assert_eq!(element_of(t.array_oid), Some(t.oid), "{}", t.name);
        }
        assert_eq!(array_of(INT4), Some(INT4_ARRAY));
        assert_eq!(element_of(JSONB_ARRAY), Some(JSONB));
        assert_eq!(array_of(UNKNOWN), None);
        assert_eq!(array_of(VOID), None);
        assert_eq!(element_of(INT4), None);
        assert_eq!(element_of(0), None);
    }

    #[test]
    fn names_are_typnames() {
        assert_eq!(name(INT4), Some("int4"));
        assert_eq!(name(INT4_ARRAY), Some("_int4"));
        assert_eq!(name(TIMESTAMPTZ_ARRAY), Some("_timestamptz"));
        assert_eq!(name(99_999), None);
        for t in qail_catalog::TYPES {
            assert_eq!(name(t.oid), Some(t.name));
            if t.array_oid != 0 {
                assert_eq!(name(t.array_oid), Some(format!("_{}", t.name).as_str()));
            }
        }
    }

    #[test]
    fn descriptions_read_well() {
        assert_eq!(describe(INT8), "int8");
        assert_eq!(describe(TEXT_ARRAY), "text[]");
        assert_eq!(describe(16_400), "type with OID 16400");
    }

    #[test]
    fn hints_name_the_rust_type() {
        assert_eq!(rust_hint(INT8).as_deref(), Some("`i64`"));
        assert_eq!(rust_hint(INT4_ARRAY).as_deref(), Some("`Vec<i32>`"));
        assert_eq!(rust_hint(16_400), None);
        let uuid = rust_hint(UUID).expect("uuid has a hint");
        assert!(uuid.contains("uuid::Uuid"), "{uuid}");
        assert_eq!(
            uuid.contains("enable the `uuid` feature"),
            !cfg!(feature = "uuid")
        );
    }
}
