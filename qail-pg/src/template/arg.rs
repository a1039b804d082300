//! [`Arg`]: one parameter of a compiled [`Query`](super::Query), held by value when it is a
//! small `Copy` value (so a query can outlive the expression that computed it, as in
//! `(0..n).map(|i| qail!("… $1", i * 2))`) and borrowed otherwise (text, bytes, arrays).

use crate::types::{BoxError, Encode, Interval, IsNull, Oid, Param};

/// One parameter of a compiled query: a reference to any [`Encode`] value, or a small `Copy`
/// value kept inline ([`ByValue`] lists them). `qail!` picks the by-value form whenever the
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

/// A small `Copy` type a query holds by value: [`ByValue::arg`] copies it into an [`Arg`].
/// Implemented for the fixed-width scalar types, their `Option`s and references to them.
pub trait ByValue {
    /// The value as a by-value argument.
    fn arg(&self) -> Arg<'static>;
}

macro_rules! by_value {
    ($($(#[$cfg:meta])* $rust:ty => $variant:ident;)*) => {$(
        $(#[$cfg])*
        impl ByValue for $rust {
            #[inline]
            fn arg(&self) -> Arg<'static> {
                Arg::$variant(*self)
            }
        }
    )*};
}

by_value! {
    bool => Bool;
    i16 => I16;
    i32 => I32;
    i64 => I64;
    u32 => U32;
    f32 => F32;
    f64 => F64;
    Interval => Interval;
    #[cfg(feature = "uuid")]
    ::uuid::Uuid => Uuid;
    #[cfg(feature = "chrono")]
    ::chrono::DateTime<::chrono::Utc> => Timestamptz;
    #[cfg(feature = "chrono")]
    ::chrono::NaiveDateTime => Timestamp;
    #[cfg(feature = "chrono")]
    ::chrono::NaiveDate => Date;
    #[cfg(feature = "chrono")]
    ::chrono::NaiveTime => Time;
    #[cfg(feature = "time")]
    ::time::OffsetDateTime => OffsetDateTime;
    #[cfg(feature = "time")]
    ::time::PrimitiveDateTime => PrimitiveDateTime;
    #[cfg(feature = "time")]
    ::time::Date => TimeDate;
    #[cfg(feature = "time")]
    ::time::Time => TimeTime;
    #[cfg(feature = "decimal")]
    ::rust_decimal::Decimal => Decimal;
}

impl<T: ByValue> ByValue for Option<T> {
    #[inline]
    fn arg(&self) -> Arg<'static> {
        self.as_ref().map_or(Arg::Null, ByValue::arg)
    }
}

impl<T: ByValue + ?Sized> ByValue for &T {
    #[inline]
    fn arg(&self) -> Arg<'static> {
        (**self).arg()
    }
}

/// Text or bytes a query borrows for their own lifetime `'b` (not for the lifetime of the
/// variable holding the reference): [`Reborrow::arg`] copies the reference into an [`Arg`].
pub trait Reborrow<'b> {
    /// The value as an argument borrowing for `'b`.
    fn arg(&self) -> Arg<'b>;
}

impl<'b> Reborrow<'b> for &'b str {
    #[inline]
    fn arg(&self) -> Arg<'b> {
        Arg::Str(self)
    }
}

impl<'b> Reborrow<'b> for &'b String {
    #[inline]
    fn arg(&self) -> Arg<'b> {
        Arg::Str(self.as_str())
    }
}

impl<'b> Reborrow<'b> for &'b [u8] {
    #[inline]
    fn arg(&self) -> Arg<'b> {
        Arg::Bytes(self)
    }
}

impl<'b> Reborrow<'b> for &'b Vec<u8> {
    #[inline]
    fn arg(&self) -> Arg<'b> {
        Arg::Bytes(self.as_slice())
    }
}

impl<'b, T: Reborrow<'b>> Reborrow<'b> for Option<T> {
    #[inline]
    fn arg(&self) -> Arg<'b> {
        self.as_ref().map_or(Arg::Null, Reborrow::arg)
    }
}

/// A checked argument of a compiled query, before it becomes an [`Arg`]. `qail!` calls
/// `Checked(…).into_arg()`, and method resolution picks the first of three that applies,
/// through [`Deref`](std::ops::Deref): [`Checked::into_arg`] copies a [`ByValue`] value,
/// [`Reborrowed::into_arg`] copies a [`Reborrow`] reference, [`Borrowed::into_arg`] borrows
/// anything else.
#[derive(Debug)]
pub struct Checked<'a, T>(pub Reborrowed<'a, T>);

/// [`Checked`]'s second choice: see there.
#[derive(Debug)]
pub struct Reborrowed<'a, T>(pub Borrowed<'a, T>);

/// [`Checked`]'s last choice: see there.
#[derive(Debug)]
pub struct Borrowed<'a, T>(pub &'a T);

impl<'a, T> Checked<'a, T> {
    /// Wraps a checked argument.
    #[inline]
    pub fn new(value: &'a T) -> Checked<'a, T> {
        Checked(Reborrowed(Borrowed(value)))
    }
}

impl<T: ByValue> Checked<'_, T> {
    /// The argument, held by value.
    #[inline]
    pub fn into_arg(&self) -> Arg<'static> {
        self.0.0.0.arg()
    }
}

impl<'a, T> std::ops::Deref for Checked<'a, T> {
    type Target = Reborrowed<'a, T>;
    fn deref(&self) -> &Reborrowed<'a, T> {
        &self.0
    }
}

impl<'b, T: Reborrow<'b>> Reborrowed<'_, T> {
    /// The argument, borrowing what the reference points to.
    #[inline]
    pub fn into_arg(&self) -> Arg<'b> {
        self.0.0.arg()
    }
}

impl<'a, T> std::ops::Deref for Reborrowed<'a, T> {
    type Target = Borrowed<'a, T>;
    fn deref(&self) -> &Borrowed<'a, T> {
        &self.0
    }
}

impl<'a, T: Encode + Sync> Borrowed<'a, T> {
    /// The argument, borrowed.
    #[inline]
    pub fn into_arg(&self) -> Arg<'a> {
        Arg::Ref(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_arg<'a>(name: &'a str) -> Arg<'a> {
        let local = name;
        Checked::new(&local).into_arg()
    }

    #[test]
    fn small_values_are_copied_text_reborrowed_and_others_borrowed() {
        let owned = {
            let n = 40_i64;
            Checked::new(&(n + 2)).into_arg()
        };
        assert!(matches!(owned, Arg::I64(42)));
        let by_ref = 7_i32;
        assert!(matches!(Checked::new(&&by_ref).into_arg(), Arg::I32(7)));
        assert!(matches!(Checked::new(&None::<f64>).into_arg(), Arg::Null));
        assert!(matches!(text_arg("harbor"), Arg::Str("harbor")));
        let array = vec![1_i32, 2];
        let borrowed = Checked::new(&array).into_arg();
        assert!(matches!(borrowed, Arg::Ref(_)));
        let mut buf = Vec::new();
        text_arg("harbor").as_encode().encode(25, &mut buf).unwrap();
        assert_eq!(buf, b"harbor");
        buf.clear();
        owned.as_encode().encode(20, &mut buf).unwrap();
        assert_eq!(buf, 42_i64.to_be_bytes());
        assert_eq!(
            Arg::Null.as_encode().encode_checked(25, &mut buf).unwrap(),
            IsNull::Yes
        );
    }

    #[test]
    fn an_arg_is_small() {
        assert!(std::mem::size_of::<Arg<'_>>() <= 24);
    }
}
