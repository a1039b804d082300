//! Parsing the server's SCRAM messages (RFC 5802 §7) and escaping the client's.
//!
//! Both server messages are untrusted: every attribute is checked and nothing is indexed
//! unchecked.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use crate::proto::auth::AuthError;

/// The most characters of a server's `e=` value kept in [`AuthError::Server`].
const MAX_SERVER_ERROR_CHARS: usize = 100;

/// The parts of a server-first-message.
pub(super) struct ServerFirst<'a> {
    /// The whole message, which enters the AuthMessage as it is.
    pub(super) text: &'a str,
    /// The combined nonce: the client's followed by the server's.
    pub(super) nonce: &'a str,
    pub(super) salt: Vec<u8>,
    pub(super) iterations: u32,
}

/// Whether `b` may appear in a nonce: `printable` of RFC 5802 §7 (0x21–0x7E except `,`).
pub(super) fn is_nonce_char(b: u8) -> bool {
    matches!(b, 0x21..=0x7e) && b != b','
}

/// `saslname` of RFC 5802 §7: `=` and `,` are escaped as `=3D` and `=2C`.
pub(super) fn escape_user(user: &str) -> String {
    user.replace('=', "=3D").replace(',', "=2C")
}

/// Parses `server-first-message = [reserved-mext ","] nonce "," salt "," iteration-count
/// ["," extensions]`.
pub(super) fn parse_server_first(message: &[u8]) -> Result<ServerFirst<'_>, AuthError> {
    let text = std::str::from_utf8(message)
        .map_err(|_| AuthError::malformed_first("it is not valid UTF-8"))?;
    let mut attrs = text.split(',');
    let first = attrs.next().unwrap_or_default();
    if first.starts_with("m=") {
        return Err(AuthError::malformed_first(
            "it requires a mandatory extension (m=) that this client does not support",
        ));
    }
    let nonce = first
        .strip_prefix("r=")
        .ok_or(AuthError::malformed_first("the nonce (r=) is missing"))?;
    if nonce.is_empty() || !nonce.bytes().all(is_nonce_char) {
        return Err(AuthError::malformed_first(
            "the nonce (r=) has characters outside printable ASCII",
        ));
    }
    let salt = attrs
        .next()
        .and_then(|a| a.strip_prefix("s="))
        .ok_or(AuthError::malformed_first("the salt (s=) is missing"))?;
    let salt = BASE64
        .decode(salt)
        .map_err(|_| AuthError::malformed_first("the salt (s=) is not valid base64"))?;
    let iterations =
        attrs
            .next()
            .and_then(|a| a.strip_prefix("i="))
            .ok_or(AuthError::malformed_first(
                "the iteration count (i=) is missing",
            ))?;
    let iterations = parse_decimal(iterations).ok_or(AuthError::malformed_first(
        "the iteration count (i=) is not a decimal number below 2^32",
    ))?;
    // Any further attributes are extensions, which RFC 5802 lets the client ignore.
    Ok(ServerFirst {
        text,
        nonce,
        salt,
        iterations,
    })
}

/// Parses `server-final-message = (server-error / verifier) ["," extensions]` and returns
/// the decoded server signature, or the server's error as [`AuthError::Server`].
pub(super) fn parse_server_final(message: &[u8]) -> Result<Vec<u8>, AuthError> {
    let text = std::str::from_utf8(message)
        .map_err(|_| AuthError::malformed_final("it is not valid UTF-8"))?;
    let first = text.split(',').next().unwrap_or_default();
    if let Some(error) = first.strip_prefix("e=") {
        let shown = error
            .chars()
            .filter(|c| !c.is_control())
            .take(MAX_SERVER_ERROR_CHARS)
            .collect();
        return Err(AuthError::Server(shown));
    }
    let verifier = first.strip_prefix("v=").ok_or(AuthError::malformed_final(
        "it has neither a verifier (v=) nor an error (e=)",
    ))?;
    BASE64
        .decode(verifier)
        .map_err(|_| AuthError::malformed_final("the verifier (v=) is not valid base64"))
}

/// A non-empty string of ASCII digits as a `u32`; no sign, no spaces.
fn parse_decimal(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}
