//! `chrono` (feature `chrono`): `timestamptz` ↔ `DateTime<Utc>`, `timestamp` ↔
//! `NaiveDateTime`, `date` ↔ `NaiveDate`, `time` ↔ `NaiveTime`.
//!
//! `DateTime<FixedOffset>` and `DateTime<Local>` are also `timestamptz`: sent as their instant,
//! read back at offset +00:00 and in the local zone respectively.
//!
//! PostgreSQL keeps microseconds; nanoseconds are truncated when sending. ±infinity is an
//! error unless read through [`Timestamp<T>`](super::Timestamp); values outside chrono's
//! range (beyond year 262142) are errors, never a clamped value.

use chrono::{
    DateTime, FixedOffset, Local, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, Timelike, Utc,
};

use super::timestamp::{PG_EPOCH_UNIX_SECONDS, days, micros, out_of_range};
use super::{BoxError, IsNull, Oid, fixed, oid, put_bytes, scalar_type};

/// Microseconds from the Unix epoch to PostgreSQL's.
const EPOCH_MICROS: i64 = PG_EPOCH_UNIX_SECONDS * 1_000_000;

/// Writes Unix microseconds as PostgreSQL microseconds.
fn put_unix_micros<T>(ty: Oid, unix: i64, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
    let pg = unix
        .checked_sub(EPOCH_MICROS)
        .ok_or_else(|| out_of_range::<T>(ty))?;
    buf.extend_from_slice(&pg.to_be_bytes());
    Ok(IsNull::No)
}

/// Reads PostgreSQL microseconds as a UTC date-time.
fn get_utc<T>(ty: Oid, raw: &[u8]) -> Result<DateTime<Utc>, BoxError> {
    micros::<T>(ty, raw)?
        .checked_add(EPOCH_MICROS)
        .and_then(DateTime::from_timestamp_micros)
        .ok_or_else(|| out_of_range::<T>(ty))
}

scalar_type!(DateTime<Utc> => oid::TIMESTAMPTZ, array oid::TIMESTAMPTZ_ARRAY,
    encode(|v, ty, buf| put_unix_micros::<Self>(ty, v.timestamp_micros(), buf)),
    decode(|ty, raw| get_utc::<Self>(ty, raw)));

scalar_type!(DateTime<FixedOffset> => oid::TIMESTAMPTZ, array oid::TIMESTAMPTZ_ARRAY,
    encode(|v, ty, buf| put_unix_micros::<Self>(ty, v.timestamp_micros(), buf)),
    decode(|ty, raw| get_utc::<Self>(ty, raw).map(|t| t.fixed_offset())));

scalar_type!(DateTime<Local> => oid::TIMESTAMPTZ, array oid::TIMESTAMPTZ_ARRAY,
    encode(|v, ty, buf| put_unix_micros::<Self>(ty, v.timestamp_micros(), buf)),
    decode(|ty, raw| get_utc::<Self>(ty, raw).map(|t| t.with_timezone(&Local))));

scalar_type!(NaiveDateTime => oid::TIMESTAMP, array oid::TIMESTAMP_ARRAY,
    encode(|v, ty, buf| put_unix_micros::<Self>(ty, v.and_utc().timestamp_micros(), buf)),
    decode(|ty, raw| get_utc::<Self>(ty, raw).map(|t| t.naive_utc())));

/// PostgreSQL's epoch as a date.
fn epoch_date() -> NaiveDate {
    NaiveDate::from_ymd_opt(2000, 1, 1).expect("2000-01-01 is a valid date")
}

scalar_type!(NaiveDate => oid::DATE, array oid::DATE_ARRAY,
encode(|v, ty, buf| {
    let d = i32::try_from(v.signed_duration_since(epoch_date()).num_days())
        .map_err(|_| out_of_range::<Self>(ty))?;
    put_bytes(buf, &d.to_be_bytes())
}),
decode(|ty, raw| {
    let d = days::<Self>(ty, raw)?;
    TimeDelta::try_days(i64::from(d))
        .and_then(|delta| epoch_date().checked_add_signed(delta))
        .ok_or_else(|| out_of_range::<Self>(ty))
}));

scalar_type!(NaiveTime => oid::TIME, array oid::TIME_ARRAY,
encode(|v, _, buf| {
    // Note: a leap second (nanosecond ≥ 1e9) encodes past 24:00, which the server refuses.
    let us = i64::from(v.num_seconds_from_midnight()) * 1_000_000
        + i64::from(v.nanosecond() / 1_000);
    put_bytes(buf, &us.to_be_bytes())
}),
decode(|ty, raw| {
    // Note: PostgreSQL allows `24:00:00`, which NaiveTime cannot hold.
    let us = i64::from_be_bytes(fixed(ty, raw)?);
    let secs = u32::try_from(us.div_euclid(1_000_000)).map_err(|_| out_of_range::<Self>(ty))?;
    let nanos = u32::try_from(us.rem_euclid(1_000_000) * 1_000).map_err(|_| out_of_range::<Self>(ty))?;
    NaiveTime::from_num_seconds_from_midnight_opt(secs, nanos).ok_or_else(|| out_of_range::<Self>(ty))
}));

#[cfg(test)]
mod tests {
    use super::super::tests::{dec, enc};
    use super::super::{Decode, Encode, Timestamp};
    use super::*;

