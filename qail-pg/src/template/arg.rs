//! [`Arg`]: one parameter of a compiled [`Query`](super::Query), held by value when it is a
//! small `Copy` value (so a query can outlive the expression that computed it, as in
//! `(0..n).map(|i| qail!("… $1", i * 2))`) and borrowed otherwise (text, bytes, arrays).

use crate::types::{BoxError, Encode, Interval, IsNull, Oid, Param, oid};

/// One parameter of a compiled query: a reference to any [`Encode`] value, or a small `Copy`
/// value kept inline ([`ToArg`](crate::typed::ToArg) chooses). `qail!` picks the by-value form whenever the
/// argument's type allows it; nothing is allocated either way.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub enum Arg<'a> {
    /// A borrowed value of any type.
    Ref(&'a (dyn Encode + Sync)),
    /// Borrowed text.
    Str(&'a str),
    /// Borrowed bytes.
    Bytes(&'a [u8]),
    /// SQL NULL (`None` of a by-value type), sent as the type checked at compile time.
    Null,
    /// `bool`.
    Bool(bool),
    /// `int2`.
    I16(i16),
    /// `int4`.
    I32(i32),
    /// `int8`.
    I64(i64),
    /// `oid`.
    U32(u32),
    /// `float4`.
    F32(f32),
    /// `float8`.
    F64(f64),
    /// `interval`.
    Interval(Interval),
    /// `uuid`.
    #[cfg(feature = "uuid")]
    Uuid(::uuid::Uuid),
    /// `timestamptz`.
    #[cfg(feature = "chrono")]
    Timestamptz(::chrono::DateTime<::chrono::Utc>),
    /// `timestamp`.
    #[cfg(feature = "chrono")]
    Timestamp(::chrono::NaiveDateTime),
    /// `date`.
    #[cfg(feature = "chrono")]
    Date(::chrono::NaiveDate),
    /// `time`.
    #[cfg(feature = "chrono")]
    Time(::chrono::NaiveTime),
    /// `timestamptz` (the `time` crate).
    #[cfg(feature = "time")]
    OffsetDateTime(::time::OffsetDateTime),
    /// `timestamp` (the `time` crate).
    #[cfg(feature = "time")]
    PrimitiveDateTime(::time::PrimitiveDateTime),
    /// `date` (the `time` crate).
    #[cfg(feature = "time")]
    TimeDate(::time::Date),
    /// `time` (the `time` crate).
    #[cfg(feature = "time")]
    TimeTime(::time::Time),
    /// `numeric`.
    #[cfg(feature = "decimal")]
    Decimal(::rust_decimal::Decimal),
}

/// The NULL of [`Arg::Null`]: its type was checked when the query was compiled.
struct Null;

impl Encode for Null {
    fn encode(&self, _: Oid, _: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        Ok(IsNull::Yes)
    }
    fn accepts(_: Oid) -> bool {
        true
    }
    fn type_oid(&self) -> Oid {
        0
    }
    fn encode_checked(&self, _: Oid, _: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        Ok(IsNull::Yes)
    }
}

impl Param for Arg<'_> {
    #[inline]
    fn as_encode(&self) -> &(dyn Encode + Sync) {
        match self {
            Arg::Ref(value) => *value,
            Arg::Str(v) => v,
            Arg::Bytes(v) => v,
            Arg::Null => &Null,
            Arg::Bool(v) => v,
            Arg::I16(v) => v,
            Arg::I32(v) => v,
            Arg::I64(v) => v,
            Arg::U32(v) => v,
            Arg::F32(v) => v,
            Arg::F64(v) => v,
            Arg::Interval(v) => v,
            #[cfg(feature = "uuid")]
            Arg::Uuid(v) => v,
            #[cfg(feature = "chrono")]
            Arg::Timestamptz(v) => v,
            #[cfg(feature = "chrono")]
            Arg::Timestamp(v) => v,
            #[cfg(feature = "chrono")]
            Arg::Date(v) => v,
            #[cfg(feature = "chrono")]
            Arg::Time(v) => v,
            #[cfg(feature = "time")]
            Arg::OffsetDateTime(v) => v,
            #[cfg(feature = "time")]
            Arg::PrimitiveDateTime(v) => v,
            #[cfg(feature = "time")]
            Arg::TimeDate(v) => v,
            #[cfg(feature = "time")]
            Arg::TimeTime(v) => v,
            #[cfg(feature = "decimal")]
            Arg::Decimal(v) => v,
        }
    }

    #[inline]
    fn put_fixed(&self, ty: Oid, buf: &mut Vec<u8>) -> bool {
        match (*self, ty) {
            (Arg::I32(v), oid::INT4) => put(buf, v.to_be_bytes()),
            (Arg::I64(v), oid::INT8) => put(buf, v.to_be_bytes()),
            (Arg::I16(v), oid::INT2) => put(buf, v.to_be_bytes()),
            (Arg::Bool(v), oid::BOOL) => put(buf, [u8::from(v)]),
            (Arg::F64(v), oid::FLOAT8) => put(buf, v.to_bits().to_be_bytes()),
            (Arg::F32(v), oid::FLOAT4) => put(buf, v.to_bits().to_be_bytes()),
            _ => return false,
        }
        true
    }
}

/// Appends a parameter of `N` bytes: its length, then `value` (what `Encode` writes for the
/// fixed-width types of [`Param::put_fixed`]).
#[inline(always)]
fn put<const N: usize>(buf: &mut Vec<u8>, value: [u8; N]) {
    let len = i32::try_from(N).unwrap_or(i32::MAX);
    buf.extend_from_slice(&len.to_be_bytes());
    buf.extend_from_slice(&value);
}

impl<'a> From<&'a (dyn Encode + Sync)> for Arg<'a> {
    fn from(value: &'a (dyn Encode + Sync)) -> Arg<'a> {
        Arg::Ref(value)
    }
}

impl std::fmt::Debug for Arg<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arg::Ref(_) => f.write_str("Ref(..)"),
            Arg::Str(v) => f.debug_tuple("Str").field(v).finish(),
            Arg::Bytes(v) => f.debug_tuple("Bytes").field(v).finish(),
            Arg::Null => f.write_str("Null"),
            _ => f.write_str("ByValue(..)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_width_args_are_put_as_encode_writes_them() {
        let args = [
            (Arg::I32(-7), oid::INT4),
            (Arg::I64(1 << 40), oid::INT8),
            (Arg::I16(300), oid::INT2),
            (Arg::Bool(true), oid::BOOL),
            (Arg::F64(-0.5), oid::FLOAT8),
            (Arg::F32(2.25), oid::FLOAT4),
        ];
        for (arg, ty) in args {
            let mut put = Vec::new();
            assert!(arg.put_fixed(ty, &mut put));
            let mut encoded = vec![0; 4];
            assert!(matches!(
                arg.as_encode().encode_checked(ty, &mut encoded),
                Ok(IsNull::No)
            ));
            let len = i32::try_from(encoded.len() - 4).unwrap();
            encoded[..4].copy_from_slice(&len.to_be_bytes());
            assert_eq!(put, encoded, "{arg:?} as {ty}");
        }
        // Another type, a NULL or a borrowed value: nothing is written; `as_encode` decides.
        for (arg, ty) in [
            (Arg::I32(1), oid::INT8),
            (Arg::I64(1), oid::NUMERIC),
            (Arg::Null, oid::INT4),
            (Arg::Str("x"), oid::TEXT),
        ] {
            let mut put = Vec::new();
            assert!(!arg.put_fixed(ty, &mut put));
            assert!(put.is_empty());
        }
    }

    #[test]
    fn an_arg_is_small() {
        assert!(std::mem::size_of::<Arg<'_>>() <= 24);
    }
}
