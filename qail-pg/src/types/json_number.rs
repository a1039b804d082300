//! Numbers inside JSON documents built by PostgreSQL (feature `json`).
//!
//! `to_json` writes a `float4`/`float8` as a JSON number, except the values JSON has no number
//! for, which it writes as the strings `"NaN"`, `"Infinity"` and `"-Infinity"` (`json.c`,
//! `datum_to_json_internal`). serde reads only numbers into `f64`, so the structs `qail!`
//! generates for JSON aggregates read their float fields with [`floats`], which accepts both.
//!
//! A `numeric` is written as a JSON number with all its digits, which serde would read
//! through `f64` and round. `decimals` (feature `decimal` too) takes the number's own text
//! from the document instead and parses it exactly into `rust_decimal::Decimal`; a value
//! `Decimal` cannot hold exactly (more than 28 significant digits, NaN, an infinity) is an
//! error, never a rounded number.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, Visitor};

/// A number type (`f32`, `f64`, `Decimal`), or an `Option` or `Vec` of one, read from
/// PostgreSQL's JSON form of it.
pub trait JsonNumbers: Sized {
    /// Reads `Self` from a JSON value.
    fn from_json<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;
}

/// `#[serde(deserialize_with = "…")]` for a float field of a JSON document from PostgreSQL.
pub fn floats<'de, D: Deserializer<'de>, T: JsonNumbers>(d: D) -> Result<T, D::Error> {
    T::from_json(d)
}

/// `#[serde(deserialize_with = "…")]` for a `numeric` field of a JSON document from
/// PostgreSQL, read exactly into `Decimal`.
#[cfg(feature = "decimal")]
pub fn decimals<'de, D: Deserializer<'de>, T: JsonNumbers>(d: D) -> Result<T, D::Error> {
    T::from_json(d)
}

#[cfg(feature = "decimal")]
impl JsonNumbers for rust_decimal::Decimal {
    fn from_json<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Note: `RawValue` is the number's text as PostgreSQL wrote it (`numeric_out`: no
        // exponent), so nothing passes through a float.
        let raw = Box::<serde_json::value::RawValue>::deserialize(d)?;
        let text = raw.get();
        if text.starts_with('"') {
            return Err(de::Error::custom(format_args!(
                "numeric {text} has no rust_decimal::Decimal value: filter it out in SQL, or \
                 cast it (`::text`) to read it as a String"
            )));
        }
        rust_decimal::Decimal::from_str_exact(text).map_err(|e| {
            de::Error::custom(format_args!(
                "numeric {text} does not fit rust_decimal::Decimal exactly ({e}): round it in \
                 SQL (`round(x, 2)`), or cast it (`::text`) to read it as a String"
            ))
        })
    }
}

/// One float: a JSON number, or one of the strings PostgreSQL writes for NaN and infinities.
struct Number<F>(PhantomData<F>);

impl<F: From<f32> + FromF64> Visitor<'_> for Number<F> {
    type Value = F;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number, \"NaN\", \"Infinity\" or \"-Infinity\"")
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<F, E> {
        Ok(F::from_f64(v))
    }
    #[expect(
        clippy::cast_precision_loss,
        reason = "a JSON integer read as a float, as serde itself reads it"
    )]
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<F, E> {
        Ok(F::from_f64(v as f64))
    }
    #[expect(
        clippy::cast_precision_loss,
        reason = "a JSON integer read as a float, as serde itself reads it"
    )]
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<F, E> {
        Ok(F::from_f64(v as f64))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<F, E> {
        match v {
            "NaN" => Ok(F::from(f32::NAN)),
            "Infinity" => Ok(F::from(f32::INFINITY)),
            "-Infinity" => Ok(F::from(f32::NEG_INFINITY)),
            _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
        }
    }
}

/// `f64` → `f32` or `f64`, as serde converts a JSON number.
pub trait FromF64 {
    /// The nearest value of this type.
    fn from_f64(v: f64) -> Self;
}

impl FromF64 for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
}

impl FromF64 for f32 {
    #[expect(
        clippy::cast_possible_truncation,
        reason = "float4 values round-trip through f64 exactly; serde narrows the same way"
    )]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

impl JsonNumbers for f64 {
    fn from_json<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Number::<f64>(PhantomData))
    }
}

impl JsonNumbers for f32 {
    fn from_json<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Number::<f32>(PhantomData))
    }
}

/// Adapts a [`JsonNumbers`] type to `Deserialize`, for the elements of `Option` and `Vec`.
struct Via<T>(T);

impl<'de, T: JsonNumbers> Deserialize<'de> for Via<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::from_json(d).map(Via)
    }
}

impl<T: JsonNumbers> JsonNumbers for Option<T> {
    fn from_json<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Option::<Via<T>>::deserialize(d).map(|v| v.map(|Via(x)| x))
    }
}

impl<T: JsonNumbers> JsonNumbers for Vec<T> {
    fn from_json<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<Via<T>>::deserialize(d).map(|v| v.into_iter().map(|Via(x)| x).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    struct Sample {
        #[serde(deserialize_with = "floats")]
        a: f64,
        #[serde(deserialize_with = "floats")]
        b: Option<f32>,
        #[serde(deserialize_with = "floats")]
        c: Vec<Option<f64>>,
    }

    #[test]
    fn numbers_and_the_strings_postgresql_writes_for_nan_and_infinities() {
        let s: Sample = serde_json::from_str(
            r#"{"a": "NaN", "b": 1.5, "c": [2, "Infinity", null, "-Infinity", 0.1]}"#,
        )
        .expect("valid");
        assert!(s.a.is_nan());
        assert_eq!(s.b, Some(1.5));
        assert_eq!(
            s.c,
            [
                Some(2.0),
                Some(f64::INFINITY),
                None,
                Some(f64::NEG_INFINITY),
                Some(0.1)
            ]
        );
        let s: Sample = serde_json::from_str(r#"{"a": 1e308, "b": null, "c": []}"#).expect("valid");
        assert_eq!((s.a, s.b), (1e308, None));
        let e = serde_json::from_str::<Sample>(r#"{"a": "one", "b": null, "c": []}"#).unwrap_err();
        assert!(e.to_string().contains("\"NaN\""), "{e}");
    }

    #[cfg(feature = "decimal")]
    #[test]
    fn numerics_keep_every_digit_or_fail() {
        use rust_decimal::Decimal;
        #[derive(serde::Deserialize, Debug)]
        struct Prices {
            #[serde(deserialize_with = "decimals")]
            p: Decimal,
            #[serde(deserialize_with = "decimals")]
            q: Vec<Option<Decimal>>,
        }
        let s: Prices = serde_json::from_str(
            r#"{"p": 12345678901234567890.12345678, "q": [1.50, null, -0.000001]}"#,
        )
        .expect("valid");
        assert_eq!(s.p.to_string(), "12345678901234567890.12345678");
        assert_eq!(s.q[0].map(|d| d.to_string()).as_deref(), Some("1.50"));
        assert_eq!(s.q[1], None);
        assert_eq!(s.q[2], Some(Decimal::new(-1, 6)));
        for bad in [
            r#"{"p": "NaN", "q": []}"#,
            r#"{"p": 1234567890123456789012345678901, "q": []}"#,
        ] {
            let e = serde_json::from_str::<Prices>(bad).unwrap_err().to_string();
            assert!(e.contains("::text"), "{e}");
        }
    }
}
