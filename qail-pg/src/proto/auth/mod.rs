//! Authentication exchanges, without I/O.
//!
//! See <https://www.postgresql.org/docs/current/auth-password.html> and
//! <https://www.postgresql.org/docs/current/sasl-authentication.html>.
//!
//! - [`md5_password`]: the answer to `AuthenticationMD5Password`.
//! - [`scram::ScramSha256`]: the SCRAM-SHA-256(-PLUS) state machine.
//! - [`tls_server_end_point`]: the channel binding data of a server certificate.
//!
//! Cleartext (`AuthenticationCleartextPassword`) needs nothing here: the password is sent
//! as it is in a PasswordMessage.

mod cert;
mod error;
mod md5;
mod saslprep;
pub mod scram;

pub use cert::tls_server_end_point;
pub use error::AuthError;
pub use md5::md5_password;
