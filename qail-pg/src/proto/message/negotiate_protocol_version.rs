//! NegotiateProtocolVersion (backend `v`).

use super::DecodeError;
use super::reader::Reader;

/// The server does not support the requested minor version or some protocol options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NegotiateProtocolVersion<'a> {
    /// The newest minor protocol version the server supports.
    pub newest_minor: i32,
    /// Protocol options (`_pq_.…`) the server did not recognize.
    pub unrecognized: Vec<&'a str>,
}

impl<'a> NegotiateProtocolVersion<'a> {
    /// Decodes the body of a `v` message.
    pub fn decode(body: &'a [u8]) -> Result<NegotiateProtocolVersion<'a>, DecodeError> {
        let mut r = Reader::new(body, "NegotiateProtocolVersion");
        let newest_minor = r.i32()?;
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
            newest_minor,
            unrecognized,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes() {
        let n = NegotiateProtocolVersion::decode(b"\0\0\0\0\0\0\0\x01_pq_.x\0").unwrap();
        assert_eq!(n.newest_minor, 0);
        assert_eq!(n.unrecognized, ["_pq_.x"]);
    }

    #[test]
    fn refuses_malformed() {
        assert!(NegotiateProtocolVersion::decode(b"\0\0\0\0\xff\xff\xff\xff").is_err());
        assert!(NegotiateProtocolVersion::decode(b"\0\0\0\0\0\0\0\x02a\0").is_err());
        assert!(NegotiateProtocolVersion::decode(b"\0\0\0\0\x7f\0\0\0").is_err());
    }
}
