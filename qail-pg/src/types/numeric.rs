//! `numeric` ↔ `rust_decimal::Decimal` (feature `decimal`).
//!
//! Binary form (`numeric_send` in `src/backend/utils/adt/numeric.c`): `int2` number of
//! base-10000 digits, `int2` weight (power of 10000 of the first digit), `int2` sign
//! (0x0000 positive, 0x4000 negative, 0xC000 NaN, 0xD000/0xF000 ±infinity), `int2` display
//! scale, then the digits, most significant first, without leading or trailing zero digits.
//!
//! `Decimal` holds a 96-bit integer and at most 28 decimal places. A `numeric` beyond that is
//! an error, never a rounded value; except that zeros past the 28th place are dropped
//! (`1.5000…0` with 30 places reads as `1.5` with 28), which does not change the value.

use rust_decimal::Decimal;

use super::reader::Reader;
use super::{ArrayElement, BoxError, Decode, Encode, IsNull, Oid, encode_checked, oid};

const POSITIVE: u16 = 0x0000;
const NEGATIVE: u16 = 0x4000;
const NAN: u16 = 0xC000;
const POS_INFINITY: u16 = 0xD000;
const NEG_INFINITY: u16 = 0xF000;
const BASE: u128 = 10_000;
/// The largest mantissa a `Decimal` holds: 2^96 - 1.
const MAX_MANTISSA: u128 = (1 << 96) - 1;

impl Encode for Decimal {
    fn encode(&self, _: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        let scale = self.scale();
        // Align the mantissa so the fraction fills whole base-10000 digits.
        let pad = (4 - scale % 4) % 4;
        let mut m = self.mantissa().unsigned_abs() * 10u128.pow(pad);
        let frac_digits = (scale + pad) / 4;
        let mut digits = Vec::new(); // least significant first
        while m > 0 {
            digits.push(u16::try_from(m % BASE).expect("a remainder of 10000 fits u16"));
            m /= BASE;
        }
        let n = i16::try_from(digits.len()).expect("a 96-bit mantissa has at most 10 digits");
        let frac = i16::try_from(frac_digits).expect("a scale of at most 28 has at most 8 digits");
        let weight = if digits.is_empty() { 0 } else { n - frac - 1 };
        let skip = digits.iter().take_while(|&&d| d == 0).count();
        let digits = &digits[skip..];
        let sign = if self.is_sign_negative() && !digits.is_empty() {
            NEGATIVE
        } else {
            POSITIVE
        };
        let ndigits = u16::try_from(digits.len()).expect("at most 10 digits");
        let dscale = u16::try_from(scale).expect("a Decimal's scale is at most 28");
        buf.extend_from_slice(&ndigits.to_be_bytes());
        buf.extend_from_slice(&weight.to_be_bytes());
        buf.extend_from_slice(&sign.to_be_bytes());
        buf.extend_from_slice(&dscale.to_be_bytes());
        for d in digits.iter().rev() {
            buf.extend_from_slice(&d.to_be_bytes());
        }
        Ok(IsNull::No)
    }
    fn accepts(ty: Oid) -> bool {
        ty == oid::NUMERIC
    }
    fn type_oid(&self) -> Oid {
        oid::NUMERIC
    }
    encode_checked!();
}

impl ArrayElement for Decimal {
    const ARRAY_OID: Oid = oid::NUMERIC_ARRAY;
}

/// The error for a `numeric` that `Decimal` cannot hold.
fn unrepresentable(what: &str) -> BoxError {
    format!(
        "a PostgreSQL `numeric` value {what}, which rust_decimal::Decimal cannot hold \
         (at most 28 decimal places and ±79228162514264337593543950335): round it in SQL \
         (`round(x, 28)` or `::numeric(38, 10)`), or read it as text (`::text`)"
    )
    .into()
}

impl Decode<'_> for Decimal {
    fn accepts(ty: Oid) -> bool {
        ty == oid::NUMERIC
    }
    fn decode(ty: Oid, raw: &[u8]) -> Result<Self, BoxError> {
        match small(raw) {
            Some(d) => Ok(d),
            None => decode_any(ty, raw),
        }
    }
}

