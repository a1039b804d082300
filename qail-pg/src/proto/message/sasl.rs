//! SASLInitialResponse and SASLResponse (frontend `p`).

use super::EncodeError;
use super::write::{cstr, len32, tagged};

/// The client's first SASL message: the chosen mechanism and its first data.
#[derive(Debug, Clone, Copy)]
pub struct SaslInitialResponse<'a> {
    /// `SCRAM-SHA-256` or `SCRAM-SHA-256-PLUS`.
    pub mechanism: &'a str,
    /// The mechanism's client-first message.
    pub data: &'a [u8],
}

impl SaslInitialResponse<'_> {
    /// Appends the message to `buf`.
    pub fn encode(&self, buf: &mut Vec<u8>) -> Result<(), EncodeError> {
        tagged(buf, b'p', |buf| {
            cstr(buf, self.mechanism, "the SASL mechanism")?;
            len32(buf, self.data.len(), "the SASL data")?;
            buf.extend_from_slice(self.data);
            Ok(())
        })
    }
}

/// A later SASL message from the client.
#[derive(Debug, Clone, Copy)]
pub struct SaslResponse<'a> {
    /// The mechanism's next message.
    pub data: &'a [u8],
}

impl SaslResponse<'_> {
    /// Appends the message to `buf`.
    pub fn encode(&self, buf: &mut Vec<u8>) -> Result<(), EncodeError> {
        tagged(buf, b'p', |buf| {
            buf.extend_from_slice(self.data);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_response_byte_exact() {
        const EXPECTED: &[u8] = b"p\0\0\0\x18SCRAM-SHA-256\0\0\0\0\x02ab";
        let mut buf = Vec::new();
        SaslInitialResponse {
            mechanism: "SCRAM-SHA-256",
            data: b"ab",
        }
        .encode(&mut buf)
        .unwrap();
        assert_eq!(buf, EXPECTED);
    }

    #[test]
    fn response_byte_exact() {
        const EXPECTED: &[u8] = b"p\0\0\0\x07c=x";
        let mut buf = Vec::new();
        SaslResponse { data: b"c=x" }.encode(&mut buf).unwrap();
        assert_eq!(buf, EXPECTED);
    }
}
