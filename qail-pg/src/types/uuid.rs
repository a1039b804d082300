//! `uuid` ↔ `uuid::Uuid` (feature `uuid`): the 16 bytes in order.

use uuid::Uuid;

use super::{fixed, oid, put_bytes, scalar_type};

scalar_type!(Uuid => oid::UUID, array oid::UUID_ARRAY,
    encode(|v, _, buf| put_bytes(buf, v.as_bytes())),
    decode(|ty, raw| fixed(ty, raw).map(Uuid::from_bytes)));

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
