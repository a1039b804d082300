//! qail-schema: the schema snapshot (`qail.schema.json`) and everything that reasons about it.
//!
//! - [`snapshot`]: the model and its JSON file format.
//! - [`builtin`]: PostgreSQL's built-in types (names, OIDs, SQL spellings).
//! - [`ddl`]: DDL scripts → a snapshot, without a database.
//! - [`diff`]: the semantic difference between two snapshots.
//! - [`check`]: the offline analyzer, SQL → typed parameters and columns.
//! - [`report`]: `cargo qail analyze`, the analyzer over SQL files (text and JSON reports).
//! - [`introspect`]: a live catalog → a snapshot (`pull` needs feature `introspect`).
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
//! | `cli`        | yes     | the `cargo-qail` binary |

pub mod builtin;
pub mod check;
pub mod ddl;
pub mod diff;
pub mod introspect;
pub mod report;
pub mod snapshot;

pub use snapshot::Snapshot;
