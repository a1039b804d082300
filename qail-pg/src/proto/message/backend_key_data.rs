//! BackendKeyData (backend `K`): what a CancelRequest needs.

use super::DecodeError;
use super::reader::Reader;

/// The backend's process ID and cancel key (4 bytes in protocol 3.0, up to 256 in 3.2).
#[derive(Clone, PartialEq, Eq)]
pub struct BackendKeyData<'a> {
    /// The backend's process ID.
    pub process_id: i32,
    /// The secret key.
    pub secret_key: &'a [u8],
}

impl std::fmt::Debug for BackendKeyData<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackendKeyData")
            .field("process_id", &self.process_id)
            .finish_non_exhaustive()
    }
}

impl<'a> BackendKeyData<'a> {
    /// Decodes the body of a `K` message.
    pub fn decode(body: &'a [u8]) -> Result<BackendKeyData<'a>, DecodeError> {
        let mut r = Reader::new(body, "BackendKeyData");
        let process_id = r.i32()?;
        let secret_key = r.rest();
        if !(4..=256).contains(&secret_key.len()) {
            return Err(DecodeError::new(format!(
                "BackendKeyData has a {} byte key; 4 to 256 are allowed",
                secret_key.len()
            )));
        }
        Ok(BackendKeyData {
            process_id,
            secret_key,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_short_and_long_keys() {
        let k = BackendKeyData::decode(b"\0\0\x01\0abcd").unwrap();
        assert_eq!((k.process_id, k.secret_key), (256, &b"abcd"[..]));
        let mut long = vec![0, 0, 0, 1];
        long.extend_from_slice(&[9; 32]);
        assert_eq!(BackendKeyData::decode(&long).unwrap().secret_key.len(), 32);
    }

    #[test]
    fn refuses_bad_key_sizes() {
        assert!(BackendKeyData::decode(b"\0\0\0\x01abc").is_err());
        assert!(BackendKeyData::decode(b"\0\0").is_err());
        let mut huge = vec![0, 0, 0, 1];
        huge.extend_from_slice(&[9; 257]);
        assert!(BackendKeyData::decode(&huge).is_err());
    }
}
