//! The analyzer's integration tests: the query corpus (expected types and nullability),
//! diagnostics as the user sees them, and the differential test against the server.

mod corpus;
mod diagnostics;
mod differ;
mod nested;
mod nullability;
mod server;
mod support;
mod system;
