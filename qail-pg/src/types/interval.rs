//! `interval` ↔ [`Interval`]: `int8` microseconds, `int4` days, `int4` months
//! (`interval_send` in `src/backend/utils/adt/timestamp.c`).

use super::reader::Reader;
use super::{IsNull, oid, scalar_type};

/// A PostgreSQL `interval`, kept as its three independent fields: a month is not a fixed
/// number of days and a day is not always 24 hours, so they are not folded together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Interval {
    /// Whole months (a year is 12).
    pub months: i32,
    /// Whole days.
    pub days: i32,
    /// The time part, in microseconds.
    pub microseconds: i64,
}

impl Interval {
    /// An interval of months, days and microseconds.
    pub const fn new(months: i32, days: i32, microseconds: i64) -> Self {
        Interval {
            months,
            days,
            microseconds,
        }
    }
}

scalar_type!(Interval => oid::INTERVAL, array oid::INTERVAL_ARRAY,
encode(|v, _, buf| {
    buf.extend_from_slice(&v.microseconds.to_be_bytes());
    buf.extend_from_slice(&v.days.to_be_bytes());
    buf.extend_from_slice(&v.months.to_be_bytes());
    Ok(IsNull::No)
}),
decode(|ty, raw| {
    let mut r = Reader::new(ty, raw);
    let microseconds = r.i64()?;
    let days = r.i32()?;
    let months = r.i32()?;
    r.finish()?;
    Ok(Interval::new(months, days, microseconds))
}));

#[cfg(test)]
mod tests {
    use super::super::tests::{dec, enc};
    use super::*;

    /// `'1 year 2 mons 3 days 00:00:01.5'::interval`.
    const SAMPLE: &[u8] = &[0, 0, 0, 0, 0, 0x16, 0xe3, 0x60, 0, 0, 0, 3, 0, 0, 0, 14];

    #[test]
    fn fields_in_server_order() {
        let v = Interval::new(14, 3, 1_500_000);
        assert_eq!(enc(&v, oid::INTERVAL).as_deref(), Some(SAMPLE));
        assert_eq!(dec::<Interval>(oid::INTERVAL, SAMPLE), Ok(v));
    }

    #[test]
    fn negative_and_extreme_fields_round_trip() {
        let v = Interval::new(i32::MIN, -1, i64::MAX);
        let raw = enc(&v, oid::INTERVAL).expect("not null");
        assert_eq!(dec::<Interval>(oid::INTERVAL, &raw), Ok(v));
        assert!(dec::<Interval>(oid::INTERVAL, &raw[..12]).is_err());
    }
}
