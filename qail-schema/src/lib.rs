//! qail-schema: the schema snapshot (`qail.schema.json`) — its model and file, where it comes
//! from and how two of them differ.
//!
//! - [`snapshot`]: the model, its JSON file format, and name lookup (the one search_path rule).
//! - [`builtin`]: PostgreSQL's built-in types (names, OIDs, SQL spellings) and system relations.
//! - [`script`]: SQL text: the lexer's pieces and cutting a file into statements.
//! - [`ddl`]: DDL scripts → a snapshot, without a database.
//! - [`introspect`]: a live catalog → a snapshot (`pull` needs feature `introspect`).
//! - [`diff`]: the semantic difference between two snapshots.
//!
//! The analyzer that types SQL against a snapshot is the `qail-analyzer` crate; the `cargo qail`
//! binary is `cargo-qail`.
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
//! | feature      | default | what it adds |
//! |--------------|---------|--------------|
//! | `introspect` | yes     | `introspect::pull`: read a live database through qail-pg |
//!
//! The `qail!` macro builds this crate without default features: no driver, no tokio.

pub mod builtin;
pub mod ddl;
pub mod diff;
pub mod introspect;
pub mod script;
pub mod session;
pub mod snapshot;

pub use snapshot::Snapshot;
