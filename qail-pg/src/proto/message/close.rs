//! Close (frontend `C`): closes a prepared statement or a portal.

use super::write::{cstr, tagged};
use super::{EncodeError, Target};

/// Closes statement or portal `name`.
#[derive(Debug, Clone, Copy)]
pub struct Close<'a> {
    /// A statement or a portal.
    pub target: Target,
    /// Its name.
    pub name: &'a str,
}

impl Close<'_> {
    /// Appends the message to `buf`.
    pub fn encode(&self, buf: &mut Vec<u8>) -> Result<(), EncodeError> {
        tagged(buf, b'C', |buf| {
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
        const EXPECTED: &[u8] = b"C\0\0\0\x07Pp\0";
        let mut buf = Vec::new();
        Close {
            target: Target::Portal,
            name: "p",
        }
        .encode(&mut buf)
        .unwrap();
        assert_eq!(buf, EXPECTED);
    }
}
