//! Helpers shared by the frontend encoders: length back-patching and checked fields.

use super::EncodeError;

/// Writes a tagged message: `tag`, a length placeholder, the body, then the real length.
/// On error the buffer is truncated back to where it was.
pub(crate) fn tagged(
    buf: &mut Vec<u8>,
    tag: u8,
    body: impl FnOnce(&mut Vec<u8>) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    let start = buf.len();
    buf.push(tag);
    framed(buf, start, start + 1, body)
}

/// Writes a message without a tag (startup, SSLRequest, CancelRequest).
pub(crate) fn untagged(
    buf: &mut Vec<u8>,
    body: impl FnOnce(&mut Vec<u8>) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    let start = buf.len();
    framed(buf, start, start, body)
}

fn framed(
    buf: &mut Vec<u8>,
    start: usize,
    len_at: usize,
    body: impl FnOnce(&mut Vec<u8>) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    buf.extend_from_slice(&[0; 4]);
    let result = body(buf).and_then(|()| {
        i32::try_from(buf.len() - len_at).map_err(|_| EncodeError::TooLong { field: "message" })
    });
    match result {
        Ok(len) => {
            buf[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
            Ok(())
        }
        Err(e) => {
            buf.truncate(start);
            Err(e)
        }
    }
}

/// Writes `s` followed by a NUL, refusing strings that contain NUL.
pub(crate) fn cstr(buf: &mut Vec<u8>, s: &str, field: &'static str) -> Result<(), EncodeError> {
    cbytes(buf, s.as_bytes(), field)
}

/// Writes `s` followed by a NUL, refusing byte strings that contain NUL.
pub(crate) fn cbytes(buf: &mut Vec<u8>, s: &[u8], field: &'static str) -> Result<(), EncodeError> {
    if memchr::memchr(0, s).is_some() {
        return Err(EncodeError::Nul { field });
    }
    buf.extend_from_slice(s);
    buf.push(0);
    Ok(())
}

/// Writes a 16-bit count, refusing counts above 65535.
pub(crate) fn count16(
    buf: &mut Vec<u8>,
    count: usize,
    field: &'static str,
) -> Result<(), EncodeError> {
    let n = u16::try_from(count).map_err(|_| EncodeError::TooMany { field, count })?;
    buf.extend_from_slice(&n.to_be_bytes());
    Ok(())
}

/// Writes a 32-bit length, refusing lengths above `i32::MAX`.
pub(crate) fn len32(buf: &mut Vec<u8>, len: usize, field: &'static str) -> Result<(), EncodeError> {
    let n = i32::try_from(len).map_err(|_| EncodeError::TooLong { field })?;
    buf.extend_from_slice(&n.to_be_bytes());
    Ok(())
}
