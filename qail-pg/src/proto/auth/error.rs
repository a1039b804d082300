//! The error of the authentication exchanges.

use std::fmt;

/// Why an authentication exchange failed on the client side.
///
/// Messages say what happened and what to do next. They never contain the password nor any
/// value derived from it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthError {
    /// A step of the exchange was called out of order, or after the exchange had failed.
    OutOfOrder {
        /// The method that was called (`"update"`, `"finish"`).
        called: &'static str,
        /// What the exchange was waiting for instead.
        expected: &'static str,
    },
    /// The client nonce given to [`ScramSha256::with_nonce`](super::scram::ScramSha256::with_nonce)
    /// is empty or contains a character that SCRAM does not allow (only printable ASCII
    /// other than `,`).
    InvalidNonce,
    /// A server message does not follow the SCRAM grammar of RFC 5802 §7.
    Malformed {
        /// Which message: `"server-first-message"` or `"server-final-message"`.
        message: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The server's nonce does not extend the nonce the client sent.
    NonceMismatch,
    /// The server asked for an iteration count of zero or above [`MAX_ITERATIONS`](super::scram::MAX_ITERATIONS).
    IterationCount(u32),
    /// The server's signature (`v=`) does not prove that it knows the password.
    ServerSignature,
    /// The server ended the exchange with an error (`e=` in the server-final-message).
    Server(String),
}

impl AuthError {
    pub(crate) fn malformed_first(reason: &'static str) -> AuthError {
        AuthError::Malformed {
            message: "server-first-message",
            reason,
        }
    }

    pub(crate) fn malformed_final(reason: &'static str) -> AuthError {
        AuthError::Malformed {
            message: "server-final-message",
            reason,
        }
    }
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthError::OutOfOrder { called, expected } => write!(
                f,
                "SCRAM step `{called}` called out of order (the exchange expected {expected}); \
                 start a new exchange with a new ScramSha256 value"
            ),
            AuthError::InvalidNonce => f.write_str(
                "invalid SCRAM client nonce: it must be non-empty printable ASCII without ','; \
                 pass base64 of random bytes",
            ),
            AuthError::Malformed { message, reason } => write!(
                f,
                "malformed SCRAM {message} from the server: {reason}; check that the server \
                 (or a pooler in front of it) speaks SCRAM-SHA-256 as PostgreSQL does"
            ),
            AuthError::NonceMismatch => f.write_str(
                "the server's SCRAM nonce does not extend the client's: the reply does not belong \
                 to this exchange; check the server address, and suspect a man in the middle",
            ),
            AuthError::IterationCount(count) => write!(
                f,
                "the server asked for {count} SCRAM iterations, outside 1..={}; ask the \
                 administrator to reset the password with a sane scram_iterations",
                super::scram::MAX_ITERATIONS
            ),
            AuthError::ServerSignature => f.write_str(
                "the server's SCRAM signature is wrong: it does not know the password, so it may \
                 not be the server you meant; check the host, and use sslmode=verify-full",
            ),
            AuthError::Server(e) => {
                write!(f, "the server rejected SCRAM authentication ({e})")?;
                f.write_str(match e.as_str() {
                    "invalid-proof" => "; check the password",
                    "channel-bindings-dont-match" | "channel-binding-not-supported" => {
                        "; connect without a TLS-terminating proxy, or set channel_binding=disable"
                    }
                    "unknown-user" => "; check the user name",
                    _ => "; check the password and the server's log",
                })
            }
        }
    }
}

impl std::error::Error for AuthError {}

impl From<AuthError> for crate::Error {
    fn from(e: AuthError) -> crate::Error {
        crate::Error::with_source(crate::error::Kind::Auth, "authentication failed", e)
    }
}
