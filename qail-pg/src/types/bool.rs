//! `bool` ↔ `bool`: one byte, 0 or 1.

use super::{fixed, oid, put_bytes, scalar_type};

scalar_type!(bool => oid::BOOL, array oid::BOOL_ARRAY,
encode(|&v, _, buf| put_bytes(buf, &[u8::from(v)])),
decode(|ty, raw| {
    // Note: boolrecv treats any non-zero byte as true; so do we.
    let [b] = fixed::<1>(ty, raw)?;
    Ok(b != 0)
}));

#[cfg(test)]
mod tests {
    use super::super::Encode;
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
