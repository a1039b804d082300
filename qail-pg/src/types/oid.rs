//! OIDs of PostgreSQL's built-in types, their array types and their names.
//!
//! The numbers are fixed by PostgreSQL (`src/include/catalog/pg_type.dat`) and were checked
//! against a running server with
//! `SELECT oid, typname, typarray FROM pg_type WHERE oid < 10000 ORDER BY oid`.

use super::Oid;

/// `bool`
pub const BOOL: Oid = 16;
/// `bytea`
pub const BYTEA: Oid = 17;
/// `"char"`, a single byte
pub const CHAR: Oid = 18;
/// `name`, the 63-byte identifier type
pub const NAME: Oid = 19;
/// `int8` (`bigint`)
pub const INT8: Oid = 20;
/// `int2` (`smallint`)
pub const INT2: Oid = 21;
/// `int4` (`integer`)
pub const INT4: Oid = 23;
/// `regproc`
pub const REGPROC: Oid = 24;
/// `text`
pub const TEXT: Oid = 25;
/// `oid`
pub const OID: Oid = 26;
/// `json`
pub const JSON: Oid = 114;
/// `cidr`
pub const CIDR: Oid = 650;
/// `float4` (`real`)
pub const FLOAT4: Oid = 700;
/// `float8` (`double precision`)
pub const FLOAT8: Oid = 701;
/// `unknown`, the type of an untyped literal
pub const UNKNOWN: Oid = 705;
/// `macaddr`
pub const MACADDR: Oid = 829;
/// `inet`
pub const INET: Oid = 869;
/// `bpchar` (`char(n)`)
pub const BPCHAR: Oid = 1042;
/// `varchar`
pub const VARCHAR: Oid = 1043;
/// `date`
pub const DATE: Oid = 1082;
/// `time` (without time zone)
pub const TIME: Oid = 1083;
/// `timestamp` (without time zone)
pub const TIMESTAMP: Oid = 1114;
/// `timestamptz`
pub const TIMESTAMPTZ: Oid = 1184;
/// `interval`
pub const INTERVAL: Oid = 1186;
/// `numeric`
pub const NUMERIC: Oid = 1700;
/// `regclass`
pub const REGCLASS: Oid = 2205;
/// `regtype`
pub const REGTYPE: Oid = 2206;
/// `record`, an anonymous row type
pub const RECORD: Oid = 2249;
/// `void`, the result of a function returning nothing
pub const VOID: Oid = 2278;
/// `uuid`
pub const UUID: Oid = 2950;
/// `jsonb`
pub const JSONB: Oid = 3802;

/// `bool[]`
pub const BOOL_ARRAY: Oid = 1000;
/// `bytea[]`
pub const BYTEA_ARRAY: Oid = 1001;
/// `"char"[]`
pub const CHAR_ARRAY: Oid = 1002;
/// `name[]`
pub const NAME_ARRAY: Oid = 1003;
/// `int2[]`
pub const INT2_ARRAY: Oid = 1005;
/// `int4[]`
pub const INT4_ARRAY: Oid = 1007;
/// `regproc[]`
pub const REGPROC_ARRAY: Oid = 1008;
/// `text[]`
pub const TEXT_ARRAY: Oid = 1009;
/// `bpchar[]`
pub const BPCHAR_ARRAY: Oid = 1014;
/// `varchar[]`
pub const VARCHAR_ARRAY: Oid = 1015;
/// `int8[]`
pub const INT8_ARRAY: Oid = 1016;
/// `float4[]`
pub const FLOAT4_ARRAY: Oid = 1021;
/// `float8[]`
pub const FLOAT8_ARRAY: Oid = 1022;
/// `oid[]`
pub const OID_ARRAY: Oid = 1028;
/// `macaddr[]`
pub const MACADDR_ARRAY: Oid = 1040;
/// `inet[]`
pub const INET_ARRAY: Oid = 1041;
/// `timestamp[]`
pub const TIMESTAMP_ARRAY: Oid = 1115;
/// `date[]`
pub const DATE_ARRAY: Oid = 1182;
/// `time[]`
pub const TIME_ARRAY: Oid = 1183;
/// `timestamptz[]`
pub const TIMESTAMPTZ_ARRAY: Oid = 1185;
/// `interval[]`
pub const INTERVAL_ARRAY: Oid = 1187;
/// `json[]`
pub const JSON_ARRAY: Oid = 199;
/// `numeric[]`
pub const NUMERIC_ARRAY: Oid = 1231;
/// `cidr[]`
pub const CIDR_ARRAY: Oid = 651;
/// `regclass[]`
pub const REGCLASS_ARRAY: Oid = 2210;
/// `regtype[]`
pub const REGTYPE_ARRAY: Oid = 2211;
/// `record[]`
pub const RECORD_ARRAY: Oid = 2287;
/// `uuid[]`
pub const UUID_ARRAY: Oid = 2951;
/// `jsonb[]`
pub const JSONB_ARRAY: Oid = 3807;

