//! Authentication* (backend `R`).

use super::DecodeError;
use super::reader::Reader;

/// A request or answer of the server during authentication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authentication<'a> {
    /// AuthenticationOk (0): authentication succeeded.
    Ok,
    /// AuthenticationCleartextPassword (3).
    CleartextPassword,
    /// AuthenticationMD5Password (5), with the 4-byte salt.
    Md5Password {
        /// The salt.
        salt: [u8; 4],
    },
    /// AuthenticationSASL (10), with the mechanisms the server offers.
    Sasl {
        /// Mechanism names, e.g. `SCRAM-SHA-256-PLUS`, `SCRAM-SHA-256`.
        mechanisms: Vec<&'a str>,
    },
    /// AuthenticationSASLContinue (11), with the server's challenge.
    SaslContinue {
        /// The mechanism's data.
        data: &'a [u8],
    },
    /// AuthenticationSASLFinal (12), with the server's final message.
    SaslFinal {
        /// The mechanism's data.
        data: &'a [u8],
    },
    /// A method qail-pg does not implement (Kerberos, GSSAPI, SSPI), by its code.
    Unsupported {
        /// The authentication code.
        code: i32,
    },
}

impl<'a> Authentication<'a> {
    /// Decodes the body of an `R` message.
    pub fn decode(body: &'a [u8]) -> Result<Authentication<'a>, DecodeError> {
        let mut r = Reader::new(body, "Authentication");
        let auth = match r.i32()? {
            0 => Authentication::Ok,
            3 => Authentication::CleartextPassword,
            5 => {
                let salt = r.bytes(4)?;
                let salt = <[u8; 4]>::try_from(salt)
                    .map_err(|_| DecodeError::new("AuthenticationMD5Password has no salt"))?;
                Authentication::Md5Password { salt }
            }
            10 => {
                let mut mechanisms = Vec::new();
                loop {
                    let name = r.cstr()?;
                    if name.is_empty() {
                        break;
                    }
                    mechanisms.push(name);
                }
                Authentication::Sasl { mechanisms }
            }
            11 => Authentication::SaslContinue { data: r.rest() },
            12 => Authentication::SaslFinal { data: r.rest() },
            code => {
                r.rest();
                Authentication::Unsupported { code }
            }
        };
        r.finish()?;
        Ok(auth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_every_kind() {
        assert_eq!(
            Authentication::decode(b"\0\0\0\0").unwrap(),
            Authentication::Ok
        );
        assert_eq!(
            Authentication::decode(b"\0\0\0\x03").unwrap(),
            Authentication::CleartextPassword
        );
        assert_eq!(
            Authentication::decode(b"\0\0\0\x05abcd").unwrap(),
            Authentication::Md5Password { salt: *b"abcd" }
        );
        assert_eq!(
            Authentication::decode(b"\0\0\0\x0aSCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0\0").unwrap(),
            Authentication::Sasl {
                mechanisms: vec!["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"]
            }
        );
        assert_eq!(
            Authentication::decode(b"\0\0\0\x0br=abc").unwrap(),
            Authentication::SaslContinue { data: b"r=abc" }
        );
        assert_eq!(
            Authentication::decode(b"\0\0\0\x0cv=xyz").unwrap(),
            Authentication::SaslFinal { data: b"v=xyz" }
        );
        assert_eq!(
            Authentication::decode(b"\0\0\0\x07").unwrap(),
            Authentication::Unsupported { code: 7 }
        );
    }

    #[test]
    fn refuses_malformed() {
        assert!(Authentication::decode(b"\0\0").is_err());
        assert!(Authentication::decode(b"\0\0\0\x05ab").is_err());
        assert!(Authentication::decode(b"\0\0\0\x05abcde").is_err());
        assert!(Authentication::decode(b"\0\0\0\x0aSCRAM").is_err());
        assert!(Authentication::decode(b"\0\0\0\0x").is_err());
    }
}
