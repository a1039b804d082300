//! qail: compile-time checked PostgreSQL for Rust, with its own driver.
//!
//! `qail!("SELECT …", args)` is checked against a committed schema snapshot
//! (`qail.schema.json`) while the crate compiles — no database is needed to build — and runs on
//! qail-pg, an async PostgreSQL driver that speaks the binary protocol.

pub use qail_pg::{Decode, Encode, Oid};
pub use qail_pg::{Pool, PoolBuilder, PoolStats, PooledConnection};
