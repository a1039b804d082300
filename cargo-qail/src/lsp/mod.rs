//! `cargo qail lsp`: a language server for the SQL in `qail!` strings of `.rs` files and for
//! `.sql` files, working from the schema snapshot alone (no database).
//!
//! - Diagnostics: the analyzer's errors at their exact bytes (escapes of normal strings and
//!   raw strings accounted for), with quick fixes for a did-you-mean name and a missing cast.
//! - Completion: relations, columns (after `alias.` only that relation's), functions with
//!   their signatures, types, enum labels in a string compared with an enum column, keywords
//!   by context. It reads the statement tolerantly (tokens, and the relations named in FROM,
//!   JOIN, UPDATE, INTO and USING with their aliases), so it works while the SQL does not parse.
//! - Hover: a result column's PostgreSQL type, Rust type (following the crate's qail
//!   features), nullability and the reasons `cargo qail analyze --why` gives; a column
//!   reference through its alias and outer joins; a parameter's type.
//! - Go to definition: a relation or column → its DDL file and line when the snapshot was
//!   built from SQL files (`cargo qail schema from-sql` records them), else its entry in
//!   qail.schema.json.
//!
//! Limits: the columns of CTEs and derived tables are not completed (the tolerant reading
//! knows their aliases, not their columns); hover types the result columns of the select list
//! (and RETURNING), column references, parameters, relations, functions and types, not an
//! arbitrary sub-expression.
//!
//! The snapshot is found as the `qail!` macro finds it: `--snapshot`, else `QAIL_SCHEMA`, else
//! the nearest `qail.schema.json` walking up from the crate of the file (the directory of its
//! nearest `Cargo.toml`). It is reloaded when the file changes, and open documents are checked
//! again.
//!
//! The SQL of a `qail!` string is found by reading the `.rs` file's tokens; its `{name}`
//! captures and `$n` are read by [`qail_analyzer::capture`], which the macro also uses.
//!
//! Built on `lsp-server` and `lsp-types` (rust-analyzer's): synchronous, a thread for standard
//! input and one for output, no async runtime. Every request is answered in the order it
//! came, which suits a server whose answers take well under a millisecond to a few.

mod complete;
mod definition;
mod diagnose;
mod document;
mod hover;
mod resolve;
mod rust_source;
mod rust_type;
mod scan;
mod server;
mod sources;
mod text;

pub use sources::{Rejected, Statement, rejected, statements};

use std::path::PathBuf;

use lsp_server::Connection;

/// A failure of the server: the connection broke or the client broke the protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError(String);

impl ServerError {
    fn protocol(e: lsp_server::ProtocolError) -> ServerError {
        ServerError(format!("language server protocol error: {e}"))
    }
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ServerError {}

/// Runs the server on standard input and output until the client sends `shutdown` and
/// `exit`. `snapshot` overrides where the snapshot is found.
pub fn run_stdio(snapshot: Option<PathBuf>) -> Result<(), ServerError> {
    let (conn, io) = Connection::stdio();
    serve(&conn, snapshot)?;
    drop(conn);
    io.join()
        .map_err(|e| ServerError(format!("standard input or output failed: {e}")))
}

/// Runs the server on a connection (`Connection::memory()` in tests and benchmarks): the
/// `initialize` handshake, then every message until `shutdown` and `exit`.
pub fn serve(conn: &Connection, snapshot: Option<PathBuf>) -> Result<(), ServerError> {
    let caps = serde_json::to_value(server::capabilities())
        .map_err(|e| ServerError(format!("cannot encode the capabilities: {e}")))?;
    conn.initialize(caps).map_err(ServerError::protocol)?;
    server::Server::new(conn, snapshot).run()
}
