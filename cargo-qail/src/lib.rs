//! cargo-qail: the `cargo qail` binary's library — the analyzer's reports over SQL files
//! ([`report`], `cargo qail analyze`), the language server ([`lsp`], `cargo qail lsp`), the
//! migrations commands ([`migrate`], `cargo qail migrate`, on qail-migrate) and the check of
//! the workspace's statements against a live server ([`verify`], `cargo qail verify`).
//!
//! This is the only qail crate that knows clap or the language server protocol; the snapshot
//! is `qail-schema`'s and the analysis `qail-analyzer`'s.

pub mod config;
pub mod deploy;
pub mod lsp;
pub mod migrate;
pub mod report;
pub mod schema;
pub mod verify;
