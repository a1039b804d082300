//! `bytea` ↔ `Vec<u8>`, `&[u8]`, `Cow<[u8]>`: the raw bytes.

use std::borrow::Cow;

use super::{ArrayElement, BoxError, Decode, Encode, IsNull, Oid, encode_checked, oid};

/// Implements `Encode` for a byte container.
macro_rules! bytes {
    ($rust:ty) => {
        impl Encode for $rust {
            fn encode(&self, _: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
                buf.extend_from_slice(self);
                Ok(IsNull::No)
            }
            fn accepts(ty: Oid) -> bool {
                ty == oid::BYTEA
            }
            fn type_oid(&self) -> Oid {
                oid::BYTEA
            }
            encode_checked!();
        }

        impl ArrayElement for $rust {
            const ARRAY_OID: Oid = oid::BYTEA_ARRAY;
        }
    };
}

bytes!(Vec<u8>);
bytes!(&[u8]);
bytes!(Cow<'_, [u8]>);

/// Implements `Decode` for a byte container built from `&'r [u8]`.
macro_rules! decode_bytes {
    ($rust:ty) => {
        impl<'r> Decode<'r> for $rust {
            fn accepts(ty: Oid) -> bool {
                ty == oid::BYTEA
            }
            fn decode(_: Oid, raw: &'r [u8]) -> Result<Self, BoxError> {
                Ok(raw.into())
            }
        }
    };
}

decode_bytes!(Vec<u8>);
decode_bytes!(&'r [u8]);
decode_bytes!(Cow<'r, [u8]>);

#[cfg(test)]
mod tests {
    use super::super::tests::{dec, enc};
    use super::*;

    #[test]
    fn bytes_pass_unchanged() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(enc(&all, oid::BYTEA).as_deref(), Some(&all[..]));
        assert_eq!(enc(&&all[..], oid::BYTEA).as_deref(), Some(&all[..]));
        assert_eq!(dec::<Vec<u8>>(oid::BYTEA, &all), Ok(all.clone()));
        assert_eq!(dec::<&[u8]>(oid::BYTEA, b""), Ok(&b""[..]));
        assert!(matches!(
            dec::<Cow<[u8]>>(oid::BYTEA, b"z"),
            Ok(Cow::Borrowed(b"z"))
        ));
    }

    #[test]
    fn text_is_not_bytea() {
        assert!(dec::<Vec<u8>>(oid::TEXT, b"a").is_err());
        assert!(!<&[u8] as Encode>::accepts(oid::TEXT));
    }
}
