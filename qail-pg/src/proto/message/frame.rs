//! Cutting backend messages out of a byte stream, with a length limit per message type.
//!
//! Every backend message is a tag byte, a 32-bit length that counts itself and the body, and
//! the body. See <https://www.postgresql.org/docs/current/protocol-overview.html#PROTOCOL-MESSAGE-CONCEPTS>.
//!
//! A peer's claimed length is checked against [`max_body_len`] as soon as the 5-byte header
//! is in, before any of the body is waited for: a message that is never large (a
//! ReadyForQuery, a BindComplete, an Authentication request) claiming megabytes is a
//! protocol error at once, like libpq's check on "short" message types. During startup,
//! before the first ReadyForQuery, every message is small.

use super::DecodeError;

/// The largest message body accepted from the server (1 GiB): the limit of the types that
/// may be large (rows, COPY data, row descriptions, errors, notices, notifications).
pub const MAX_MESSAGE_LEN: usize = 1 << 30;

/// The limit of a message type that is never large, and of every message during startup:
/// libpq's limit for message types that are not "long" (`VALID_LONG_MESSAGE_TYPE` in
/// `fe-protocol3.c`), and for an ErrorResponse during the connection handshake.
pub const MAX_SMALL_MESSAGE_LEN: usize = 30_000;

/// An Authentication request's limit (libpq's, in `PQconnectPoll`): a SASL challenge is a
/// few hundred bytes.
const MAX_AUTHENTICATION_LEN: usize = 2_000;

/// Which limits apply to the server's messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// From the StartupMessage to the first ReadyForQuery: authentication, parameter
    /// reports, key data. Every message is small (at most [`MAX_SMALL_MESSAGE_LEN`]), so a
    /// peer that has not even authenticated cannot make the client reserve memory.
    Startup,
    /// After the first ReadyForQuery: the types that may be large get [`MAX_MESSAGE_LEN`].
    Session,
}

/// The largest body a message with tag `tag` may claim in `phase`.
#[inline(always)]
pub fn max_body_len(tag: u8, phase: Phase) -> usize {
    // Note: a table lookup, not a match over the tags: every message received passes here.
    LIMITS[phase as usize][usize::from(tag)] as usize
}

/// [`max_body_len`] of every tag, per phase (indexed by `Phase as usize`): built at compile
/// time from [`tag_limit`].
static LIMITS: [[u32; 256]; 2] = [limits(Phase::Startup), limits(Phase::Session)];

/// The limits of `phase`, one per tag.
const fn limits(phase: Phase) -> [u32; 256] {
    let mut table = [0; 256];
    let mut tag = 0;
    while tag < 256 {
        #[allow(
            clippy::cast_possible_truncation,
            reason = "tag < 256, and every limit is at most MAX_MESSAGE_LEN (1 GiB)"
        )]
        {
            let limit = tag_limit(tag as u8);
            table[tag] = match phase {
                Phase::Startup if limit > MAX_SMALL_MESSAGE_LEN => MAX_SMALL_MESSAGE_LEN as u32,
                _ => limit as u32,
            };
        }
        tag += 1;
    }
    table
}

/// The largest body a message with tag `tag` may claim once the session has started.
const fn tag_limit(tag: u8) -> usize {
    match tag {
        // Note: empty by definition: ParseComplete, BindComplete, CloseComplete, NoData,
        // PortalSuspended, EmptyQueryResponse, CopyDone.
        b'1' | b'2' | b'3' | b'n' | b's' | b'I' | b'c' => 0,
        // ReadyForQuery: the transaction status byte.
        b'Z' => 1,
        // BackendKeyData: the process ID and a key of up to 256 bytes (protocol 3.2).
        b'K' => 4 + 256,
        b'R' | b'v' => MAX_AUTHENTICATION_LEN,
        // ParameterDescription: a count and up to 65535 type OIDs.
        b't' => 2 + 4 * (u16::MAX as usize),
        // Copy{In,Out,Both}Response: a format, a count and up to 65535 column formats.
        b'G' | b'H' | b'W' => 3 + 2 * (u16::MAX as usize),
        // DataRow, CopyData, RowDescription, ErrorResponse, NoticeResponse,
        // NotificationResponse: libpq's long message types.
        b'D' | b'd' | b'T' | b'E' | b'N' | b'A' => MAX_MESSAGE_LEN,
        // CommandComplete, ParameterStatus, and types qail-pg does not decode.
        _ => MAX_SMALL_MESSAGE_LEN,
    }
}

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

