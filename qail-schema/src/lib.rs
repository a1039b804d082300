//! qail-schema: the schema snapshot (`qail.schema.json`) and everything that reasons about it.
//!
//! - [`snapshot`]: the model and its JSON file format.
//! - [`check`]: the offline analyzer, SQL → typed parameters and columns.
//! - `introspect` (feature `introspect`): a live catalog → a snapshot, through qail-pg.

pub mod check;
pub mod snapshot;

pub use snapshot::Snapshot;
