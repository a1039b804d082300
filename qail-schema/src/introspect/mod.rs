//! A live catalog → a [`Snapshot`].
//!
//! `pull` (feature `introspect`) reads everything in one catalog query that returns one JSON document, so its cost
//! does not grow with round trips: 1,000 tables of 20 columns take a fraction of a second.
//!
//! What is read, per schema: tables (partitioned parents and partitions too), views,
//! materialized views and foreign tables with their columns (attribute order, dropped columns
//! skipped), primary keys, unique constraints and unique indexes without predicate or
//! expressions, foreign keys, `CHECK (col IS NOT NULL)` constraints (they make the column
//! NOT NULL); enums, standalone composites, domains and ranges; functions that do not belong
//! to an extension; extensions installed in the schema.
//!
//! Note: PostgreSQL records no nullability for view columns; they are pulled as nullable
//! (`not_null: false`). The analyzer may derive better answers from the view's query.

mod raw;

#[cfg(feature = "introspect")]
use std::fmt;

use crate::snapshot::Snapshot;

/// The catalog query. It takes one text parameter, a JSON array of schema names (`[]`: the
/// schemas of the effective search_path), and returns one row with one text column, the
/// document [`from_catalog_json`] reads. It can be run through any client.
pub const CATALOG_SQL: &str = include_str!("catalog.sql");

/// Builds a snapshot from the document [`CATALOG_SQL`] returns.
pub fn from_catalog_json(json: &str) -> Result<Snapshot, String> {
    raw::build(json)
}

/// Why a pull failed.
#[cfg(feature = "introspect")]
#[derive(Debug)]
pub enum Error {
    /// The server refused the catalog query.
    Database(qail_pg::Error),
    /// The server's answer was not what this version of qail expects.
    Catalog(String),
}

#[cfg(feature = "introspect")]
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Database(e) if e.code() == Some("42501") => write!(
                f,
                "permission denied reading the catalog: {e}; connect as a role that can read \
                 the schema (GRANT USAGE ON SCHEMA … TO …) or as its owner"
            ),
            Error::Database(e) => write!(f, "reading the catalog failed: {e}"),
            Error::Catalog(m) => write!(
                f,
                "{m}; this server's catalog is not understood by qail {}: please report it",
                env!("CARGO_PKG_VERSION")
            ),
        }
    }
}

#[cfg(feature = "introspect")]
impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Database(e) => Some(e),
            Error::Catalog(_) => None,
        }
    }
}

#[cfg(feature = "introspect")]
impl From<qail_pg::Error> for Error {
    fn from(e: qail_pg::Error) -> Error {
        Error::Database(e)
    }
}

#[cfg(feature = "introspect")]
/// Reads the schemas named in `schemas` (all of them: an empty slice means every schema on the
/// connection's effective search_path, except `pg_catalog` and `information_schema`) from the
/// live catalog.
pub async fn pull(conn: &mut qail_pg::Connection, schemas: &[String]) -> Result<Snapshot, Error> {
    let param = serde_json::to_string(schemas).expect("a list of strings serializes");
    let rows = conn.query(CATALOG_SQL, &[&param]).await?;
    let row = rows
        .first()
        .ok_or_else(|| Error::Catalog("the catalog query returned no row".to_owned()))?;
    let json: String = row.get(0)?;
    raw::build(&json).map_err(Error::Catalog)
}
