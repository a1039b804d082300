//! Parse (frontend `P`): prepares a statement.

use super::EncodeError;
use super::write::{count16, cstr, tagged};
use crate::types::Oid;

/// Prepares `query` as statement `name` (empty: the unnamed statement).
#[derive(Debug, Clone, Copy)]
pub struct Parse<'a> {
    /// The statement name.
    pub name: &'a str,
    /// The SQL text, with `$n` placeholders.
    pub query: &'a str,
    /// Parameter types fixed by the client; 0 or missing lets the server infer.
    pub param_types: &'a [Oid],
}

impl Parse<'_> {
    /// Appends the message to `buf`.
    pub fn encode(&self, buf: &mut Vec<u8>) -> Result<(), EncodeError> {
        tagged(buf, b'P', |buf| {
            cstr(buf, self.name, "the statement name")?;
            cstr(buf, self.query, "the query text")?;
            count16(buf, self.param_types.len(), "parameter types")?;
            for ty in self.param_types {
                buf.extend_from_slice(&ty.to_be_bytes());
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_byte_exact() {
        const EXPECTED: &[u8] = b"P\0\0\0\x17s1\0SELECT $1\0\0\x01\0\0\0\x17";
        let mut buf = Vec::new();
        Parse {
            name: "s1",
            query: "SELECT $1",
            param_types: &[23],
        }
        .encode(&mut buf)
        .unwrap();
        assert_eq!(buf, EXPECTED);
    }

    #[test]
    fn refuses_too_many_types_before_writing() {
        let mut buf = Vec::new();
        let types = vec![0; 65536];
        let err = Parse {
            name: "",
            query: "",
            param_types: &types,
        }
        .encode(&mut buf)
        .unwrap_err();
        assert!(matches!(err, EncodeError::TooMany { count: 65536, .. }));
        assert!(buf.is_empty());
    }
}