/// The first OID PostgreSQL hands out to user-defined objects (`FirstNormalObjectId`).
/// Types at or above it (enums, domains, extension types such as `citext`) differ per database.
pub const FIRST_USER_OID: Oid = 16384;

/// One row of the built-in table: element OID, array OID (0 if none), `typname`.
const TABLE: &[(Oid, Oid, &str)] = &[
    (BOOL, BOOL_ARRAY, "bool"),
    (BYTEA, BYTEA_ARRAY, "bytea"),
    (CHAR, CHAR_ARRAY, "char"),
    (NAME, NAME_ARRAY, "name"),
    (INT8, INT8_ARRAY, "int8"),
    (INT2, INT2_ARRAY, "int2"),
    (INT4, INT4_ARRAY, "int4"),
    (REGPROC, REGPROC_ARRAY, "regproc"),
    (TEXT, TEXT_ARRAY, "text"),
    (OID, OID_ARRAY, "oid"),
    (JSON, JSON_ARRAY, "json"),
    (CIDR, CIDR_ARRAY, "cidr"),
    (FLOAT4, FLOAT4_ARRAY, "float4"),
    (FLOAT8, FLOAT8_ARRAY, "float8"),
    (UNKNOWN, 0, "unknown"),
    (MACADDR, MACADDR_ARRAY, "macaddr"),
    (INET, INET_ARRAY, "inet"),
    (BPCHAR, BPCHAR_ARRAY, "bpchar"),
    (VARCHAR, VARCHAR_ARRAY, "varchar"),
    (DATE, DATE_ARRAY, "date"),
    (TIME, TIME_ARRAY, "time"),
    (TIMESTAMP, TIMESTAMP_ARRAY, "timestamp"),
    (TIMESTAMPTZ, TIMESTAMPTZ_ARRAY, "timestamptz"),
    (INTERVAL, INTERVAL_ARRAY, "interval"),
    (NUMERIC, NUMERIC_ARRAY, "numeric"),
    (REGCLASS, REGCLASS_ARRAY, "regclass"),
    (REGTYPE, REGTYPE_ARRAY, "regtype"),
    (RECORD, RECORD_ARRAY, "record"),
    (VOID, 0, "void"),
    (UUID, UUID_ARRAY, "uuid"),
    (JSONB, JSONB_ARRAY, "jsonb"),
];

/// The array type whose elements are `elem` (`int4` → `int4[]`), for built-in types.
pub fn array_of(elem: Oid) -> Option<Oid> {
    TABLE
        .iter()
        .find(|row| row.0 == elem && row.1 != 0)
        .map(|row| row.1)
}

/// The element type of the array type `array` (`int4[]` → `int4`), for built-in types.
pub fn element_of(array: Oid) -> Option<Oid> {
    TABLE
        .iter()
        .find(|row| row.1 == array && row.1 != 0)
        .map(|row| row.0)
}

/// The `typname` of a built-in type, arrays included (`_int4`), for messages.
pub fn name(oid: Oid) -> Option<&'static str> {
    TABLE.iter().find_map(|row| {
        if row.0 == oid {
            Some(row.2)
        } else if row.1 == oid && row.1 != 0 {
            Some(array_name(row.2))
        } else {
            None
        }
    })
}

