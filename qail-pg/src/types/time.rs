//! The `time` crate (feature `time`): `timestamptz` ↔ `OffsetDateTime`, `timestamp` ↔
//! `PrimitiveDateTime`, `date` ↔ `Date`, `time` ↔ `Time`.
//!
//! An `OffsetDateTime` is sent as its UTC instant and read back in UTC. Nanoseconds are
//! truncated to PostgreSQL's microseconds. ±infinity and values outside the `time` crate's
//! range (years beyond ±9999 without its `large-dates` feature) are errors.

use time::{Date, OffsetDateTime, PrimitiveDateTime, Time};

use super::timestamp::{PG_EPOCH_UNIX_SECONDS, days, micros, out_of_range};
use super::{BoxError, IsNull, Oid, fixed, oid, put_bytes, scalar_type};

/// Nanoseconds from the Unix epoch to PostgreSQL's.
const EPOCH_NANOS: i128 = PG_EPOCH_UNIX_SECONDS as i128 * 1_000_000_000;

/// The Julian day number of 2000-01-01.
const EPOCH_JULIAN_DAY: i32 = 2_451_545;

/// Writes a UTC instant as PostgreSQL microseconds.
fn put_instant<T>(ty: Oid, t: OffsetDateTime, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
    let us = i64::try_from((t.unix_timestamp_nanos() - EPOCH_NANOS).div_euclid(1_000))
        .map_err(|_| out_of_range::<T>(ty))?;
    put_bytes(buf, &us.to_be_bytes())
}

/// Reads PostgreSQL microseconds as a UTC instant.
fn get_instant<T>(ty: Oid, raw: &[u8]) -> Result<OffsetDateTime, BoxError> {
    let nanos = i128::from(micros::<T>(ty, raw)?) * 1_000 + EPOCH_NANOS;
    OffsetDateTime::from_unix_timestamp_nanos(nanos).map_err(|_| out_of_range::<T>(ty))
}

scalar_type!(OffsetDateTime => oid::TIMESTAMPTZ, array oid::TIMESTAMPTZ_ARRAY,
    encode(|&v, ty, buf| put_instant::<Self>(ty, v, buf)),
    decode(|ty, raw| get_instant::<Self>(ty, raw)));

scalar_type!(PrimitiveDateTime => oid::TIMESTAMP, array oid::TIMESTAMP_ARRAY,
encode(|&v, ty, buf| put_instant::<Self>(ty, v.assume_utc(), buf)),
decode(|ty, raw| {
    get_instant::<Self>(ty, raw).map(|t| PrimitiveDateTime::new(t.date(), t.time()))
}));

scalar_type!(Date => oid::DATE, array oid::DATE_ARRAY,
encode(|&v, _, buf| {
    let d = v.to_julian_day() - EPOCH_JULIAN_DAY;
    put_bytes(buf, &d.to_be_bytes())
}),
decode(|ty, raw| {
    days::<Self>(ty, raw)?
        .checked_add(EPOCH_JULIAN_DAY)
        .and_then(|j| Date::from_julian_day(j).ok())
        .ok_or_else(|| out_of_range::<Self>(ty))
}));

scalar_type!(Time => oid::TIME, array oid::TIME_ARRAY,
encode(|&v, _, buf| {
    let (h, m, s, us) = v.as_hms_micro();
    let us = ((i64::from(h) * 60 + i64::from(m)) * 60 + i64::from(s)) * 1_000_000 + i64::from(us);
    put_bytes(buf, &us.to_be_bytes())
}),
decode(|ty, raw| {
    // Note: PostgreSQL allows `24:00:00`, which Time cannot hold.
    let us = i64::from_be_bytes(fixed(ty, raw)?);
    let part = |div: i64, modulo: i64| u32::try_from(us.div_euclid(div).rem_euclid(modulo));
    let (Ok(h), Ok(m), Ok(s), Ok(micro)) = (
        u8::try_from(us.div_euclid(3_600_000_000)),
        part(60_000_000, 60),
        part(1_000_000, 60),
        part(1, 1_000_000),
    ) else {
        return Err(out_of_range::<Self>(ty));
    };
    let (Ok(m), Ok(s)) = (u8::try_from(m), u8::try_from(s)) else {
        return Err(out_of_range::<Self>(ty));
    };
    Time::from_hms_micro(h, m, s, micro).map_err(|_| out_of_range::<Self>(ty))
}));

