//! `uuid` ↔ `uuid::Uuid` (feature `uuid`): the 16 bytes in order.

use uuid::Uuid;

use super::{ArrayElement, BoxError, Decode, Encode, IsNull, Oid, encode_checked, fixed, oid};

impl Encode for Uuid {
    fn encode(&self, _: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        buf.extend_from_slice(self.as_bytes());
        Ok(IsNull::No)
    }
    fn accepts(ty: Oid) -> bool {
        ty == oid::UUID
    }
    fn type_oid(&self) -> Oid {
        oid::UUID
    }
    encode_checked!();
}

impl ArrayElement for Uuid {
    const ARRAY_OID: Oid = oid::UUID_ARRAY;
}

impl Decode<'_> for Uuid {
    fn accepts(ty: Oid) -> bool {
        ty == oid::UUID
    }
    fn decode(ty: Oid, raw: &[u8]) -> Result<Self, BoxError> {
        Ok(Uuid::from_bytes(fixed(ty, raw)?))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{dec, enc};
    use super::*;

    #[test]
    fn sixteen_bytes_in_order() {
        let u = Uuid::parse_str("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11").expect("valid uuid");
        let raw = enc(&u, oid::UUID).expect("not null");
        assert_eq!(raw[..3], [0xa0, 0xee, 0xbc]);
        assert_eq!(raw.len(), 16);
        assert_eq!(dec::<Uuid>(oid::UUID, &raw), Ok(u));
        assert!(dec::<Uuid>(oid::UUID, &raw[..15]).is_err());
        assert!(dec::<Uuid>(oid::TEXT, &raw).is_err());
    }
}
