//! Differential test against the server.
