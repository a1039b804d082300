//! ParameterDescription (backend `t`): the types of a statement's parameters.

use super::DecodeError;
use super::reader::Reader;
use crate::types::Oid;

/// The parameter types of a described statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParameterDescription {
    /// One type OID per parameter.
    pub types: Vec<Oid>,
}

impl ParameterDescription {
    /// Decodes the body of a `t` message.
    pub fn decode(body: &[u8]) -> Result<ParameterDescription, DecodeError> {
        let mut r = Reader::new(body, "ParameterDescription");
        let count = r.count16()?;
        let types = (0..count).map(|_| r.u32()).collect::<Result<Vec<_>, _>>()?;
        r.finish()?;
        Ok(ParameterDescription { types })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes() {
        let p = ParameterDescription::decode(b"\0\x02\0\0\0\x17\0\0\0\x19").unwrap();
        assert_eq!(p.types, [23, 25]);
    }

    #[test]
    fn refuses_malformed() {
        assert!(ParameterDescription::decode(b"\0\x02\0\0\0\x17").is_err());
        assert!(ParameterDescription::decode(b"\xff\xff").is_err());
        assert!(ParameterDescription::decode(b"\0\0\0").is_err());
    }
}
