//! ParameterStatus (backend `S`): a run-time parameter's current value.

use super::DecodeError;
use super::reader::Reader;

/// A server parameter report (`server_version`, `client_encoding`, `TimeZone`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParameterStatus<'a> {
    /// The parameter name.
    pub name: &'a str,
    /// Its value.
    pub value: &'a str,
}

impl<'a> ParameterStatus<'a> {
    /// Decodes the body of an `S` message.
    pub fn decode(body: &'a [u8]) -> Result<ParameterStatus<'a>, DecodeError> {
        let mut r = Reader::new(body, "ParameterStatus");
        let p = ParameterStatus {
            name: r.cstr()?,
            value: r.cstr()?,
        };
        r.finish()?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes() {
        let p = ParameterStatus::decode(b"server_version\x0015.2\0").unwrap();
        assert_eq!((p.name, p.value), ("server_version", "15.2"));
    }

    #[test]
    fn refuses_malformed() {
        assert!(ParameterStatus::decode(b"a\0").is_err());
        assert!(ParameterStatus::decode(b"a\0b\0c").is_err());
    }
}
