//! ReadyForQuery (backend `Z`): the end of a cycle, with the transaction status.

use super::DecodeError;
use super::reader::Reader;

/// The session's transaction state, reported by every ReadyForQuery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TransactionStatus {
    /// `I`: not in a transaction block.
    #[default]
    Idle,
    /// `T`: in a transaction block.
    InTransaction,
    /// `E`: in a failed transaction block; statements are refused until it ends.
    Failed,
}

/// The server is ready for a new query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadyForQuery {
    /// The transaction status.
    pub status: TransactionStatus,
}

impl ReadyForQuery {
    /// Decodes the body of a `Z` message.
    pub fn decode(body: &[u8]) -> Result<ReadyForQuery, DecodeError> {
        let mut r = Reader::new(body, "ReadyForQuery");
        let status = match r.u8()? {
            b'I' => TransactionStatus::Idle,
            b'T' => TransactionStatus::InTransaction,
            b'E' => TransactionStatus::Failed,
            other => {
                return Err(DecodeError::new(format!(
                    "ReadyForQuery has status '{}'",
                    other.escape_ascii()
                )));
            }
        };
        r.finish()?;
        Ok(ReadyForQuery { status })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes() {
        assert_eq!(
            ReadyForQuery::decode(b"I").unwrap().status,
            TransactionStatus::Idle
        );
        assert_eq!(
            ReadyForQuery::decode(b"T").unwrap().status,
            TransactionStatus::InTransaction
        );
        assert_eq!(
            ReadyForQuery::decode(b"E").unwrap().status,
            TransactionStatus::Failed
        );
    }

    #[test]
    fn refuses_malformed() {
        assert!(ReadyForQuery::decode(b"").is_err());
        assert!(ReadyForQuery::decode(b"X").is_err());
        assert!(ReadyForQuery::decode(b"II").is_err());
    }
}