/// Looks for a complete message at the front of `buf`, under the limits of `phase`.
///
/// Returns `Ok(None)` when more bytes are needed: at least 5 for the header, then the whole
/// body. The claimed length is checked against [`max_body_len`] first, so a hostile length
/// is an error before any of its body is waited for.
pub fn frame(buf: &[u8], phase: Phase) -> Result<Option<Frame>, DecodeError> {
    let (Some(body_len), Some(&tag)) = (claimed_body_len(buf, phase)?, buf.first()) else {
        return Ok(None);
    };
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

/// The body length the message at the front of `buf` claims, once its 5-byte header is in
/// (`None` before), checked against the limits of `phase`.
pub fn claimed_body_len(buf: &[u8], phase: Phase) -> Result<Option<usize>, DecodeError> {
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
    let limit = max_body_len(tag, phase);
    if body_len > limit {
        let when = match phase {
            Phase::Startup => " during startup",
            Phase::Session => "",
        };
        return Err(DecodeError::new(format!(
            "message '{}' claims {body_len} bytes, more than its {limit} byte limit{when}",
            tag.escape_ascii()
        )));
    }
    Ok(Some(body_len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_table_holds_each_tags_limit_capped_during_startup() {
        for tag in 0..=u8::MAX {
            let limit = tag_limit(tag);
            assert_eq!(max_body_len(tag, Phase::Session), limit, "{tag}");
            assert_eq!(
                max_body_len(tag, Phase::Startup),
                limit.min(MAX_SMALL_MESSAGE_LEN),
                "{tag}"
            );
        }
        assert_eq!(max_body_len(b'D', Phase::Session), MAX_MESSAGE_LEN);
        assert_eq!(max_body_len(b'Z', Phase::Session), 1);
        assert_eq!(max_body_len(b'C', Phase::Session), MAX_SMALL_MESSAGE_LEN);
    }

    #[test]
    fn needs_more_until_complete() {
        let msg = b"Z\0\0\0\x05I";
        for phase in [Phase::Startup, Phase::Session] {
            for n in 0..msg.len() {
                assert_eq!(
                    frame(&msg[..n], phase).unwrap(),
                    None,
                    "prefix of {n} bytes"
                );
            }
            let f = frame(b"Z\0\0\0\x05Iextra", phase).unwrap().unwrap();
            assert_eq!((f.tag, f.body_start, f.end), (b'Z', 5, 6));
        }
    }

    #[test]
    fn refuses_short_and_huge_lengths() {
        let session = Phase::Session;
        assert!(frame(b"Z\0\0\0\x03", session).is_err());
        assert!(frame(b"Z\xff\xff\xff\xff", session).is_err());
        // 2 GiB claimed: refused before anything is buffered.
        assert!(frame(b"D\x80\0\0\0", session).is_err());
        assert!(frame(b"D\x7f\xff\xff\xff", session).is_err());
        // 1 GiB: the most a DataRow may claim.
        assert!(frame(b"D\x40\0\0\x04", session).unwrap().is_none());
        assert!(frame(b"D\x40\0\0\x05", session).is_err());
    }

    #[test]
    fn small_types_have_small_limits_from_the_header_on() {
        for phase in [Phase::Startup, Phase::Session] {
            // ReadyForQuery of 6 bytes, BindComplete of 1: refused with only the header in.
            assert!(frame(b"Z\0\0\0\x06", phase).is_err());
            assert!(frame(b"2\0\0\0\x05", phase).is_err());
            assert_eq!(frame(b"2\0\0\0\x04", phase).unwrap().unwrap().end, 5);
            // An Authentication request claiming 1 GiB.
            let err = frame(b"R\x40\0\0\x04", phase).unwrap_err();
            assert!(err.to_string().contains("2000 byte limit"), "{err}");
            assert!(frame(b"R\0\0\x07\xd4", phase).unwrap().is_none());
            assert!(frame(b"K\0\0\x01\x09", phase).is_err());
            assert!(frame(b"S\0\0\x75\x35", phase).is_err());
            assert!(frame(b"S\0\0\x75\x34", phase).unwrap().is_none());
        }
        assert_eq!(max_body_len(b'C', Phase::Session), MAX_SMALL_MESSAGE_LEN);
        assert_eq!(max_body_len(b't', Phase::Session), 262_142);
        assert_eq!(max_body_len(b'?', Phase::Session), MAX_SMALL_MESSAGE_LEN);
    }

    #[test]
    fn large_types_are_small_during_startup() {
        for tag in *b"DdTENA" {
            assert_eq!(max_body_len(tag, Phase::Session), MAX_MESSAGE_LEN);
            assert_eq!(max_body_len(tag, Phase::Startup), MAX_SMALL_MESSAGE_LEN);
        }
        let header = b"E\0\x01\0\0";
        assert!(frame(header, Phase::Session).unwrap().is_none());
        let err = frame(header, Phase::Startup).unwrap_err();
        assert!(err.to_string().contains("during startup"), "{err}");
    }
}
