//! Cutting backend messages out of a byte stream.
//!
//! Every backend message is a tag byte, a 32-bit length that counts itself and the body, and
//! the body. See <https://www.postgresql.org/docs/current/protocol-overview.html#PROTOCOL-MESSAGE-CONCEPTS>.

use super::DecodeError;

/// The largest message body accepted from the server (1 GiB), checked before buffering it.
pub const MAX_MESSAGE_LEN: usize = 1 << 30;

/// A complete message at the front of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// The message type byte.
    pub tag: u8,
    /// Where the body starts in the buffer (always 5).
    pub body_start: usize,
    /// Where the message ends: the number of bytes it takes in the buffer.
    pub end: usize,
}

/// Looks for a complete message at the front of `buf`.
///
/// Returns `Ok(None)` when more bytes are needed: at least 5 for the header, then the whole
/// body. The claimed length is checked first, so a hostile length never causes a large buffer.
pub fn frame(buf: &[u8]) -> Result<Option<Frame>, DecodeError> {
    let Some((&tag, rest)) = buf.split_first() else {
        return Ok(None);
    };
    let Some(len) = rest.first_chunk::<4>() else {
        return Ok(None);
    };
    let len = i32::from_be_bytes(*len);
    let body_len = usize::try_from(len)
        .ok()
        .and_then(|len| len.checked_sub(4))
        .ok_or_else(|| {
            DecodeError::new(format!(
                "message '{}' claims length {len}",
                tag.escape_ascii()
            ))
        })?;
    if body_len > MAX_MESSAGE_LEN {
        return Err(DecodeError::new(format!(
            "message '{}' claims {body_len} bytes, more than the {MAX_MESSAGE_LEN} byte limit",
            tag.escape_ascii()
        )));
    }
    let end = 5 + body_len;
    if buf.len() < end {
        return Ok(None);
    }
    Ok(Some(Frame {
        tag,
        body_start: 5,
        end,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needs_more_until_complete() {
        let msg = b"Z\0\0\0\x05I";
        for n in 0..msg.len() {
            assert_eq!(frame(&msg[..n]).unwrap(), None, "prefix of {n} bytes");
        }
        let f = frame(b"Z\0\0\0\x05Iextra").unwrap().unwrap();
        assert_eq!((f.tag, f.body_start, f.end), (b'Z', 5, 6));
    }

    #[test]
    fn refuses_short_and_huge_lengths() {
        assert!(frame(b"Z\0\0\0\x03").is_err());
        assert!(frame(b"Z\xff\xff\xff\xff").is_err());
        // 2 GiB claimed: refused before anything is buffered.
        assert!(frame(b"D\x80\0\0\0").is_err());
        assert!(frame(b"D\x7f\xff\xff\xff").is_err());
        assert!(frame(b"D\x40\0\0\x04").unwrap().is_none());
    }
}