/// The `Decimal` of a well-formed `numeric` of at most four base-10000 digits (up to eight
/// decimal digits on each side of the point, or `numeric(12, 2)`) that fits a `u64`
/// mantissa with at most 28 decimal places, as the server sends it (no nonzero digit past
/// the display scale): the same value and scale as [`decode_any`], in `u64` arithmetic.
/// `None` for everything else, which `decode_any` then reads or refuses.
#[inline]
fn small(raw: &[u8]) -> Option<Decimal> {
    let (header, digits) = raw.split_first_chunk::<8>()?;
    let [n0, n1, w0, w1, s0, s1, d0, d1] = *header;
    let ndigits = u16::from_be_bytes([n0, n1]);
    let weight = i32::from(i16::from_be_bytes([w0, w1]));
    let dscale = u32::from(u16::from_be_bytes([d0, d1]));
    let negative = match u16::from_be_bytes([s0, s1]) {
        POSITIVE => false,
        NEGATIVE => true,
        _ => return None,
    };
    if ndigits > 4 || digits.len() != 2 * usize::from(ndigits) || dscale > Decimal::MAX_SCALE {
        return None;
    }
    let mut m: u64 = 0;
    for d in digits.chunks_exact(2) {
        let d = u16::from_be_bytes([d[0], d[1]]);
        if d >= 10_000 {
            return None;
        }
        // Note: four digits are below 10^16.
        m = m * 10_000 + u64::from(d);
    }
    // The value is m × 10^exp; as in `assemble`, shown with `dscale` places.
    let exp = 4 * (weight + 1 - i32::from(ndigits));
    let (m, scale) = match u32::try_from(exp) {
        Ok(exp) => (
            m.checked_mul(10u64.checked_pow(exp.checked_add(dscale)?)?)?,
            dscale,
        ),
        Err(_) => {
            let frac = exp.unsigned_abs();
            if frac >= dscale {
                // Drop the zeros beyond the display scale: the server rounds to it, so the
                // last digit holds at most three, and dividing by a constant is cheap.
                let unit = match frac - dscale {
                    0 => 1,
                    1 => 10,
                    2 => 100,
                    3 => 1_000,
                    _ => return None,
                };
                if !m.is_multiple_of(unit) {
                    return None;
                }
                (m / unit, dscale)
            } else {
                (m.checked_mul(10u64.checked_pow(dscale - frac)?)?, dscale)
            }
        }
    };
    let lo = u32::try_from(m & u64::from(u32::MAX)).ok()?;
    let mid = u32::try_from(m >> 32).ok()?;
    // Note: `from_parts` clears the sign of zero, as `assemble` does.
    Some(Decimal::from_parts(lo, mid, 0, negative, scale))
}

/// Reads any `numeric`: the general form of [`small`], with every error.
fn decode_any(ty: Oid, raw: &[u8]) -> Result<Decimal, BoxError> {
    let mut r = Reader::new(ty, raw);
    let ndigits = r.u16()?;
    let weight = i32::from(r.i16()?);
    let sign = r.u16()?;
    let dscale = u32::from(r.u16()?);
    let negative = match sign {
        POSITIVE => false,
        NEGATIVE => true,
        NAN => return Err(unrepresentable("is NaN")),
        POS_INFINITY => return Err(unrepresentable("is +infinity")),
        NEG_INFINITY => return Err(unrepresentable("is -infinity")),
        _ => {
            return Err(format!(
                "a PostgreSQL `numeric` value has the unknown sign word {sign:#06x}"
            )
            .into());
        }
    };
    let mut m: u128 = 0;
    for _ in 0..ndigits {
        let d = r.u16()?;
        if u128::from(d) >= BASE {
            return Err(format!("a PostgreSQL `numeric` digit is {d}, not below 10000").into());
        }
        m = m
            .checked_mul(BASE)
            .and_then(|m| m.checked_add(u128::from(d)))
            .ok_or_else(|| unrepresentable("has too many digits"))?;
    }
    r.finish()?;
    assemble(m, 4 * (weight + 1 - i32::from(ndigits)), dscale, negative)
}