    fn ymd(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).expect("valid date")
    }

    #[test]
    fn epoch_is_zero() {
        let t = ymd(2000, 1, 1).and_hms_opt(0, 0, 0).expect("valid time");
        assert_eq!(enc(&t, oid::TIMESTAMP), Some(vec![0; 8]));
        assert_eq!(enc(&t.and_utc(), oid::TIMESTAMPTZ), Some(vec![0; 8]));
        assert_eq!(enc(&ymd(2000, 1, 1), oid::DATE), Some(vec![0; 4]));
        assert_eq!(enc(&ymd(1999, 12, 31), oid::DATE), Some(vec![0xff; 4]));
    }

    #[test]
    fn known_values() {
        // '2000-01-02 00:00:01.000002' = 86401000002 µs
        let t = ymd(2000, 1, 2)
            .and_hms_micro_opt(0, 0, 1, 2)
            .expect("valid time");
        let raw = 86_401_000_002i64.to_be_bytes();
        assert_eq!(enc(&t, oid::TIMESTAMP).as_deref(), Some(&raw[..]));
        assert_eq!(dec::<NaiveDateTime>(oid::TIMESTAMP, &raw), Ok(t));
        let noon = NaiveTime::from_hms_micro_opt(12, 0, 0, 5).expect("valid time");
        let raw = 43_200_000_005i64.to_be_bytes();
        assert_eq!(enc(&noon, oid::TIME).as_deref(), Some(&raw[..]));
        assert_eq!(dec::<NaiveTime>(oid::TIME, &raw), Ok(noon));
    }

    #[test]
    fn far_dates_round_trip() {
        for d in [
            ymd(-4713, 11, 24),
            ymd(1, 1, 1),
            ymd(9999, 12, 31),
            ymd(200_000, 6, 1),
        ] {
            let raw = enc(&d, oid::DATE).expect("not null");
            assert_eq!(dec::<NaiveDate>(oid::DATE, &raw), Ok(d));
            let t = d
                .and_hms_micro_opt(23, 59, 59, 999_999)
                .expect("valid time")
                .and_utc();
            let raw = enc(&t, oid::TIMESTAMPTZ).expect("not null");
            assert_eq!(dec::<DateTime<Utc>>(oid::TIMESTAMPTZ, &raw), Ok(t));
        }
    }

    #[test]
    fn beyond_chrono_is_an_error() {
        // PostgreSQL allows dates up to 5874897 AD.
        let err = dec::<NaiveDate>(oid::DATE, &(i32::MAX - 1).to_be_bytes()).unwrap_err();
        assert!(err.contains("outside the range"), "{err}");
        let err = dec::<NaiveTime>(oid::TIME, &86_400_000_000i64.to_be_bytes()).unwrap_err();
        assert!(err.contains("outside the range"), "{err}");
    }

    #[test]
    fn infinity_needs_the_wrapper() {
        let raw = i64::MAX.to_be_bytes();
        let err = dec::<DateTime<Utc>>(oid::TIMESTAMPTZ, &raw).unwrap_err();
        assert!(err.contains("Timestamp<DateTime<Utc>>"), "{err}");
        type Ts = Timestamp<DateTime<Utc>>;
        assert_eq!(
            dec::<Ts>(oid::TIMESTAMPTZ, &raw),
            Ok(Timestamp::PosInfinity)
        );
        assert_eq!(
            enc(&Ts::NegInfinity, oid::TIMESTAMPTZ),
            Some(i64::MIN.to_be_bytes().to_vec())
        );
        assert_eq!(Ts::PosInfinity.type_oid(), oid::TIMESTAMPTZ);
        let d = Timestamp::<NaiveDate>::PosInfinity;
        assert_eq!(enc(&d, oid::DATE), Some(i32::MAX.to_be_bytes().to_vec()));
        assert_eq!(
            dec::<Timestamp<NaiveDate>>(oid::DATE, &[0; 4]),
            Ok(Timestamp::Value(ymd(2000, 1, 1)))
        );
        assert!(!<Timestamp<NaiveTime> as Decode>::accepts(oid::TIME));
    }

    #[test]
    fn offsets_are_sent_as_instants() {
        let east = FixedOffset::east_opt(5 * 3600).expect("valid offset");
        let t = ymd(2000, 1, 1)
            .and_hms_opt(5, 0, 0)
            .expect("valid time")
            .and_local_timezone(east)
            .single()
            .expect("a fixed offset is unambiguous");
        assert_eq!(enc(&t, oid::TIMESTAMPTZ), Some(vec![0; 8]));
        let back = dec::<DateTime<FixedOffset>>(oid::TIMESTAMPTZ, &[0; 8]).expect("decodes");
        assert_eq!(back, t);
        assert_eq!(back.offset().local_minus_utc(), 0);
        let local = dec::<DateTime<Local>>(oid::TIMESTAMPTZ, &[0; 8]).expect("decodes");
        assert_eq!(local, t);
    }

    #[test]
    fn zones_are_not_mixed() {
        assert!(!<NaiveDateTime as Decode>::accepts(oid::TIMESTAMPTZ));
        assert!(!<DateTime<Utc> as Encode>::accepts(oid::TIMESTAMP));
    }
}
