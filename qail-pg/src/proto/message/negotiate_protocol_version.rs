//! NegotiateProtocolVersion (backend `v`).
//!
//! See <https://www.postgresql.org/docs/18/protocol-message-formats.html#PROTOCOL-MESSAGE-FORMATS-NEGOTIATEPROTOCOLVERSION>.

use super::DecodeError;
use super::reader::Reader;

/// The server does not support the requested minor version or some protocol options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NegotiateProtocolVersion<'a> {
    /// The newest protocol version the server supports for the major version requested, as
    /// the StartupMessage spells versions: the major version in the high 16 bits, the minor in
    /// the low 16.
    ///
    /// Note: the message format documents this field as the minor version alone, but servers
    /// send the whole version (196608 for 3.0), and libpq reads it so.
    pub newest_version: i32,
    /// Protocol options (`_pq_.…`) the server did not recognize.
    pub unrecognized: Vec<&'a str>,
}

impl<'a> NegotiateProtocolVersion<'a> {
    /// Decodes the body of a `v` message.
    pub fn decode(body: &'a [u8]) -> Result<NegotiateProtocolVersion<'a>, DecodeError> {
        let mut r = Reader::new(body, "NegotiateProtocolVersion");
        let newest_version = r.i32()?;
        let count = usize::try_from(r.i32()?)
            .map_err(|_| DecodeError::new("NegotiateProtocolVersion has a negative count"))?;
        // Note: each option takes at least one byte, so a count larger than the body is a lie.
        if count > body.len() {
            return Err(DecodeError::new(
                "NegotiateProtocolVersion has too large a count",
            ));
        }
        let unrecognized = (0..count)
            .map(|_| r.cstr())
            .collect::<Result<Vec<_>, _>>()?;
        r.finish()?;
        Ok(NegotiateProtocolVersion {
            newest_version,
            unrecognized,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes() {
        // What PostgreSQL 17 answers a request for 3.2 with an option it lacks.
        let n = NegotiateProtocolVersion::decode(b"\0\x03\0\0\0\0\0\x01_pq_.x\0").unwrap();
        assert_eq!(n.newest_version, 196_608);
        assert_eq!(n.unrecognized, ["_pq_.x"]);
    }

    #[test]
    fn refuses_malformed() {
        assert!(NegotiateProtocolVersion::decode(b"\0\0\0\0\xff\xff\xff\xff").is_err());
        assert!(NegotiateProtocolVersion::decode(b"\0\0\0\0\0\0\0\x02a\0").is_err());
        assert!(NegotiateProtocolVersion::decode(b"\0\0\0\0\x7f\0\0\0").is_err());
    }
}
