//! The PostgreSQL frontend/backend protocol, versions 3.0 and 3.2, without I/O.
//!
//! Everything here takes and returns bytes and values: no tokio, no sockets. The connection
//! layer feeds it what it reads and writes what it produces.
//! See <https://www.postgresql.org/docs/current/protocol.html>.

pub mod auth;
pub mod message;
pub mod version;

pub use version::ProtocolVersion;
