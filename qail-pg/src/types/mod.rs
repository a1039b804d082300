//! Binary-format conversion between Rust values and PostgreSQL values.
//!
//! [`Encode`] writes a parameter, [`Decode`] reads a result column. Both speak PostgreSQL's
//! binary format only and check the type OID they are given with `accepts` first.
//!
//! | PostgreSQL | Rust | feature |
//! |------------|------|---------|
//! | `bool` | `bool` | |
//! | `"char"` | `i8` | |
//! | `int2`, `int4`, `int8` | `i16`, `i32`, `i64` | |
//! | `oid` (`regclass`, `regtype`, `regproc`) | `u32` | |
//! | `float4`, `float8` | `f32`, `f64` (NaN and ±infinity included) | |
//! | `text`, `varchar`, `bpchar`, `name`, `unknown` | `String`, `&str`, `Box<str>`, `Cow<str>` | |
//! | any type whose binary form is UTF-8 text (`citext`, enums) | [`Text<S>`] (`qail!` queries: citext as `String`, `&str`) | |
//! | `bytea` | `Vec<u8>`, `&[u8]`, `Cow<[u8]>` | |
//! | `interval` | [`Interval`] | |
//! | `timestamp`, `timestamptz`, `date` with ±infinity | [`Timestamp<T>`] | `chrono` or `time` |
//! | `uuid` | `uuid::Uuid` | `uuid` |
//! | `timestamptz`, `timestamp`, `date`, `time` | `chrono::{DateTime<Utc>, NaiveDateTime, NaiveDate, NaiveTime}` | `chrono` |
//! | `timestamptz` | `chrono::DateTime<FixedOffset>`, `chrono::DateTime<Local>` | `chrono` |
//! | the same | `time::{OffsetDateTime, PrimitiveDateTime, Date, Time}` | `time` |
//! | `json`, `jsonb` | `serde_json::Value`, `Json<T>` | `json` |
//! | `numeric` | `rust_decimal::Decimal` | `decimal` |
//! | `inet`, `cidr`, `macaddr` | `IpAddr`, `Inet`, `Cidr`, `MacAddr` | `net` |
//! | one-dimensional arrays of the above | `Vec<T>`, `Vec<Option<T>>` (and `&[T]` to send) | |
//! | `record`, composite types, arrays of them (read only) | structs `qail!` generates over [`record::Fields`] | |
//! | NULL | `Option<T>` | |
//!
//! A Rust type accepts only the PostgreSQL types it holds without loss: `i32` does not read an
//! `int8` column. Cast in SQL (`::int4`) or pick the wider Rust type; the error says which.

mod array;
mod bool;
mod bytea;
#[cfg(feature = "chrono")]
mod chrono;
mod float;
mod int;
mod interval;
#[cfg(feature = "json")]
mod json;
#[cfg(feature = "json")]
pub mod json_number;
#[cfg(feature = "json")]
mod json_value;
#[cfg(feature = "net")]
mod net;
#[cfg(feature = "decimal")]
mod numeric;
pub mod oid;
mod owned;
mod reader;
pub mod record;
mod text;
#[cfg(feature = "time")]
mod time;
mod timestamp;
mod utf8;
#[cfg(feature = "uuid")]
mod uuid;

pub use array::FieldArray;
pub use interval::Interval;
#[cfg(feature = "json")]
pub use json::Json;
#[cfg(feature = "net")]
pub use net::{Cidr, Inet, MacAddr};
pub use text::Text;
pub use timestamp::Timestamp;

/// A PostgreSQL type OID (`pg_type.oid`).
pub type Oid = u32;

/// The error type of a failed conversion. Messages say what the value was and what to do.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Whether an encoded value is SQL NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsNull {
    /// The value is NULL; nothing was written.
    Yes,
    /// The value was written to the buffer.
    No,
}

