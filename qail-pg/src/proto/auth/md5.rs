//! MD5 password authentication (`AuthenticationMD5Password`).
//!
//! See <https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-START-UP>:
//! the client answers with `"md5" + hex(md5(hex(md5(password + user)) + salt))`.

use md5::{Digest, Md5};

/// The PasswordMessage payload for `AuthenticationMD5Password`.
///
/// `password` is used as given (no SASLprep: the server stores `md5(password + user)` of the
/// raw bytes); `salt` is the 4 bytes the server sent. The result is 35 ASCII characters:
/// `"md5"` followed by 32 lowercase hex digits.
pub fn md5_password(user: &str, password: &[u8], salt: [u8; 4]) -> String {
    let inner = stored_hash(user, password);
    let mut outer = Md5::new();
    outer.update(inner.as_bytes());
    outer.update(salt);
    let mut out = String::with_capacity(35);
    out.push_str("md5");
    push_hex(&mut out, &outer.finalize());
    out
}

/// `hex(md5(password + user))`: what `pg_authid.rolpassword` holds after the `md5` prefix.
fn stored_hash(user: &str, password: &[u8]) -> String {
    let mut hasher = Md5::new();
    hasher.update(password);
    hasher.update(user.as_bytes());
    let mut out = String::with_capacity(32);
    push_hex(&mut out, &hasher.finalize());
    out
}

fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Computed by PostgreSQL 15: `SET password_encryption = 'md5';
    // CREATE ROLE qail_auth_md5_vec PASSWORD 'pencil';` then pg_authid.rolpassword.
    const STORED: &str = "md5b904b4ab508f9e67ce22455680274e69";

    #[test]
    fn stored_hash_matches_the_server() {
        let stored = stored_hash("qail_auth_md5_vec", b"pencil");
        assert_eq!(format!("md5{stored}"), STORED);
    }

    #[test]
    fn salted_response() {
        let got = md5_password("qail_auth_md5_vec", b"pencil", [0x93, 0x1f, 0x00, 0xa2]);
        assert_eq!(got, "md57783a13d7831ee23ac7f2575b73aab78");
        let got = md5_password("postgres", b"secret", [1, 2, 3, 4]);
        assert_eq!(got, "md5bb41a296aab6baccb36ff243a562abff");
    }

    #[test]
    fn salt_and_user_change_the_answer() {
        let a = md5_password("u", b"p", [0, 0, 0, 0]);
        assert_ne!(a, md5_password("u", b"p", [0, 0, 0, 1]));
        assert_ne!(a, md5_password("v", b"p", [0, 0, 0, 0]));
        assert_eq!(a.len(), 35);
    }
}
