//! Integers: `"char"` ↔ `i8`, `int2` ↔ `i16`, `int4` ↔ `i32`, `int8` ↔ `i64`, and `oid`
//! (with `regproc`, `regclass`, `regtype`) ↔ `u32`. Big-endian, fixed width.

use super::{fixed, oid, put_bytes, scalar_type};

scalar_type!(i8 => oid::CHAR, array oid::CHAR_ARRAY,
    encode(|v, _, buf| put_bytes(buf, &v.to_be_bytes())),
    decode(|ty, raw| fixed(ty, raw).map(i8::from_be_bytes)));

scalar_type!(i16 => oid::INT2, array oid::INT2_ARRAY,
    encode(|v, _, buf| put_bytes(buf, &v.to_be_bytes())),
    decode(|ty, raw| fixed(ty, raw).map(i16::from_be_bytes)));

scalar_type!(i32 => oid::INT4, array oid::INT4_ARRAY,
    encode(|v, _, buf| put_bytes(buf, &v.to_be_bytes())),
    decode(|ty, raw| fixed(ty, raw).map(i32::from_be_bytes)));

scalar_type!(i64 => oid::INT8, array oid::INT8_ARRAY,
    encode(|v, _, buf| put_bytes(buf, &v.to_be_bytes())),
    decode(|ty, raw| fixed(ty, raw).map(i64::from_be_bytes)));

scalar_type!(u32 => oid::OID | oid::REGPROC | oid::REGCLASS | oid::REGTYPE, array oid::OID_ARRAY,
    encode(|v, _, buf| put_bytes(buf, &v.to_be_bytes())),
    decode(|ty, raw| fixed(ty, raw).map(u32::from_be_bytes)));
#[cfg(test)]
mod tests {
    use super::super::Encode;
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