/// A Rust value that can be sent to PostgreSQL as a parameter in binary format.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be sent as a PostgreSQL parameter",
    note = "implement `qail::Encode` for it, or derive `QailType` for an enum"
)]
pub trait Encode {
    /// Writes the value's binary representation for type `ty` to `buf`, without the length
    /// prefix. Returns [`IsNull::Yes`] (and writes nothing) for NULL.
    ///
    /// Callers check `ty` first ([`accepts`](Encode::accepts) or
    /// [`encode_checked`](Encode::encode_checked)); for a type it does not accept the bytes
    /// written are unspecified.
    fn encode(&self, ty: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError>;

    /// Whether values of this Rust type can be sent as PostgreSQL type `ty`.
    fn accepts(ty: Oid) -> bool
    where
        Self: Sized;

    /// The OID this value is sent as when nothing else fixes the parameter's type.
    /// `0` (NULL of `Option<T>`) lets the server infer it.
    fn type_oid(&self) -> Oid;

    /// [`accepts`](Encode::accepts) then [`encode`](Encode::encode); usable through `dyn Encode`.
    /// A refused type is an error naming both types and the fix ([`encode_mismatch`]).
    fn encode_checked(&self, ty: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError>;
}

/// A parameter value as the Bind encoders ([`bind_execute_sync`](crate::proto::message::bind_execute_sync)
/// and friends) take it: a `&dyn Encode`, or an argument a compiled query holds by value
/// ([`Arg`](crate::template::Arg)).
pub trait Param: Sync {
    /// The value to encode.
    fn as_encode(&self) -> &(dyn Encode + Sync);

    /// Appends the value as a Bind parameter (its length, then its binary form) when it is a
    /// fixed-width value whose own type is exactly `ty`, and returns true; otherwise writes
    /// nothing and returns false, and the encoder goes through [`Param::as_encode`]. The
    /// bytes are those `as_encode` would write.
    ///
    /// Note: a shortcut for the by-value arguments of compiled queries, which skips the call
    /// through `dyn Encode` and its `Result` for each integer or float of every query.
    #[inline]
    fn put_fixed(&self, ty: Oid, buf: &mut Vec<u8>) -> bool {
        let _ = (ty, buf);
        false
    }
}

impl Param for &(dyn Encode + Sync) {
    #[inline]
    fn as_encode(&self) -> &(dyn Encode + Sync) {
        *self
    }
}

impl<T: Encode + Sync> Param for &T {
    #[inline]
    fn as_encode(&self) -> &(dyn Encode + Sync) {
        *self
    }
}

/// A Rust value that can be read from a PostgreSQL result column in binary format.
///
/// `'r` is the lifetime of the row's bytes, so `&'r str` and `&'r [u8]` borrow without copying.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be read from a PostgreSQL column",
    note = "implement `qail::Decode` for it, or derive `QailType` for an enum"
)]
pub trait Decode<'r>: Sized {
    /// Whether a column of PostgreSQL type `ty` can be read as this Rust type.
    fn accepts(ty: Oid) -> bool;

    /// Reads a non-NULL value of type `ty` from its binary representation.
    fn decode(ty: Oid, raw: &'r [u8]) -> Result<Self, BoxError>;

    /// Reads a SQL NULL. The default is an error: only `Option<T>` accepts NULL.
    fn decode_null(ty: Oid) -> Result<Self, BoxError> {
        Err(unexpected_null(ty, std::any::type_name::<Self>()))
    }

    /// Reads a value that may be NULL (`None`).
    #[inline]
    fn decode_nullable(ty: Oid, raw: Option<&'r [u8]>) -> Result<Self, BoxError> {
        match raw {
            Some(raw) => Self::decode(ty, raw),
            None => Self::decode_null(ty),
        }
    }
}

/// A Rust type that can be the element of a one-dimensional PostgreSQL array, so that
/// `Vec<T>` and `&[T]` are sent and `Vec<T>` is read as that array.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an element of a PostgreSQL array",
    note = "arrays are one-dimensional: `Vec<T>` or `Vec<Option<T>>` of a scalar type"
)]
pub trait ArrayElement {
    /// The array type (`int4[]` for `i32`) a `Vec<Self>` is sent as when nothing else fixes
    /// the parameter's type.
    const ARRAY_OID: Oid;
}

/// [`Decode::accepts`], then [`Decode::decode_nullable`]: what a row getter calls. A refused
/// type is an error naming both types and the fix ([`decode_mismatch`]).
pub fn decode_checked<'r, T: Decode<'r>>(ty: Oid, raw: Option<&'r [u8]>) -> Result<T, BoxError> {
    if !T::accepts(ty) {
        return Err(decode_mismatch::<T>(ty));
    }
    T::decode_nullable(ty, raw)
}

/// The error for a value of Rust type `T` that cannot be sent as PostgreSQL type `ty`.
#[inline]
pub fn encode_mismatch<T: Encode + ?Sized>(value: &T, ty: Oid) -> BoxError {
    encode_mismatch_of(std::any::type_name::<T>(), value.type_oid(), ty)
}