/// The `Decimal` for `m × 10^exp` shown with `dscale` decimal places.
fn assemble(m: u128, exp: i32, dscale: u32, negative: bool) -> Result<Decimal, BoxError> {
    // Express the value as mantissa / 10^scale.
    let (mut m, mut scale) = if exp >= 0 {
        let factor = u32::try_from(exp).ok().and_then(|e| 10u128.checked_pow(e));
        let m = factor
            .and_then(|f| m.checked_mul(f))
            .and_then(|m| m.checked_mul(10u128.checked_pow(dscale)?))
            .ok_or_else(|| unrepresentable("is too large"))?;
        (m, dscale)
    } else {
        let frac = exp.unsigned_abs();
        if frac >= dscale {
            (m, frac)
        } else {
            let factor = 10u128.checked_pow(dscale - frac);
            let m = factor
                .and_then(|f| m.checked_mul(f))
                .ok_or_else(|| unrepresentable("has too many digits"))?;
            (m, dscale)
        }
    };
    // Drop zeros beyond the display scale, then beyond what Decimal holds.
    while (scale > dscale || scale > Decimal::MAX_SCALE) && m % 10 == 0 && scale > 0 {
        m /= 10;
        scale -= 1;
    }
    if scale > Decimal::MAX_SCALE {
        return Err(unrepresentable(&format!(
            "has {scale} significant decimal places"
        )));
    }
    if m > MAX_MANTISSA {
        return Err(unrepresentable("is too large"));
    }
    let m = i128::try_from(m).expect("a 96-bit mantissa fits i128");
    let mut d =
        Decimal::try_from_i128_with_scale(m, scale).map_err(|e| unrepresentable(&e.to_string()))?;
    d.set_sign_negative(negative && m != 0);
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{dec, enc};
    use super::*;
    use std::str::FromStr;

    fn d(s: &str) -> Decimal {
        Decimal::from_str(s).expect("valid decimal")
    }

    /// `numeric_send` of each literal, taken from PostgreSQL 15.
    const SERVER: &[(&str, &str)] = &[
        ("1.5", "000200000000000100011388"),
        ("0", "0000000000000000"),
        ("0.00", "0000000000000002"),
        ("-12.34", "0002000040000002000c0d48"),
        ("100000000000000000000", "00010005000000000001"),
        ("0.00000000000000000001", "0001fffb000000140001"),
        ("1.500", "000200000000000300011388"),
        (
            "79228162514264337593543950335",
            "00080007000000000007240c0659059210f1172f112b014f",
        ),
        ("0.00001", "0001fffe0000000503e8"),
    ];

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }

    #[test]
    fn bytes_match_the_server_both_ways() {
        for (text, bytes) in SERVER {
            let v = d(text);
            assert_eq!(enc(&v, oid::NUMERIC), Some(hex(bytes)), "encode {text}");
            let back = dec::<Decimal>(oid::NUMERIC, &hex(bytes)).expect("decodes");
            assert_eq!(back, v, "decode {text}");
            assert_eq!(back.to_string(), v.to_string(), "scale of {text}");
        }
    }

    #[test]
    fn extremes_round_trip() {
        for v in [
            Decimal::MAX,
            Decimal::MIN,
            Decimal::new(1, 28),
            Decimal::new(-1, 28),
            d("-0.0001"),
            d("12345678.9"),
        ] {
            let raw = enc(&v, oid::NUMERIC).expect("not null");
            let back = dec::<Decimal>(oid::NUMERIC, &raw).expect("decodes");
            assert_eq!((back, back.scale()), (v, v.scale()));
        }
    }

    #[test]
    fn special_and_out_of_range_values_are_errors() {
        let err = dec::<Decimal>(oid::NUMERIC, &hex("00000000c0000000")).unwrap_err();
        assert!(err.contains("NaN"), "{err}");
        assert!(
            dec::<Decimal>(oid::NUMERIC, &hex("00000000d0000000"))
                .unwrap_err()
                .contains("+infinity")
        );
        // 10^28 fits, 10^30 does not
        let v = dec::<Decimal>(oid::NUMERIC, &hex("00010007000000000001")).expect("decodes");
        assert_eq!(v, d("10000000000000000000000000000"));
        let err = dec::<Decimal>(oid::NUMERIC, &hex("00010007000000000064")).unwrap_err();
        assert!(err.contains("too large"), "{err}");
        // 1e-30, scale 30
        let err = dec::<Decimal>(oid::NUMERIC, &hex("0001fff80000001e0064")).unwrap_err();
        assert!(err.contains("30 significant decimal places"), "{err}");
        // a thousand-digit number
        let mut huge = hex("03e803e700000000");
        huge.extend(std::iter::repeat_n([0x27, 0x0f], 1000).flatten());
        assert!(dec::<Decimal>(oid::NUMERIC, &huge).is_err());
        assert!(dec::<Decimal>(oid::NUMERIC, &hex("00010000000000002710")).is_err());
    }

    #[test]
    fn the_small_path_agrees_with_the_general_one() {
        // A fixed xorshift sequence: the same values on every run.
        let mut next = crate::types::tests::xorshift(0x9e37_79b9_7f4a_7c15);
        let mut taken = 0;
        for _ in 0..200_000 {
            let ndigits = u16::try_from(next(6)).unwrap();
            let weight = i16::try_from(next(24)).unwrap() - 12;
            let sign =
                [POSITIVE, NEGATIVE, NAN, POS_INFINITY, 0x1234][usize::try_from(next(5)).unwrap()];
            let dscale = u16::try_from(next(34)).unwrap();
            let mut raw = Vec::new();
            for word in [ndigits, weight.cast_unsigned(), sign, dscale] {
                raw.extend_from_slice(&word.to_be_bytes());
            }
            for _ in 0..ndigits {
                let d = match next(8) {
                    0 => 0,
                    1 => 9_999,
                    2 => 10_000 + u16::try_from(next(100)).unwrap(),
                    3 => 1_000 * u16::try_from(next(10)).unwrap(),
                    _ => u16::try_from(next(10_000)).unwrap(),
                };
                raw.extend_from_slice(&d.to_be_bytes());
            }
            if next(50) == 0 {
                raw.pop();
            }
            let general = decode_any(oid::NUMERIC, &raw);
            if let Some(fast) = small(&raw) {
                taken += 1;
                let general = general.expect("the general path reads what the small one does");
                assert_eq!(
                    (fast, fast.scale(), fast.is_sign_negative()),
                    (general, general.scale(), general.is_sign_negative()),
                    "{raw:02x?}"
                );
            }
        }
        assert!(taken > 5_000, "{taken}");
    }

    #[test]
    fn encoded_decimals_take_the_small_path() {
        // What the server sends is what `encode` writes (`bytes_match_the_server_both_ways`).
        let mut next = crate::types::tests::xorshift(0x2545_f491_4f6c_dd1d);
        for _ in 0..100_000 {
            // Up to eight digits before the point and eight after it: at most four
            // base-10000 digits.
            let scale = u32::try_from(next(9)).unwrap();
            let digits = scale + u32::try_from(next(9)).unwrap();
            let mantissa = i64::try_from(next(10u64.pow(digits))).unwrap();
            let sign = if next(2) == 0 { 1 } else { -1 };
            let v = Decimal::new(sign * mantissa, scale);
            let raw = enc(&v, oid::NUMERIC).expect("not null");
            let back = small(&raw).unwrap_or_else(|| panic!("{v}: {raw:02x?}"));
            assert_eq!((back, back.scale()), (v, v.scale()), "{raw:02x?}");
            assert_eq!(back.to_string(), v.to_string());
        }
    }

    #[test]
    fn typical_columns_take_the_small_path() {
        for text in [
            "1234.50",
            "-0.01",
            "0",
            "0.00",
            "9999999999.99",
            "12",
            "-100000000",
        ] {
            let raw = enc(&d(text), oid::NUMERIC).expect("not null");
            let v = small(&raw).expect("small");
            assert_eq!((v, v.to_string()), (d(text), text.to_owned()));
        }
    }

    #[test]
    fn zeros_past_28_places_are_dropped() {
        // 1.5 with display scale 30
        let v = dec::<Decimal>(oid::NUMERIC, &hex("000200000000001e00011388")).expect("decodes");
        assert_eq!(v, d("1.5"));
        assert_eq!(v.scale(), 28);
    }
}
