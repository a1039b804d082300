//! CopyInResponse (`G`), CopyOutResponse (`H`), CopyBothResponse (`W`).

use super::DecodeError;
use super::reader::Reader;

/// The server entered COPY mode; the formats of the data and of each column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyResponse {
    /// Whether the overall format is binary (else text).
    pub binary: bool,
    /// Per column: whether it is binary.
    pub column_binary: Vec<bool>,
}

impl CopyResponse {
    /// Decodes the body of a `G`, `H` or `W` message.
    pub fn decode(body: &[u8]) -> Result<CopyResponse, DecodeError> {
        let mut r = Reader::new(body, "CopyResponse");
        let binary = format(r.u8()?.into())?;
        let count = r.count16()?;
        let column_binary = (0..count)
            .map(|_| format(r.i16()?))
            .collect::<Result<Vec<_>, _>>()?;
        r.finish()?;
        Ok(CopyResponse {
            binary,
            column_binary,
        })
    }
}

fn format(code: i16) -> Result<bool, DecodeError> {
    match code {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(DecodeError::new(format!(
            "CopyResponse has format code {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes() {
        let c = CopyResponse::decode(b"\x01\0\x02\0\x01\0\x01").unwrap();
        assert!(c.binary);
        assert_eq!(c.column_binary, [true, true]);
    }

    #[test]
    fn refuses_malformed() {
        assert!(CopyResponse::decode(b"\x02\0\0").is_err());
        assert!(CopyResponse::decode(b"\0\0\x02\0\0").is_err());
        assert!(CopyResponse::decode(b"\0\xff\xff").is_err());
    }
}