/// The error for a PostgreSQL column of type `ty` that cannot be read as Rust type `T`.
#[inline]
pub fn decode_mismatch<T: ?Sized>(ty: Oid) -> BoxError {
    decode_mismatch_of(std::any::type_name::<T>(), ty)
}

// The error builders below take the Rust type's name, so one copy of each is compiled, not
// one per type the generic functions above are called with.

/// [`encode_mismatch`] of the type named `type_name`, whose value sends itself as `sent`.
#[cold]
#[inline(never)]
fn encode_mismatch_of(type_name: &str, sent: Oid, ty: Oid) -> BoxError {
    let pg = oid::describe(ty);
    let rust = short_type_name(type_name);
    let cast = match oid::name(sent) {
        Some(_) => format!(
            ", or cast the parameter in SQL (`$n::{}`)",
            oid::describe(sent)
        ),
        None => String::new(),
    };
    let pass = match oid::rust_hint(ty) {
        Some(hint) => format!("pass a {hint}{cast}"),
        None => format!(
            "if `{pg}` is sent as UTF-8 text (citext, an enum) pass `qail::types::Text<{rust}>`{cast}"
        ),
    };
    format!("cannot send Rust `{rust}` as a PostgreSQL `{pg}` parameter: {pass}").into()
}

/// [`decode_mismatch`] of the type named `type_name`.
#[cold]
#[inline(never)]
fn decode_mismatch_of(type_name: &str, ty: Oid) -> BoxError {
    let pg = oid::describe(ty);
    let rust = short_type_name(type_name);
    let fix = match oid::rust_hint(ty) {
        Some(hint) => format!("read it as {hint}, or cast the column in SQL"),
        None => "if its binary form is UTF-8 text (citext, an enum) read it as \
                 `qail::types::Text<String>`; otherwise cast the column to a built-in type in SQL"
            .to_owned(),
    };
    format!("cannot read PostgreSQL `{pg}` as Rust `{rust}`: {fix}").into()
}

/// [`Decode::decode_null`]'s error for the type named `type_name`.
#[cold]
#[inline(never)]
fn unexpected_null(ty: Oid, type_name: &str) -> BoxError {
    let rust = short_type_name(type_name);
    format!(
        "unexpected NULL in a PostgreSQL `{}` value read as Rust `{rust}`: read it as `Option<{rust}>`, \
         or use COALESCE in SQL",
        oid::describe(ty)
    )
    .into()
}

/// `std::any::type_name` without module paths: `Vec<Option<String>>`, `DateTime<Utc>`.
#[inline]
pub(crate) fn rust_name<T: ?Sized>() -> String {
    short_type_name(std::any::type_name::<T>())
}

/// [`rust_name`] of a type's full name.
#[inline(never)]
fn short_type_name(full: &str) -> String {
    let mut out = String::with_capacity(full.len());
    let mut segment = String::new();
    for c in full.chars() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            segment.push(c);
        } else {
            out.push_str(segment.rsplit("::").next().unwrap_or_default());
            segment.clear();
            out.push(c);
        }
    }
    out.push_str(segment.rsplit("::").next().unwrap_or_default());
    out.replace("'_, ", "").replace("<'_>", "")
}

/// The value's bytes as a fixed-size array, or an error naming the PostgreSQL type.
#[inline]
pub(crate) fn fixed<const N: usize>(ty: Oid, raw: &[u8]) -> Result<[u8; N], BoxError> {
    match <[u8; N]>::try_from(raw) {
        Ok(bytes) => Ok(bytes),
        Err(_) => Err(wrong_width(ty, raw.len(), N)),
    }
}

#[cold]
fn wrong_width(ty: Oid, len: usize, expected: usize) -> BoxError {
    format!(
        "a PostgreSQL `{}` value has {len} bytes where {expected} were expected: the column is \
         not in binary format or not of that type; check the query's result format",
        oid::describe(ty),
    )
    .into()
}

/// Implements [`Encode::encode_checked`] as `accepts` then `encode`.
macro_rules! encode_checked {
    () => {
        fn encode_checked(
            &self,
            ty: $crate::types::Oid,
            buf: &mut Vec<u8>,
        ) -> Result<$crate::types::IsNull, $crate::types::BoxError> {
            if !<Self as $crate::types::Encode>::accepts(ty) {
                return Err($crate::types::encode_mismatch(self, ty));
            }
            $crate::types::Encode::encode(self, ty, buf)
        }
    };
}
pub(crate) use encode_checked;

