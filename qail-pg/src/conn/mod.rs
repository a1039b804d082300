//! The async connection: connect, TLS, startup and authentication, query flows.

pub(crate) mod config;
pub(crate) mod tls;
