//! NotificationResponse (backend `A`): a NOTIFY on a channel this session listens to.

use super::DecodeError;
use super::reader::Reader;

/// A notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotificationResponse<'a> {
    /// The notifying backend's process ID.
    pub process_id: i32,
    /// The channel name.
    pub channel: &'a str,
    /// The payload.
    pub payload: &'a str,
}

impl<'a> NotificationResponse<'a> {
    /// Decodes the body of an `A` message.
    pub fn decode(body: &'a [u8]) -> Result<NotificationResponse<'a>, DecodeError> {
        let mut r = Reader::new(body, "NotificationResponse");
        let n = NotificationResponse {
            process_id: r.i32()?,
            channel: r.cstr()?,
            payload: r.cstr()?,
        };
        r.finish()?;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes() {
        let n = NotificationResponse::decode(b"\0\0\0\x07jobs\0go\0").unwrap();
        assert_eq!((n.process_id, n.channel, n.payload), (7, "jobs", "go"));
    }

    #[test]
    fn refuses_malformed() {
        assert!(NotificationResponse::decode(b"\0\0\0\x07jobs\0").is_err());
        assert!(NotificationResponse::decode(b"\0\0").is_err());
    }
}