/// Writes `bytes` as the whole value: the encode body of most fixed-layout types.
pub(crate) fn put_bytes(buf: &mut Vec<u8>, bytes: &[u8]) -> Result<IsNull, BoxError> {
    buf.extend_from_slice(bytes);
    Ok(IsNull::No)
}

/// Implements [`Encode`], [`ArrayElement`] and [`Decode`] for a Rust type that maps to a fixed
/// set of PostgreSQL types:
///
/// ```text
/// scalar_type!(i32 => oid::INT4, array oid::INT4_ARRAY,
///     encode(|v, ty, buf| …),   // v: &Self (`&v` copies), ty: Oid, buf: &mut Vec<u8>
///     decode(|ty, raw| …));     // raw: &[u8]
/// ```
///
/// The value is sent as the first OID when nothing else fixes the parameter's type; every
/// listed OID (`oid::OID | oid::REGCLASS`) is accepted both ways. A leading `<'r>` implements
/// `Decode<'r>` with `raw: &'r [u8]`, for types that borrow from the row (`<'r> &'r str`).
macro_rules! scalar_type {
    (@impl [$($lt:lifetime)?] $dlt:lifetime $rust:ty => $oid:path $(| $also:path)*,
     array $array:expr,
     encode(|$v:pat_param, $ty:pat_param, $buf:pat_param| $enc:expr),
     decode(|$dty:pat_param, $raw:pat_param| $dec:expr) $(,)?) => {
        impl<$($lt)?> $crate::types::Encode for $rust {
            fn encode(
                &self,
                $ty: $crate::types::Oid,
                $buf: &mut Vec<u8>,
            ) -> Result<$crate::types::IsNull, $crate::types::BoxError> {
                let $v = self;
                $enc
            }
            fn accepts(ty: $crate::types::Oid) -> bool {
                matches!(ty, $oid $(| $also)*)
            }
            fn type_oid(&self) -> $crate::types::Oid {
                $oid
            }
            $crate::types::encode_checked!();
        }

        impl<$($lt)?> $crate::types::ArrayElement for $rust {
            const ARRAY_OID: $crate::types::Oid = $array;
        }

        impl<$($lt)?> $crate::types::Decode<$dlt> for $rust {
            #[inline]
            fn accepts(ty: $crate::types::Oid) -> bool {
                matches!(ty, $oid $(| $also)*)
            }
            #[inline]
            fn decode(
                $dty: $crate::types::Oid,
                $raw: &$dlt [u8],
            ) -> Result<Self, $crate::types::BoxError> {
                $dec
            }
        }
    };
    (<$lt:lifetime> $($rest:tt)+) => {
        $crate::types::scalar_type!(@impl [$lt] $lt $($rest)+);
    };
    ($($rest:tt)+) => {
        $crate::types::scalar_type!(@impl [] '_ $($rest)+);
    };
}
pub(crate) use scalar_type;

impl<T: Encode> Encode for Option<T> {
    fn encode(&self, ty: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        match self {
            Some(v) => v.encode(ty, buf),
            None => Ok(IsNull::Yes),
        }
    }
    fn accepts(ty: Oid) -> bool {
        T::accepts(ty)
    }
    fn type_oid(&self) -> Oid {
        self.as_ref().map_or(0, Encode::type_oid)
    }
    fn encode_checked(&self, ty: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        match self {
            Some(v) => v.encode_checked(ty, buf),
            None if T::accepts(ty) => Ok(IsNull::Yes),
            None => Err(format!(
                "cannot send a NULL `{}` as a PostgreSQL `{}` parameter: the Rust type does not \
                 match; use `Option` of the Rust type for `{}`",
                rust_name::<Self>(),
                oid::describe(ty),
                oid::describe(ty)
            )
            .into()),
        }
    }
}

impl<T: ArrayElement> ArrayElement for Option<T> {
    const ARRAY_OID: Oid = T::ARRAY_OID;
}

impl<'r, T: Decode<'r>> Decode<'r> for Option<T> {
    fn accepts(ty: Oid) -> bool {
        T::accepts(ty)
    }
    fn decode(ty: Oid, raw: &'r [u8]) -> Result<Self, BoxError> {
        T::decode(ty, raw).map(Some)
    }
    fn decode_null(_: Oid) -> Result<Self, BoxError> {
        Ok(None)
    }
}

