//! `float4` ↔ `f32`, `float8` ↔ `f64`: IEEE 754 bits, big-endian. NaN, ±infinity and -0.0 keep
//! their bits both ways.

use super::{fixed, oid, put_bytes, scalar_type};

scalar_type!(f32 => oid::FLOAT4, array oid::FLOAT4_ARRAY,
    encode(|v, _, buf| put_bytes(buf, &v.to_bits().to_be_bytes())),
    decode(|ty, raw| fixed(ty, raw).map(f32::from_be_bytes)));

scalar_type!(f64 => oid::FLOAT8, array oid::FLOAT8_ARRAY,
    encode(|v, _, buf| put_bytes(buf, &v.to_bits().to_be_bytes())),
    decode(|ty, raw| fixed(ty, raw).map(f64::from_be_bytes)));

#[cfg(test)]
mod tests {
    use super::super::Encode;
    use super::super::tests::{dec, enc};
    use super::*;

    #[test]
    fn ieee_bytes() {
        assert_eq!(
            enc(&1.5f64, oid::FLOAT8),
            Some(vec![0x3f, 0xf8, 0, 0, 0, 0, 0, 0])
        );
        assert_eq!(enc(&1.5f32, oid::FLOAT4), Some(vec![0x3f, 0xc0, 0, 0]));
        assert_eq!(
            enc(&-0.0f64, oid::FLOAT8),
            Some(vec![0x80, 0, 0, 0, 0, 0, 0, 0])
        );
        assert_eq!(
            dec::<f32>(oid::FLOAT4, &[0x7f, 0x80, 0, 0]),
            Ok(f32::INFINITY)
        );
    }

    #[test]
    fn special_values_round_trip() {
        for v in [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            f64::MIN_POSITIVE,
            f64::MAX,
        ] {
            let raw = enc(&v, oid::FLOAT8).expect("not null");
            let back = dec::<f64>(oid::FLOAT8, &raw).expect("decodes");
            assert_eq!(back.to_bits(), v.to_bits());
        }
        let raw = enc(&f32::NAN, oid::FLOAT4).expect("not null");
        assert!(dec::<f32>(oid::FLOAT4, &raw).expect("decodes").is_nan());
    }

    #[test]
    fn precisions_are_not_mixed() {
        assert!(dec::<f32>(oid::FLOAT8, &[0; 8]).is_err());
        assert!(!<f64 as Encode>::accepts(oid::NUMERIC));
    }
}
