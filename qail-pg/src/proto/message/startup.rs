//! StartupMessage (frontend, untagged).

use super::EncodeError;
use super::write::{cstr, untagged};
use crate::proto::ProtocolVersion;

/// The first message of a session: protocol version and `name=value` parameters
/// (`user`, `database`, `application_name`, `options`, `client_encoding`, …).
#[derive(Debug, Clone, Copy)]
pub struct Startup<'a> {
    /// The protocol version requested (`max_protocol_version`); a server that does not
    /// speak it answers with NegotiateProtocolVersion.
    pub version: ProtocolVersion,
    /// Parameter names and values, in order.
    pub params: &'a [(&'a str, &'a str)],
}

impl Startup<'_> {
    /// Appends the message to `buf`.
    pub fn encode(&self, buf: &mut Vec<u8>) -> Result<(), EncodeError> {
        untagged(buf, |buf| {
            buf.extend_from_slice(&self.version.code().to_be_bytes());
            for (name, value) in self.params {
                if name.is_empty() {
                    return Err(EncodeError::Invalid {
                        field: "a startup parameter name",
                        reason: "is empty; give every startup parameter a name",
                    });
                }
                cstr(buf, name, "a startup parameter name")?;
                cstr(buf, value, "a startup parameter value")?;
            }
            buf.push(0);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_byte_exact() {
        const EXPECTED: &[u8] = b"\0\0\0\x1c\0\x03\0\0user\0bob\0database\0\0\0";
        let mut buf = Vec::new();
        Startup {
            version: ProtocolVersion::V3_0,
            params: &[("user", "bob"), ("database", "")],
        }
        .encode(&mut buf)
        .unwrap();
        assert_eq!(buf, EXPECTED);
    }

    #[test]
    fn encodes_protocol_3_2_byte_exact() {
        const EXPECTED: &[u8] = b"\0\0\0\x12\0\x03\0\x02user\0bob\0\0";
        let mut buf = Vec::new();
        Startup {
            version: ProtocolVersion::V3_2,
            params: &[("user", "bob")],
        }
        .encode(&mut buf)
        .unwrap();
        assert_eq!(buf, EXPECTED);
    }

    #[test]
    fn refuses_nul_and_leaves_buffer_untouched() {
        let mut buf = b"keep".to_vec();
        let err = Startup {
            version: ProtocolVersion::V3_0,
            params: &[("user", "b\0b")],
        }
        .encode(&mut buf)
        .unwrap_err();
        assert!(matches!(err, EncodeError::Nul { .. }));
        assert_eq!(buf, b"keep");
    }
}