impl<T: Encode> Encode for &T {
    fn encode(&self, ty: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        (**self).encode(ty, buf)
    }
    fn accepts(ty: Oid) -> bool {
        T::accepts(ty)
    }
    fn type_oid(&self) -> Oid {
        (**self).type_oid()
    }
    fn encode_checked(&self, ty: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        (**self).encode_checked(ty, buf)
    }
}

impl<T: ArrayElement> ArrayElement for &T {
    const ARRAY_OID: Oid = T::ARRAY_OID;
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A fixed xorshift sequence from `seed`: each call gives a number below `bound`, the same
    /// ones on every run.
    #[cfg(any(feature = "json", feature = "decimal"))]
    pub(crate) fn xorshift(mut state: u64) -> impl FnMut(u64) -> u64 {
        move |bound| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        }
    }

    /// Encodes through `encode_checked` and returns the bytes (None for NULL).
    pub(crate) fn enc<T: Encode + ?Sized>(v: &T, ty: Oid) -> Option<Vec<u8>> {
        let mut buf = Vec::new();
        match v.encode_checked(ty, &mut buf).expect("encodes") {
            IsNull::Yes => {
                assert!(buf.is_empty(), "NULL wrote bytes");
                None
            }
            IsNull::No => Some(buf),
        }
    }

    /// Decodes through `decode_checked`.
    pub(crate) fn dec<'r, T: Decode<'r>>(ty: Oid, raw: &'r [u8]) -> Result<T, String> {
        decode_checked::<T>(ty, Some(raw)).map_err(|e| e.to_string())
    }

    #[test]
    fn rust_names_drop_module_paths() {
        assert_eq!(rust_name::<String>(), "String");
        assert_eq!(rust_name::<Vec<Option<String>>>(), "Vec<Option<String>>");
        assert_eq!(rust_name::<&[u8]>(), "&[u8]");
        assert_eq!(
            rust_name::<(i32, std::borrow::Cow<str>)>(),
            "(i32, Cow<str>)"
        );
    }

    #[test]
    fn option_is_null_both_ways() {
        assert_eq!(enc(&None::<i32>, oid::INT4), None);
        assert_eq!(enc(&Some(7i32), oid::INT4), Some(vec![0, 0, 0, 7]));
        assert_eq!(None::<i32>.type_oid(), 0);
        assert_eq!(Some(7i32).type_oid(), oid::INT4);
        assert_eq!(
            decode_checked::<Option<i32>>(oid::INT4, None).unwrap(),
            None
        );
        let err = decode_checked::<i32>(oid::INT4, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("Option<i32>"), "{err}");
    }

    #[test]
    fn null_of_the_wrong_type_is_refused() {
        let mut buf = Vec::new();
        let err = None::<i32>.encode_checked(oid::TEXT, &mut buf).unwrap_err();
        assert!(err.to_string().contains("text"), "{err}");
    }

    #[test]
    fn references_encode_like_their_target() {
        let v = 5i64;
        assert_eq!(enc(&&v, oid::INT8), enc(&v, oid::INT8));
        assert_eq!(Encode::type_oid(&&v), oid::INT8);
        let dynamic: &(dyn Encode + Sync) = &v;
        let mut buf = Vec::new();
        assert!(dynamic.encode_checked(oid::INT4, &mut buf).is_err());
    }

    #[test]
    fn mismatch_messages_name_both_types_and_the_fix() {
        let err = encode_mismatch(&1i32, oid::INT8).to_string();
        assert_eq!(
            err,
            "cannot send Rust `i32` as a PostgreSQL `int8` parameter: pass a `i64`, \
             or cast the parameter in SQL (`$n::int4`)"
        );
        let err = decode_mismatch::<i32>(oid::INT8).to_string();
        assert_eq!(
            err,
            "cannot read PostgreSQL `int8` as Rust `i32`: read it as `i64`, or cast the column in SQL"
        );
        let err = decode_mismatch::<String>(16_500).to_string();
        assert!(err.contains("Text<String>"), "{err}");
    }

    #[test]
    fn fixed_reports_the_length() {
        let err = fixed::<4>(oid::INT4, &[1, 2]).unwrap_err().to_string();
        assert!(err.contains("2 bytes where 4"), "{err}");
        assert_eq!(fixed::<2>(oid::INT2, &[1, 2]).unwrap(), [1, 2]);
    }
}
