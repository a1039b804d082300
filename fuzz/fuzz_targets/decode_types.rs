//! Decodes arbitrary bytes as every supported type, for the type OID the first byte picks.
//! Decoding must return a value or an error; it must never panic or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use qail_pg::Decode;
use qail_pg::types::{Inet, Interval, Json, MacAddr, Oid, Timestamp, oid};

const OIDS: &[Oid] = &[
    oid::BOOL,
    oid::BYTEA,
    oid::INT2,
    oid::INT4,
    oid::INT8,
    oid::TEXT,
    oid::FLOAT4,
    oid::FLOAT8,
    oid::NUMERIC,
    oid::UUID,
    oid::JSON,
    oid::JSONB,
    oid::DATE,
    oid::TIME,
    oid::TIMESTAMP,
    oid::TIMESTAMPTZ,
    oid::INTERVAL,
    oid::INET,
    oid::CIDR,
    oid::MACADDR,
    oid::INT4_ARRAY,
    oid::TEXT_ARRAY,
];

fn all<'a>(ty: Oid, raw: &'a [u8]) {
    let _ = bool::decode_nullable(ty, Some(raw));
    let _ = i16::decode_nullable(ty, Some(raw));
    let _ = i32::decode_nullable(ty, Some(raw));
    let _ = i64::decode_nullable(ty, Some(raw));
    let _ = f32::decode_nullable(ty, Some(raw));
    let _ = f64::decode_nullable(ty, Some(raw));
    let _ = <&'a str>::decode_nullable(ty, Some(raw));
    let _ = String::decode_nullable(ty, Some(raw));
    let _ = Vec::<u8>::decode_nullable(ty, Some(raw));
    let _ = rust_decimal_like(ty, raw);
    let _ = uuid::Uuid::decode_nullable(ty, Some(raw));
    let _ = serde_json::Value::decode_nullable(ty, Some(raw));
    let _ = Json::<serde_json::Value>::decode_nullable(ty, Some(raw));
    let _ = chrono::NaiveDate::decode_nullable(ty, Some(raw));
    let _ = chrono::NaiveTime::decode_nullable(ty, Some(raw));
    let _ = chrono::NaiveDateTime::decode_nullable(ty, Some(raw));
    let _ = chrono::DateTime::<chrono::Utc>::decode_nullable(ty, Some(raw));
    let _ = Timestamp::<chrono::NaiveDateTime>::decode_nullable(ty, Some(raw));
    let _ = time::OffsetDateTime::decode_nullable(ty, Some(raw));
    let _ = Interval::decode_nullable(ty, Some(raw));
    let _ = Inet::decode_nullable(ty, Some(raw));
    let _ = MacAddr::decode_nullable(ty, Some(raw));
    let _ = Vec::<i32>::decode_nullable(ty, Some(raw));
    let _ = Vec::<Option<String>>::decode_nullable(ty, Some(raw));
}

fn rust_decimal_like(ty: Oid, raw: &[u8]) -> bool {
    rust_decimal::Decimal::decode_nullable(ty, Some(raw)).is_ok()
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, raw)) = data.split_first() else {
        return;
    };
    let ty = OIDS[usize::from(pick) % OIDS.len()];
    all(ty, raw);
});
