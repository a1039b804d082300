//! SASLprep (RFC 4013) of the SCRAM password, with PostgreSQL's fallback.
//!
//! PostgreSQL normalizes the password with SASLprep when it derives the SCRAM secret, and
//! when the password is not valid UTF-8 or SASLprep rejects it (prohibited or unassigned
//! code points, bidirectional rules) it uses the raw bytes instead
//! (`src/common/saslprep.c`, `pg_saslprep`). The client must do the same to agree.

use std::borrow::Cow;

/// The bytes of `password` that enter the SCRAM key derivation.
pub(crate) fn normalize(password: &[u8]) -> Cow<'_, [u8]> {
    let Ok(text) = std::str::from_utf8(password) else {
        return Cow::Borrowed(password);
    };
    match stringprep::saslprep(text) {
        Ok(Cow::Borrowed(same)) => Cow::Borrowed(same.as_bytes()),
        Ok(Cow::Owned(mapped)) => Cow::Owned(mapped.into_bytes()),
        // Note: PostgreSQL uses the password as is when SASLprep fails, so do we.
        Err(_) => Cow::Borrowed(password),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_is_unchanged() {
        assert_eq!(&*normalize(b"pencil"), b"pencil");
        assert!(matches!(normalize(b"pencil"), Cow::Borrowed(_)));
    }

    #[test]
    fn non_ascii_spaces_become_space() {
        // U+00A0 NO-BREAK SPACE and U+2003 EM SPACE map to U+0020 (RFC 4013 §2.1).
        assert_eq!(&*normalize("a\u{a0}b\u{2003}c".as_bytes()), b"a b c");
    }

    #[test]
    fn mapped_to_nothing_is_removed() {
        // U+00AD SOFT HYPHEN is "commonly mapped to nothing" (RFC 3454 B.1).
        assert_eq!(&*normalize("I\u{ad}X".as_bytes()), b"IX");
    }

    #[test]
    fn nfkc_is_applied() {
        // RFC 4013 §3 examples: U+00AA → "a", U+2168 (ROMAN NUMERAL NINE) → "IX".
        assert_eq!(&*normalize("\u{aa}".as_bytes()), b"a");
        assert_eq!(&*normalize("\u{2168}".as_bytes()), b"IX");
    }

    #[test]
    fn prohibited_characters_fall_back_to_raw_bytes() {
        // U+0007 is a prohibited control character (RFC 4013 §3 example).
        assert_eq!(&*normalize(b"pass\x07word"), b"pass\x07word");
        // A bidirectional violation: RandALCat character mixed with LCat.
        let mixed = "\u{627}1".as_bytes();
        assert_eq!(&*normalize(mixed), mixed);
    }

    #[test]
    fn invalid_utf8_falls_back_to_raw_bytes() {
        let raw = b"\xff\xfe\xa0secret";
        assert_eq!(&*normalize(raw), raw);
    }
}