#[cfg(test)]
mod tests {
    use super::super::Timestamp;
    use super::super::tests::{dec, enc};
    use super::*;
    use time::{Month, UtcOffset};

    fn date(y: i32, m: u8, d: u8) -> Date {
        let m = Month::try_from(m).expect("valid month");
        Date::from_calendar_date(y, m, d).expect("valid date")
    }

    fn at(d: Date, h: u8, m: u8, s: u8, us: u32) -> PrimitiveDateTime {
        PrimitiveDateTime::new(d, Time::from_hms_micro(h, m, s, us).expect("valid time"))
    }

    #[test]
    fn epoch_is_zero() {
        let epoch = at(date(2000, 1, 1), 0, 0, 0, 0);
        assert_eq!(enc(&epoch, oid::TIMESTAMP), Some(vec![0; 8]));
        assert_eq!(enc(&epoch.assume_utc(), oid::TIMESTAMPTZ), Some(vec![0; 8]));
        let plus2 = UtcOffset::from_hms(2, 0, 0).expect("valid offset");
        let two_am = at(date(2000, 1, 1), 2, 0, 0, 0).assume_offset(plus2);
        assert_eq!(enc(&two_am, oid::TIMESTAMPTZ), Some(vec![0; 8]));
        assert_eq!(enc(&date(2000, 1, 1), oid::DATE), Some(vec![0; 4]));
        assert_eq!(enc(&date(1999, 12, 31), oid::DATE), Some(vec![0xff; 4]));
    }

    #[test]
    fn known_values_round_trip() {
        let raw = 86_401_000_002i64.to_be_bytes();
        let t = at(date(2000, 1, 2), 0, 0, 1, 2);
        assert_eq!(enc(&t, oid::TIMESTAMP).as_deref(), Some(&raw[..]));
        assert_eq!(dec::<PrimitiveDateTime>(oid::TIMESTAMP, &raw), Ok(t));
        assert_eq!(
            dec::<OffsetDateTime>(oid::TIMESTAMPTZ, &raw),
            Ok(t.assume_utc())
        );
        let noon = Time::from_hms_micro(12, 0, 0, 5).expect("valid time");
        let raw = 43_200_000_005i64.to_be_bytes();
        assert_eq!(enc(&noon, oid::TIME).as_deref(), Some(&raw[..]));
        assert_eq!(dec::<Time>(oid::TIME, &raw), Ok(noon));
        for d in [date(-4713, 11, 24), date(1, 1, 1), date(9999, 12, 31)] {
            let raw = enc(&d, oid::DATE).expect("not null");
            assert_eq!(dec::<Date>(oid::DATE, &raw), Ok(d));
        }
        let before = at(date(1969, 12, 31), 23, 59, 59, 999_999).assume_utc();
        let raw = enc(&before, oid::TIMESTAMPTZ).expect("not null");
        assert_eq!(dec::<OffsetDateTime>(oid::TIMESTAMPTZ, &raw), Ok(before));
    }

    #[test]
    fn out_of_range_and_infinity_are_errors() {
        assert!(dec::<Date>(oid::DATE, &(i32::MAX - 1).to_be_bytes()).is_err());
        assert!(dec::<Time>(oid::TIME, &86_400_000_000i64.to_be_bytes()).is_err());
        let err = dec::<OffsetDateTime>(oid::TIMESTAMPTZ, &i64::MIN.to_be_bytes()).unwrap_err();
        assert!(err.contains("-infinity"), "{err}");
        assert_eq!(
            dec::<Timestamp<OffsetDateTime>>(oid::TIMESTAMPTZ, &i64::MIN.to_be_bytes()),
            Ok(Timestamp::NegInfinity)
        );
    }
}
