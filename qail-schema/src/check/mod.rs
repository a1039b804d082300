//! The analyzer: SQL text and a [`Snapshot`](crate::Snapshot) in, typed parameters and
//! result columns (or diagnostics with byte ranges into the SQL) out. No database is consulted.
