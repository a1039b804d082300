//! UTF-8 validation of the text the server sends, with a fast path for ASCII.
//!
//! Every text column of every row is validated before it becomes a `String` or `&str`.
//! `std::str::from_utf8` walks a short string byte by byte until its pointer is aligned
//! (about 135 instructions for a 35-byte name); `<[u8]>::is_ascii` reads it a word at a time
//! (about 38). Most text is ASCII, and ASCII is valid UTF-8: it is taken as it is, and
//! anything else goes through `from_utf8`, which finds and reports any invalid byte.

#![allow(
    unsafe_code,
    reason = "str::from_utf8_unchecked on bytes just checked to be ASCII; std's safe \
              ASCII-to-str conversion (`<[u8]>::as_ascii`) is unstable"
)]

use std::str::Utf8Error;

/// `raw` as a `str`; the error `std::str::from_utf8` gives when it is not valid UTF-8.
#[inline]
pub(crate) fn str_from(raw: &[u8]) -> Result<&str, Utf8Error> {
    if raw.is_ascii() {
        // SAFETY: every byte is below 0x80, and a sequence of ASCII bytes is valid UTF-8.
        Ok(unsafe { std::str::from_utf8_unchecked(raw) })
    } else {
        std::str::from_utf8(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_and_other_utf8_are_read_and_invalid_bytes_refused() {
        assert_eq!(str_from(b""), Ok(""));
        assert_eq!(
            str_from(b"Harbor 12, west pier"),
            Ok("Harbor 12, west pier")
        );
        let long = "x".repeat(100) + "ünï";
        assert_eq!(str_from(long.as_bytes()), Ok(long.as_str()));
        for bad in [&b"\xff"[..], b"abcdefgh\xc3", b"0123456789abcdef\x80xyz"] {
            let std = std::str::from_utf8(bad).unwrap_err();
            assert_eq!(str_from(bad), Err(std), "{bad:?}");
        }
    }
}
