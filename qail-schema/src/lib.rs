//! qail-schema: the schema snapshot (`qail.schema.json`) and everything that reasons about it.
//!
//! - [`snapshot`]: the model and its JSON file format.
//! - [`builtin`]: PostgreSQL's built-in types (names, OIDs, SQL spellings).
//! - [`ddl`]: DDL scripts → a snapshot, without a database (feature `ddl`).
//! - [`diff`]: the semantic difference between two snapshots (feature `diff`).
//! - [`check`]: the offline analyzer, SQL → typed parameters and columns.
//! - [`capture`]: `{name}` captures in a `qail!` string → `$n`, shared by the macro and the
//!   language server.
//! - [`report`]: `cargo qail analyze`, the analyzer over SQL files (text and JSON reports;
//!   feature `report`).
//! - [`lsp`]: `cargo qail lsp`, the language server for SQL in `qail!` strings and `.sql`
//!   files (feature `lsp`).
//! - [`introspect`]: a live catalog → a snapshot (feature `ddl`; `pull` needs feature
//!   `introspect`).
//!
//! ```
//! use qail_schema::Snapshot;
//! let (snap, warnings) = qail_schema::ddl::from_sql(&[(
//!     "01-init.sql".to_owned(),
//!     "CREATE TABLE harbors (id serial PRIMARY KEY, name text NOT NULL);".to_owned(),
//! )]);
//! assert!(warnings.is_empty());
//! let text = snap.to_json();
//! assert_eq!(Snapshot::from_json(&text).unwrap(), snap);
//! assert_eq!(snap.relation(None, "harbors").unwrap().columns.len(), 2);
//! ```
//!
//! # Features
//!
//! The analyzer ([`check`]) and the snapshot model are always built; the `qail!` macro uses
//! only them and builds this crate without default features.
//!
//! | feature      | default   | what it adds |
//! |--------------|-----------|--------------|
//! | `ddl`        | via `cli` | [`ddl`]: DDL scripts → a snapshot; [`introspect`] without `pull` |
//! | `diff`       | via `cli` | [`diff`]: the difference between two snapshots |
//! | `report`     | via `cli` | [`report`]: the `cargo qail analyze` report |
//! | `introspect` | yes       | `introspect::pull`: read a live database through qail-pg; enables `ddl` |
//! | `lsp`        | via `cli` | [`lsp`]: the language server; enables `report` |
//! | `cli`        | yes       | the `cargo-qail` binary; enables all of the above |

pub mod builtin;
pub mod capture;
pub mod check;
#[cfg(feature = "ddl")]
pub mod ddl;
#[cfg(feature = "diff")]
pub mod diff;
#[cfg(feature = "ddl")]
pub mod introspect;
mod lex;
#[cfg(feature = "lsp")]
pub mod lsp;
#[cfg(feature = "report")]
pub mod report;
pub mod snapshot;

pub use snapshot::Snapshot;