/// `_name` for an element `name`, as PostgreSQL names array types.
fn array_name(elem: &str) -> &'static str {
    const ARRAYS: &[(&str, &str)] = &[
        ("bool", "_bool"),
        ("bytea", "_bytea"),
        ("char", "_char"),
        ("name", "_name"),
        ("int8", "_int8"),
        ("int2", "_int2"),
        ("int4", "_int4"),
        ("regproc", "_regproc"),
        ("text", "_text"),
        ("oid", "_oid"),
        ("json", "_json"),
        ("cidr", "_cidr"),
        ("float4", "_float4"),
        ("float8", "_float8"),
        ("macaddr", "_macaddr"),
        ("inet", "_inet"),
        ("bpchar", "_bpchar"),
        ("varchar", "_varchar"),
        ("date", "_date"),
        ("time", "_time"),
        ("timestamp", "_timestamp"),
        ("timestamptz", "_timestamptz"),
        ("interval", "_interval"),
        ("numeric", "_numeric"),
        ("regclass", "_regclass"),
        ("regtype", "_regtype"),
        ("record", "_record"),
        ("uuid", "_uuid"),
        ("jsonb", "_jsonb"),
    ];
    ARRAYS
        .iter()
        .find(|pair| pair.0 == elem)
        .map_or("array", |pair| pair.1)
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
    let (ty, feature) = match element_of(oid) {
        Some(elem) => {
            let (ty, feature) = rust_type(elem)?;
            (format!("Vec<{ty}>"), feature)
        }
        None => {
            let (ty, feature) = rust_type(oid)?;
            (ty.to_owned(), feature)
        }
    };
    Some(match feature {
        Some(f) if !feature_enabled(f) => format!("`{ty}` (enable the `{f}` feature of qail)"),
        _ => format!("`{ty}`"),
    })
}

/// The Rust type for a scalar PostgreSQL type and the feature it needs.
fn rust_type(oid: Oid) -> Option<(&'static str, Option<&'static str>)> {
    Some(match oid {
        BOOL => ("bool", None),
        BYTEA => ("Vec<u8>", None),
        CHAR => ("i8", None),
        NAME | TEXT | BPCHAR | VARCHAR | UNKNOWN => ("String", None),
        INT2 => ("i16", None),
        INT4 => ("i32", None),
        INT8 => ("i64", None),
        OID | REGPROC | REGCLASS | REGTYPE => ("u32", None),
        FLOAT4 => ("f32", None),
        FLOAT8 => ("f64", None),
        INTERVAL => ("qail::types::Interval", None),
        JSON | JSONB => ("serde_json::Value or qail::types::Json<T>", Some("json")),
        UUID => ("uuid::Uuid", Some("uuid")),
        NUMERIC => ("rust_decimal::Decimal", Some("decimal")),
        TIMESTAMPTZ => (
            "chrono::DateTime<Utc> or time::OffsetDateTime",
            Some("chrono"),
        ),
        TIMESTAMP => (
            "chrono::NaiveDateTime or time::PrimitiveDateTime",
            Some("chrono"),
        ),
        DATE => ("chrono::NaiveDate or time::Date", Some("chrono")),
        TIME => ("chrono::NaiveTime or time::Time", Some("chrono")),
        INET => ("std::net::IpAddr or qail::types::Inet", Some("net")),
        CIDR => ("qail::types::Cidr", Some("net")),
        MACADDR => ("qail::types::MacAddr", Some("net")),
        _ => return None,
    })
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
        for row in TABLE.iter().filter(|row| row.1 != 0) {
            assert_eq!(array_of(row.0), Some(row.1), "{}", row.2);
            assert_eq!(element_of(row.1), Some(row.0), "{}", row.2);
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
        for row in TABLE {
            assert_eq!(name(row.0), Some(row.2));
            if row.1 != 0 {
                assert_eq!(name(row.1), Some(format!("_{}", row.2).as_str()));
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
