//! `bytea` ↔ `Vec<u8>`, `&[u8]`, `Cow<[u8]>`: the raw bytes.

use std::borrow::Cow;

use super::{oid, put_bytes, scalar_type};

scalar_type!(Vec<u8> => oid::BYTEA, array oid::BYTEA_ARRAY,
    encode(|v, _, buf| put_bytes(buf, v)),
    decode(|_, raw| Ok(raw.into())));

scalar_type!(<'r> &'r [u8] => oid::BYTEA, array oid::BYTEA_ARRAY,
    encode(|v, _, buf| put_bytes(buf, v)),
    decode(|_, raw| Ok(raw)));

scalar_type!(<'r> Cow<'r, [u8]> => oid::BYTEA, array oid::BYTEA_ARRAY,
    encode(|v, _, buf| put_bytes(buf, v)),
    decode(|_, raw| Ok(raw.into())));

#[cfg(test)]
mod tests {
    use super::super::Encode;
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
