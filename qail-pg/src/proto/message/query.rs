//! Query (frontend `Q`): the simple query protocol.

use super::EncodeError;
use super::write::{cstr, tagged};

/// One or more SQL statements separated by semicolons, run with text results.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    /// The SQL text.
    pub sql: &'a str,
}

impl Query<'_> {
    /// Appends the message to `buf`.
    pub fn encode(&self, buf: &mut Vec<u8>) -> Result<(), EncodeError> {
        tagged(buf, b'Q', |buf| cstr(buf, self.sql, "the query text"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_byte_exact() {
        const EXPECTED: &[u8] = b"Q\0\0\0\x0dSELECT 1\0";
        let mut buf = Vec::new();
        Query { sql: "SELECT 1" }.encode(&mut buf).unwrap();
        assert_eq!(buf, EXPECTED);
    }

    #[test]
    fn refuses_nul() {
        let mut buf = Vec::new();
        let err = Query { sql: "SELECT '\0'" }.encode(&mut buf).unwrap_err();
        assert!(err.to_string().contains("query text"));
        assert!(buf.is_empty());
    }
}
