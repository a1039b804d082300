//! Execute (frontend `E`): runs a portal.

use super::EncodeError;
use super::write::{cstr, tagged};

/// Runs portal `portal`, returning at most `max_rows` rows (0: all).
#[derive(Debug, Clone, Copy)]
pub struct Execute<'a> {
    /// The portal name (empty: the unnamed portal).
    pub portal: &'a str,
    /// The row limit; 0 means no limit.
    pub max_rows: u32,
}

impl Execute<'_> {
    /// Appends the message to `buf`.
    pub fn encode(&self, buf: &mut Vec<u8>) -> Result<(), EncodeError> {
        let max_rows = i32::try_from(self.max_rows).map_err(|_| EncodeError::Invalid {
            field: "the row limit",
            reason: "is above i32::MAX; use 0 for no limit",
        })?;
        tagged(buf, b'E', |buf| {
            cstr(buf, self.portal, "the portal name")?;
            buf.extend_from_slice(&max_rows.to_be_bytes());
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_byte_exact() {
        const EXPECTED: &[u8] = b"E\0\0\0\x09\0\0\0\0\0";
        let mut buf = Vec::new();
        Execute {
            portal: "",
            max_rows: 0,
        }
        .encode(&mut buf)
        .unwrap();
        assert_eq!(buf, EXPECTED);
        assert!(
            Execute {
                portal: "",
                max_rows: u32::MAX
            }
            .encode(&mut buf)
            .is_err()
        );
    }
}
