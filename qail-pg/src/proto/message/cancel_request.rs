//! CancelRequest (frontend, untagged, sent on a new connection).

use super::EncodeError;
use super::write::untagged;

/// Asks the server to cancel the query running in the session identified by the process
/// ID and secret key from BackendKeyData.
#[derive(Clone, Copy)]
pub struct CancelRequest<'a> {
    /// The backend's process ID.
    pub process_id: i32,
    /// The secret key: 4 bytes with protocol 3.0, up to 256 with 3.2.
    pub secret_key: &'a [u8],
}

impl std::fmt::Debug for CancelRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelRequest")
            .field("process_id", &self.process_id)
            .finish_non_exhaustive()
    }
}

impl CancelRequest<'_> {
    /// Appends the message to `buf`.
    pub fn encode(&self, buf: &mut Vec<u8>) -> Result<(), EncodeError> {
        if !(4..=256).contains(&self.secret_key.len()) {
            return Err(EncodeError::Invalid {
                field: "the cancel secret key",
                reason: "must be 4 to 256 bytes long; use the key the server sent",
            });
        }
        untagged(buf, |buf| {
            buf.extend_from_slice(&80_877_102i32.to_be_bytes());
            buf.extend_from_slice(&self.process_id.to_be_bytes());
            buf.extend_from_slice(self.secret_key);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_byte_exact() {
        const EXPECTED: &[u8] = b"\0\0\0\x10\x04\xd2\x16\x2e\0\0\x01\x00\x0a\x0b\x0c\x0d";
        let mut buf = Vec::new();
        CancelRequest {
            process_id: 256,
            secret_key: &[10, 11, 12, 13],
        }
        .encode(&mut buf)
        .unwrap();
        assert_eq!(buf, EXPECTED);
    }

    #[test]
    fn long_keys_allowed_bad_sizes_refused() {
        let mut buf = Vec::new();
        let key = [7u8; 256];
        CancelRequest {
            process_id: 1,
            secret_key: &key,
        }
        .encode(&mut buf)
        .unwrap();
        assert_eq!(buf.len(), 12 + 256);
        buf.clear();
        for bad in [&[1u8, 2, 3][..], &[0; 257][..]] {
            assert!(
                CancelRequest {
                    process_id: 1,
                    secret_key: bad
                }
                .encode(&mut buf)
                .is_err()
            );
        }
        assert!(buf.is_empty());
    }
}
