//! Shared rules of `timestamp`, `timestamptz` and `date`: the 2000-01-01 epoch, the
//! ±infinity sentinels, and [`Timestamp<T>`] which keeps ±infinity.

use super::{ArrayElement, BoxError, Decode, Encode, IsNull, Oid, encode_checked, fixed, oid};

/// Seconds from 1970-01-01 (Unix) to 2000-01-01 (PostgreSQL's epoch).
#[cfg_attr(
    not(any(feature = "chrono", feature = "time")),
    allow(dead_code, reason = "used by the chrono and time features")
)]
pub(crate) const PG_EPOCH_UNIX_SECONDS: i64 = 946_684_800;

/// Whether `ty` has ±infinity values.
fn has_infinity(ty: Oid) -> bool {
    matches!(ty, oid::TIMESTAMP | oid::TIMESTAMPTZ | oid::DATE)
}

/// Which infinity `raw` is, if it is one.
fn infinity(ty: Oid, raw: &[u8]) -> Option<Sign> {
    let (min, max) = if ty == oid::DATE {
        (i64::from(i32::MIN), i64::from(i32::MAX))
    } else {
        (i64::MIN, i64::MAX)
    };
    let value = match raw.len() {
        4 => i64::from(i32::from_be_bytes(raw.try_into().ok()?)),
        8 => i64::from_be_bytes(raw.try_into().ok()?),
        _ => return None,
    };
    match value {
        v if v == max => Some(Sign::Pos),
        v if v == min => Some(Sign::Neg),
        _ => None,
    }
}

/// The sign of an infinity.
#[derive(Clone, Copy)]
enum Sign {
    Pos,
    Neg,
}

/// Microseconds since 2000-01-01 of a `timestamp`/`timestamptz`, or an error for ±infinity
/// naming the Rust type and [`Timestamp<T>`].
#[cfg_attr(
    not(any(feature = "chrono", feature = "time")),
    allow(dead_code, reason = "used by the chrono and time features")
)]
pub(crate) fn micros<T>(ty: Oid, raw: &[u8]) -> Result<i64, BoxError> {
    match i64::from_be_bytes(fixed(ty, raw)?) {
        i64::MAX => Err(infinite::<T>(ty, Sign::Pos)),
        i64::MIN => Err(infinite::<T>(ty, Sign::Neg)),
        us => Ok(us),
    }
}

/// Days since 2000-01-01 of a `date`, or an error for ±infinity.
#[cfg_attr(
    not(any(feature = "chrono", feature = "time")),
    allow(dead_code, reason = "used by the chrono and time features")
)]
pub(crate) fn days<T>(ty: Oid, raw: &[u8]) -> Result<i32, BoxError> {
    match i32::from_be_bytes(fixed(ty, raw)?) {
        i32::MAX => Err(infinite::<T>(ty, Sign::Pos)),
        i32::MIN => Err(infinite::<T>(ty, Sign::Neg)),
        days => Ok(days),
    }
}

/// The error for an infinity read as a type without one.
#[cold]
fn infinite<T>(ty: Oid, sign: Sign) -> BoxError {
    let rust = super::rust_name::<T>();
    let sign = match sign {
        Sign::Pos => "+infinity",
        Sign::Neg => "-infinity",
    };
    format!(
        "a PostgreSQL `{}` value is {sign}, which Rust `{rust}` cannot hold: read it as \
         `qail::types::Timestamp<{rust}>`, or filter it in SQL (`WHERE isfinite(col)`)",
        oid::describe(ty)
    )
    .into()
}

/// The error for a date or time outside what the Rust type can hold.
#[cfg_attr(
    not(any(feature = "chrono", feature = "time")),
    allow(dead_code, reason = "used by the chrono and time features")
)]
pub(crate) fn out_of_range<T>(ty: Oid) -> BoxError {
    format!(
        "a PostgreSQL `{}` value is outside the range of Rust `{}`: filter or clamp it in SQL, \
         or read it as text (`::text`)",
        oid::describe(ty),
        super::rust_name::<T>()
    )
    .into()
}

/// A `timestamp`, `timestamptz` or `date` that may be `infinity` or `-infinity`.
///
/// A plain `chrono`/`time` value refuses an infinite column with an error that points here;
/// `Timestamp<T>` reads and sends all three cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Timestamp<T> {
    /// `-infinity`, before every other value.
    NegInfinity,
    /// A finite value.
    Value(T),
    /// `infinity`, after every other value.
    PosInfinity,
}

impl<T: Encode + ArrayElement> Encode for Timestamp<T> {
    fn encode(&self, ty: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        let date = ty == oid::DATE;
        match self {
            Timestamp::Value(v) => return v.encode(ty, buf),
            Timestamp::PosInfinity if date => buf.extend_from_slice(&i32::MAX.to_be_bytes()),
            Timestamp::NegInfinity if date => buf.extend_from_slice(&i32::MIN.to_be_bytes()),
            Timestamp::PosInfinity => buf.extend_from_slice(&i64::MAX.to_be_bytes()),
            Timestamp::NegInfinity => buf.extend_from_slice(&i64::MIN.to_be_bytes()),
        }
        Ok(IsNull::No)
    }
    fn accepts(ty: Oid) -> bool {
        has_infinity(ty) && T::accepts(ty)
    }
    fn type_oid(&self) -> Oid {
        match self {
            Timestamp::Value(v) => v.type_oid(),
            _ => oid::element_of(T::ARRAY_OID).unwrap_or(0),
        }
    }
    encode_checked!();
}

impl<T: ArrayElement> ArrayElement for Timestamp<T> {
    const ARRAY_OID: Oid = T::ARRAY_OID;
}

impl<'r, T: Decode<'r>> Decode<'r> for Timestamp<T> {
    fn accepts(ty: Oid) -> bool {
        has_infinity(ty) && T::accepts(ty)
    }
    fn decode(ty: Oid, raw: &'r [u8]) -> Result<Self, BoxError> {
        Ok(match infinity(ty, raw) {
            Some(Sign::Pos) => Timestamp::PosInfinity,
            Some(Sign::Neg) => Timestamp::NegInfinity,
            None => Timestamp::Value(T::decode(ty, raw)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentinels_by_type() {
        assert!(matches!(
            infinity(oid::TIMESTAMP, &i64::MAX.to_be_bytes()),
            Some(Sign::Pos)
        ));
        assert!(matches!(
            infinity(oid::TIMESTAMPTZ, &i64::MIN.to_be_bytes()),
            Some(Sign::Neg)
        ));
        assert!(matches!(
            infinity(oid::DATE, &i32::MAX.to_be_bytes()),
            Some(Sign::Pos)
        ));
        assert!(infinity(oid::DATE, &0i32.to_be_bytes()).is_none());
        assert!(infinity(oid::TIMESTAMP, &[1, 2]).is_none());
    }

    #[test]
    fn plain_readers_refuse_infinity_and_name_the_wrapper() {
        let err = micros::<String>(oid::TIMESTAMPTZ, &i64::MAX.to_be_bytes()).unwrap_err();
        assert!(err.to_string().contains("+infinity"), "{err}");
        assert!(err.to_string().contains("Timestamp<String>"), "{err}");
        assert_eq!(
            micros::<String>(oid::TIMESTAMP, &7i64.to_be_bytes()).unwrap(),
            7
        );
        assert!(days::<String>(oid::DATE, &i32::MIN.to_be_bytes()).is_err());
    }
}
