//! Integers: `"char"` ↔ `i8`, `int2` ↔ `i16`, `int4` ↔ `i32`, `int8` ↔ `i64`, and `oid`
//! (with `regproc`, `regclass`, `regtype`) ↔ `u32`. Big-endian, fixed width.

use super::{ArrayElement, BoxError, Decode, Encode, IsNull, Oid, encode_checked, fixed, oid};

/// Implements the traits for a fixed-width big-endian number.
macro_rules! number {
    ($rust:ty, $oid:expr, $array:expr, [$($accepts:pat_param)|+]) => {
        impl Encode for $rust {
            fn encode(&self, _: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
                buf.extend_from_slice(&self.to_be_bytes());
                Ok(IsNull::No)
            }
            fn accepts(ty: Oid) -> bool {
                matches!(ty, $($accepts)|+)
            }
            fn type_oid(&self) -> Oid {
                $oid
            }
            encode_checked!();
        }

        impl ArrayElement for $rust {
            const ARRAY_OID: Oid = $array;
        }

        impl Decode<'_> for $rust {
            fn accepts(ty: Oid) -> bool {
                matches!(ty, $($accepts)|+)
            }
            fn decode(ty: Oid, raw: &[u8]) -> Result<Self, BoxError> {
                Ok(<$rust>::from_be_bytes(fixed(ty, raw)?))
            }
        }
    };
}

number!(i8, oid::CHAR, oid::CHAR_ARRAY, [oid::CHAR]);
number!(i16, oid::INT2, oid::INT2_ARRAY, [oid::INT2]);
number!(i32, oid::INT4, oid::INT4_ARRAY, [oid::INT4]);
number!(i64, oid::INT8, oid::INT8_ARRAY, [oid::INT8]);
number!(
    u32,
    oid::OID,
    oid::OID_ARRAY,
    [oid::OID | oid::REGPROC | oid::REGCLASS | oid::REGTYPE]
);

#[cfg(test)]
mod tests {
    use super::super::tests::{dec, enc};
    use super::*;

    #[test]
    fn big_endian_bytes() {
        assert_eq!(enc(&-2i8, oid::CHAR), Some(vec![0xfe]));
        assert_eq!(enc(&0x0102i16, oid::INT2), Some(vec![1, 2]));
        assert_eq!(enc(&-1i32, oid::INT4), Some(vec![0xff; 4]));
        assert_eq!(
            enc(&0x0102_0304_0506_0708i64, oid::INT8),
            Some(vec![1, 2, 3, 4, 5, 6, 7, 8])
        );
        assert_eq!(enc(&2_950u32, oid::OID), Some(vec![0, 0, 0x0b, 0x86]));
        assert_eq!(dec::<i16>(oid::INT2, &[0x80, 0]), Ok(i16::MIN));
        assert_eq!(
            dec::<i32>(oid::INT4, &[0x7f, 0xff, 0xff, 0xff]),
            Ok(i32::MAX)
        );
        assert_eq!(
            dec::<i64>(oid::INT8, &[0x80, 0, 0, 0, 0, 0, 0, 0]),
            Ok(i64::MIN)
        );
        assert_eq!(dec::<u32>(oid::REGCLASS, &[0xff; 4]), Ok(u32::MAX));
        assert_eq!(dec::<i8>(oid::CHAR, b"a"), Ok(97));
    }

    #[test]
    fn extremes_round_trip() {
        for v in [i64::MIN, -1, 0, 1, i64::MAX] {
            let raw = enc(&v, oid::INT8).expect("not null");
            assert_eq!(dec::<i64>(oid::INT8, &raw), Ok(v));
        }
        for v in [i16::MIN, i16::MAX] {
            let raw = enc(&v, oid::INT2).expect("not null");
            assert_eq!(dec::<i16>(oid::INT2, &raw), Ok(v));
        }
    }

    #[test]
    fn widths_are_not_mixed() {
        let err = dec::<i32>(oid::INT8, &[0; 8]).unwrap_err();
        assert!(err.contains("`i64`"), "{err}");
        assert!(dec::<i64>(oid::INT4, &[0; 4]).is_err());
        assert!(!<i16 as Encode>::accepts(oid::INT4));
        let mut buf = Vec::new();
        assert!(1i64.encode_checked(oid::INT4, &mut buf).is_err());
        assert!(buf.is_empty());
    }

    #[test]
    fn short_input_is_an_error() {
        let err = dec::<i64>(oid::INT8, &[0; 4]).unwrap_err();
        assert!(err.contains("4 bytes where 8"), "{err}");
    }
}
