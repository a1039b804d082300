//! `json` and `jsonb` ↔ `serde_json::Value` and [`Json<T>`] (feature `json`).
//!
//! `json`'s binary form is the JSON text; `jsonb`'s is a version byte (1) then the text
//! (`jsonb_send` in `src/backend/utils/adt/jsonb.c`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ArrayElement, BoxError, Decode, Encode, IsNull, Oid, encode_checked, oid};

/// The only `jsonb` binary format version PostgreSQL has defined.
const JSONB_VERSION: u8 = 1;

/// Whether `ty` is `json` or `jsonb`.
fn is_json(ty: Oid) -> bool {
    matches!(ty, oid::JSON | oid::JSONB)
}

/// Writes `value` as `json` or `jsonb`.
fn put<T: Serialize + ?Sized>(ty: Oid, value: &T, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
    if ty == oid::JSONB {
        buf.push(JSONB_VERSION);
    }
    serde_json::to_writer(&mut *buf, value).map_err(|e| {
        format!("a value could not be serialized to JSON ({e}): check its Serialize implementation")
    })?;
    Ok(IsNull::No)
}

/// Reads `json` or `jsonb` into `T`.
fn get<'r, T: Deserialize<'r>>(ty: Oid, raw: &'r [u8]) -> Result<T, BoxError> {
    from_text(ty, text(ty, raw)?)
}

/// The JSON text of a `json` or `jsonb` value.
#[inline]
fn text(ty: Oid, raw: &[u8]) -> Result<&[u8], BoxError> {
    Ok(if ty == oid::JSONB {
        match raw.split_first() {
            Some((&JSONB_VERSION, text)) => text,
            Some((v, _)) => {
                return Err(format!(
                    "a PostgreSQL `jsonb` value has binary format version {v}, which this \
                     driver does not know: read it as `::json` or `::text`"
                )
                .into());
            }
            None => {
                return Err(
                    "a PostgreSQL `jsonb` value is empty: the server sent a different type".into(),
                );
            }
        }
    } else {
        raw
    })
}

/// Deserializes JSON text into `T`.
fn from_text<'r, T: Deserialize<'r>>(ty: Oid, text: &'r [u8]) -> Result<T, BoxError> {
    serde_json::from_slice(text).map_err(|e| {
        format!(
            "a PostgreSQL `{}` value does not deserialize into Rust `{}` ({e}): read it as \
             `serde_json::Value` to see its shape, or fix the Rust type",
            oid::describe(ty),
            super::rust_name::<T>()
        )
        .into()
    })
}

impl Encode for Value {
    fn encode(&self, ty: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        put(ty, self, buf)
    }
    fn accepts(ty: Oid) -> bool {
        is_json(ty)
    }
    fn type_oid(&self) -> Oid {
        oid::JSONB
    }
    encode_checked!();
}

impl ArrayElement for Value {
    const ARRAY_OID: Oid = oid::JSONB_ARRAY;
}

impl Decode<'_> for Value {
    fn accepts(ty: Oid) -> bool {
        is_json(ty)
    }
    #[inline]
    fn decode(ty: Oid, raw: &[u8]) -> Result<Self, BoxError> {
        let text = text(ty, raw)?;
        match super::json_value::parse(text) {
            Some(value) => Ok(value),
            None => from_text(ty, text),
        }
    }
}

/// A value sent and read as `json`/`jsonb` through serde: `Json(my_struct)`.
///
/// As a parameter it is sent as `jsonb` unless the query fixes `json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Json<T>(pub T);

impl<T: Serialize> Encode for Json<T> {
    fn encode(&self, ty: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        put(ty, &self.0, buf)
    }
    fn accepts(ty: Oid) -> bool {
        is_json(ty)
    }
    fn type_oid(&self) -> Oid {
        oid::JSONB
    }
    encode_checked!();
}

impl<T> ArrayElement for Json<T> {
    const ARRAY_OID: Oid = oid::JSONB_ARRAY;
}

impl<'r, T: Deserialize<'r>> Decode<'r> for Json<T> {
    fn accepts(ty: Oid) -> bool {
        is_json(ty)
    }
    fn decode(ty: Oid, raw: &'r [u8]) -> Result<Self, BoxError> {
        get(ty, raw).map(Json)
    }
    /// SQL NULL is read as JSON `null`, so `Json<Option<T>>` reads it as `Json(None)`; any
    /// other `T` refuses it as [`Decode::decode_null`] does.
    fn decode_null(ty: Oid) -> Result<Self, BoxError> {
        match serde_json::from_slice(b"null") {
            Ok(value) => Ok(Json(value)),
            Err(_) => Err(format!(
                "unexpected NULL in a PostgreSQL `{}` value read as Rust `{}`: read it as \
                 `Json<Option<…>>` or `Option<Json<…>>`, or use COALESCE in SQL",
                oid::describe(ty),
                super::rust_name::<T>()
            )
            .into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{dec, enc};
    use super::*;
    use serde_json::json;

    #[test]
    fn jsonb_has_a_version_byte_and_json_does_not() {
        let v = json!({"a": [1, null]});
        assert_eq!(enc(&v, oid::JSONB), Some(b"\x01{\"a\":[1,null]}".to_vec()));
        assert_eq!(enc(&v, oid::JSON), Some(b"{\"a\":[1,null]}".to_vec()));
        assert_eq!(
            dec::<Value>(oid::JSONB, b"\x01{\"a\": [1, null]}"),
            Ok(v.clone())
        );
        assert_eq!(dec::<Value>(oid::JSON, b"{\"a\":[1,null]}"), Ok(v));
    }

    #[test]
    fn typed_values_through_serde() {
        #[derive(Serialize, Deserialize, Debug, PartialEq)]
        struct Port {
            name: String,
            berths: u16,
        }
        let p = Json(Port {
            name: "Kiel".into(),
            berths: 12,
        });
        let raw = enc(&p, oid::JSONB).expect("not null");
        assert_eq!(dec::<Json<Port>>(oid::JSONB, &raw), Ok(p));
        let err = dec::<Json<Port>>(oid::JSON, b"{\"name\":1}").unwrap_err();
        assert!(
            err.contains("does not deserialize into Rust `Port`"),
            "{err}"
        );
        assert_eq!(
            dec::<Json<&str>>(oid::JSON, b"\"borrowed\""),
            Ok(Json("borrowed"))
        );
    }

    #[test]
    fn null_is_json_null_for_options_only() {
        let none: Json<Option<Vec<i32>>> = Decode::decode_null(oid::JSON).expect("an Option");
        assert_eq!(none, Json(None));
        let e = <Json<Vec<i32>> as Decode>::decode_null(oid::JSONB).unwrap_err();
        assert!(e.to_string().contains("unexpected NULL"), "{e}");
    }

    #[test]
    fn bad_jsonb_versions_are_errors() {
        assert!(
            dec::<Value>(oid::JSONB, b"\x02{}")
                .unwrap_err()
                .contains("version 2")
        );
        assert!(dec::<Value>(oid::JSONB, b"").is_err());
        assert!(dec::<Value>(oid::TEXT, b"{}").is_err());
    }
}
