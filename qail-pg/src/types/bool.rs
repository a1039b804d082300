//! `bool` ↔ `bool`: one byte, 0 or 1.

use super::{ArrayElement, BoxError, Decode, Encode, IsNull, Oid, encode_checked, fixed, oid};

impl Encode for bool {
    fn encode(&self, _: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        buf.push(u8::from(*self));
        Ok(IsNull::No)
    }
    fn accepts(ty: Oid) -> bool {
        ty == oid::BOOL
    }
    fn type_oid(&self) -> Oid {
        oid::BOOL
    }
    encode_checked!();
}

impl ArrayElement for bool {
    const ARRAY_OID: Oid = oid::BOOL_ARRAY;
}

impl Decode<'_> for bool {
    fn accepts(ty: Oid) -> bool {
        ty == oid::BOOL
    }
    fn decode(ty: Oid, raw: &[u8]) -> Result<Self, BoxError> {
        // Note: boolrecv treats any non-zero byte as true; so do we.
        let [b] = fixed::<1>(ty, raw)?;
        Ok(b != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{dec, enc};
    use super::*;

    #[test]
    fn bytes() {
        assert_eq!(enc(&true, oid::BOOL), Some(vec![1]));
        assert_eq!(enc(&false, oid::BOOL), Some(vec![0]));
        assert_eq!(dec::<bool>(oid::BOOL, &[1]), Ok(true));
        assert_eq!(dec::<bool>(oid::BOOL, &[0]), Ok(false));
    }

    #[test]
    fn wrong_type_and_length_are_errors() {
        assert!(
            dec::<bool>(oid::INT4, &[0, 0, 0, 1])
                .unwrap_err()
                .contains("int4")
        );
        assert!(dec::<bool>(oid::BOOL, &[]).is_err());
        assert!(!<bool as Encode>::accepts(oid::INT2));
    }
}
