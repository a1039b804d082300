//! Describe (frontend `D`): asks for a statement's or portal's parameter and row description.

use super::write::{cstr, tagged};
use super::{EncodeError, Target};

/// Describes statement or portal `name`.
#[derive(Debug, Clone, Copy)]
pub struct Describe<'a> {
    /// A statement or a portal.
    pub target: Target,
    /// Its name (empty: the unnamed one).
    pub name: &'a str,
}

impl Describe<'_> {
    /// Appends the message to `buf`.
    pub fn encode(&self, buf: &mut Vec<u8>) -> Result<(), EncodeError> {
        tagged(buf, b'D', |buf| {
            buf.push(self.target.byte());
            cstr(buf, self.name, "the statement or portal name")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_byte_exact() {
        const EXPECTED: &[u8] = b"D\0\0\0\x08Ss1\0";
        let mut buf = Vec::new();
        Describe {
            target: Target::Statement,
            name: "s1",
        }
        .encode(&mut buf)
        .unwrap();
        assert_eq!(buf, EXPECTED);
    }
}
