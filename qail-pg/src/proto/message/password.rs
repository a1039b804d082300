//! PasswordMessage (frontend `p`): a cleartext or MD5-hashed password.

use super::EncodeError;
use super::write::{cbytes, tagged};

/// A password answer to AuthenticationCleartextPassword or AuthenticationMD5Password.
#[derive(Clone, Copy)]
pub struct PasswordMessage<'a> {
    /// The password, or `md5…` hash, without a trailing NUL.
    pub password: &'a [u8],
}

impl std::fmt::Debug for PasswordMessage<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PasswordMessage { .. }")
    }
}

impl PasswordMessage<'_> {
    /// Appends the message to `buf`.
    pub fn encode(&self, buf: &mut Vec<u8>) -> Result<(), EncodeError> {
        tagged(buf, b'p', |buf| cbytes(buf, self.password, "the password"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_byte_exact() {
        const EXPECTED: &[u8] = b"p\0\0\0\x0ahello\0";
        let mut buf = Vec::new();
        PasswordMessage { password: b"hello" }
            .encode(&mut buf)
            .unwrap();
        assert_eq!(buf, EXPECTED);
    }

    #[test]
    fn refuses_nul() {
        let mut buf = Vec::new();
        let err = PasswordMessage { password: b"a\0" }
            .encode(&mut buf)
            .unwrap_err();
        assert!(!err.to_string().contains('a'.to_string().repeat(2).as_str()));
        assert!(buf.is_empty());
    }
}
