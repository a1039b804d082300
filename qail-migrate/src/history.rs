//! The history table: one row per applied (or being applied, or dirty) migration, and the
//! lock every change of it is made under.

use qail_pg::{Connection, Row};

use crate::error::{Error, ErrorKind};
use crate::migration::Version;

/// The history table's name, in the schema that is the connection's `current_schema()` when
/// an operation starts.
pub const TABLE: &str = "_qail_migrations";

/// The key of the transaction-level advisory lock (`pg_advisory_xact_lock`) every change of
/// the history is made under: the ASCII bytes of "qailmigr". Advisory locks are per database.
pub const LOCK_KEY: i64 = 0x7161_696c_6d69_6772;

/// The history table's definition: what `run` creates when it is missing.
pub const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS _qail_migrations (
    version        bigint PRIMARY KEY,
    name           text NOT NULL,
    checksum       text NOT NULL,
    state          text NOT NULL CHECK (state IN ('running', 'applied', 'dirty')),
    applied_at     timestamptz NOT NULL DEFAULT now(),
    duration_ms    bigint,
    no_transaction boolean NOT NULL DEFAULT false,
    claim          text,
    heartbeat_at   timestamptz,
    error          text
)";

/// The columns [`Entry::from_row`] reads, in order.
const COLUMNS: &str = "version, name, checksum, state, applied_at::text, duration_ms, claim, \
                       heartbeat_at::text, error";

/// The state column of a history row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowState {
    /// A non-transactional migration claimed by a runner that is running it (or died doing so).
    Running,
    Applied,
    Dirty,
}

/// One row of the history.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) version: Version,
    pub(crate) name: String,
    pub(crate) checksum: String,
    pub(crate) state: RowState,
    pub(crate) applied_at: String,
    pub(crate) duration_ms: Option<i64>,
    pub(crate) claim: Option<String>,
    pub(crate) heartbeat_at: Option<String>,
    pub(crate) error: Option<String>,
}

impl Entry {
    fn from_row(row: &Row) -> Result<Entry, qail_pg::Error> {
        let state: String = row.try_get(3)?;
        Ok(Entry {
            version: row.try_get(0)?,
            name: row.try_get(1)?,
            checksum: row.try_get(2)?,
            state: match state.as_str() {
                "running" => RowState::Running,
                "applied" => RowState::Applied,
                _ => RowState::Dirty,
            },
            applied_at: row.try_get(4)?,
            duration_ms: row.try_get(5)?,
            claim: row.try_get(6)?,
            heartbeat_at: row.try_get(7)?,
            error: row.try_get(8)?,
        })
    }
}

/// The history table of one operation, by its schema-qualified name: the schema is the
/// connection's `current_schema()` when the operation starts, so that a migration changing
/// `search_path` (as pg_dump's output does) cannot move the history away.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    schema: String,
    /// `"schema"._qail_migrations`
    name: String,
}

impl Table {
    /// Finds the history's schema: the connection's current schema.
    pub(crate) async fn locate(conn: &mut Connection) -> Result<Table, Error> {
        let what = "finding the schema of the history table (current_schema())";
        let row = conn
            .query_one("SELECT current_schema()::text", &[])
            .await
            .map_err(|e| Error::db(what, e))?;
        let schema: Option<String> = row.try_get(0).map_err(|e| Error::db(what, e))?;
        let Some(schema) = schema else {
            return Err(Error::new(
                ErrorKind::Usage,
                "the connection's search_path names no existing schema, so there is no \
                 schema for the history table _qail_migrations; connect with a search_path \
                 that names one (e.g. `options=-csearch_path=public`), or create the schema",
            ));
        };
        let mut table = Table {
            schema,
            name: String::new(),
        };
        table.name = table.sibling(TABLE);
        Ok(table)
    }

    /// The qualified name of table `table` in the history's schema.
    pub(crate) fn sibling(&self, table: &str) -> String {
        format!("\"{}\".{table}", self.schema.replace('"', "\"\""))
    }

    /// `sql` with the history table's qualified name in place of `_qail_migrations`.
    pub(crate) fn sql(&self, sql: &str) -> String {
        sql.replace(TABLE, &self.name)
    }

    /// Whether the history table exists (without creating it).
    pub(crate) async fn exists(&self, conn: &mut Connection) -> Result<bool, Error> {
        let what = "looking for the history table";
        let row = conn
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = $2)",
                &[&self.schema, &TABLE],
            )
            .await
            .map_err(|e| Error::db(what, e))?;
        row.try_get(0).map_err(|e| Error::db(what, e))
    }

    /// Creates the history table when it is missing, under the lock (so that runners starting
    /// together do not race on the catalog).
    pub(crate) async fn create(&self, conn: &mut Connection) -> Result<(), Error> {
        if self.exists(conn).await? {
            return Ok(());
        }
        let what = "creating the history table _qail_migrations";
        let mut tx = conn.begin().await.map_err(|e| Error::db(what, e))?;
        lock(&mut tx).await?;
        tx.batch_execute(&self.sql(CREATE_TABLE))
            .await
            .map_err(|e| Error::db(what, e))?;
        tx.commit().await.map_err(|e| Error::db(what, e))
    }

    /// Every row of the history, by version.
    pub(crate) async fn read(&self, conn: &mut Connection) -> Result<Vec<Entry>, Error> {
        let what = "reading the history table _qail_migrations";
        let rows = conn
            .query(
                &format!("SELECT {COLUMNS} FROM {} ORDER BY version", self.name),
                &[],
            )
            .await
            .map_err(|e| Error::db(what, e))?;
        rows.iter()
            .map(|row| Entry::from_row(row).map_err(|e| Error::db(what, e)))
            .collect()
    }

    /// The row of `version`, if any.
    pub(crate) async fn get(
        &self,
        conn: &mut Connection,
        version: Version,
    ) -> Result<Option<Entry>, Error> {
        let what = "reading the history table _qail_migrations";
        let row = conn
            .query_opt(
                &format!("SELECT {COLUMNS} FROM {} WHERE version = $1", self.name),
                &[&version],
            )
            .await
            .map_err(|e| Error::db(what, e))?;
        row.map(|row| Entry::from_row(&row).map_err(|e| Error::db(what, e)))
            .transpose()
    }

    /// The first dirty row, if any.
    pub(crate) async fn first_dirty(&self, conn: &mut Connection) -> Result<Option<Entry>, Error> {
        let what = "reading the history table _qail_migrations";
        let row = conn
            .query_opt(
                &format!(
                    "SELECT {COLUMNS} FROM {} WHERE state = 'dirty' ORDER BY version LIMIT 1",
                    self.name
                ),
                &[],
            )
            .await
            .map_err(|e| Error::db(what, e))?;
        row.map(|row| Entry::from_row(&row).map_err(|e| Error::db(what, e)))
            .transpose()
    }
}

/// Takes the history's transaction-level advisory lock: held until the transaction ends,
/// released by the server when the session ends, and never left on a pooled server
/// connection (unlike a session-level lock behind a transaction-mode pooler).
pub(crate) async fn lock(conn: &mut Connection) -> Result<(), Error> {
    conn.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY])
        .await
        .map(drop)
        .map_err(|e| Error::db("taking the migrations lock (pg_advisory_xact_lock)", e))
}
