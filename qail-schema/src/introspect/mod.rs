//! A live catalog → a [`Snapshot`].
//!
//! `pull` (feature `introspect`) reads the catalog set-based: nine queries in one read-only
//! transaction, each answering with one JSON value, whatever the number of tables. 1,000
//! tables of 20 columns take well under a second.
//!
//! What is read, per schema: tables (partitioned parents and partitions too), views,
//! materialized views and foreign tables with their columns (attribute order, dropped columns
//! skipped), primary keys, unique constraints and unique indexes without predicate or
//! expressions, foreign keys, `CHECK (col IS NOT NULL)` constraints (they make the column
//! NOT NULL); enums, standalone composites, domains and ranges; functions that do not belong
//! to an extension; extensions installed in the schema.
//!
//! Which schemas: by default those of the pulling session's effective search_path (what
//! `current_schemas(false)` returns, without `pg_catalog` and `information_schema`), since
//! those are what unqualified names in queries resolve to; naming schemas replaces that list.
//! The snapshot records the search_path either way.
//!
//! Note: PostgreSQL records no nullability for view columns; they are pulled as nullable
//! (`not_null: false`). The analyzer may derive better answers from the view's query.

mod catalog;
mod raw;

#[cfg(feature = "introspect")]
use std::fmt;

use crate::snapshot::Snapshot;

/// The catalog queries as `(key, SQL)`. Each takes one text parameter, a JSON array of schema
/// names (`[]`: the schemas of the effective search_path), and returns one row with one text
/// column holding a JSON value. They can be run through any client; [`from_catalog_json`]
/// reads a JSON object with each answer under its key.
pub fn catalog_queries() -> &'static [(&'static str, &'static str)] {
    catalog::QUERIES
}

/// Builds a snapshot from the answers of [`catalog_queries`], gathered into one JSON object
/// (`{"meta": …, "types": …, …}`).
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
/// Reads the schemas named in `schemas` from the live catalog. An empty slice means every user
/// schema (all but `pg_catalog`, `information_schema` and the `pg_`-prefixed system schemas);
/// the snapshot keeps the connection's effective search_path for unqualified names.
pub async fn pull(conn: &mut qail_pg::Connection, schemas: &[String]) -> Result<Snapshot, Error> {
    let param = serde_json::to_string(schemas).expect("a list of strings serializes");
    // One snapshot of the catalog for every query.
    conn.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        .await?;
    let doc = read_catalog(conn, &param).await;
    let end = if doc.is_ok() { "COMMIT" } else { "ROLLBACK" };
    conn.batch_execute(end).await?;
    raw::build(&doc?).map_err(Error::Catalog)
}

#[cfg(feature = "introspect")]
/// Like [`pull`], but inside the transaction block the connection is in: the snapshot then
/// sees the block's own uncommitted DDL, and the block stays open.
pub async fn pull_in_transaction(
    conn: &mut qail_pg::Connection,
    schemas: &[String],
) -> Result<Snapshot, Error> {
    let param = serde_json::to_string(schemas).expect("a list of strings serializes");
    raw::build(&read_catalog(conn, &param).await?).map_err(Error::Catalog)
}

/// Runs every catalog query and gathers the answers into one JSON object.
#[cfg(feature = "introspect")]
async fn read_catalog(conn: &mut qail_pg::Connection, param: &String) -> Result<String, Error> {
    let mut doc = String::from("{");
    for (i, (key, sql)) in catalog::QUERIES.iter().enumerate() {
        let rows = conn.query(sql, &[param]).await?;
        let row = rows.first().ok_or_else(|| {
            Error::Catalog(format!("the catalog query for {key} returned no row"))
        })?;
        let value: String = row.try_get(0)?;
        if i > 0 {
            doc.push(',');
        }
        doc.push_str(&format!("\"{key}\":"));
        doc.push_str(&value);
    }
    doc.push('}');
    Ok(doc)
}
