//! Prepared statements as the server described them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::row::Column;
use crate::types::Oid;

/// A statement prepared on a connection, with its parameter and result types.
#[derive(Clone)]
pub struct Statement(Arc<Inner>);

struct Inner {
    name: String,
    params: Vec<Oid>,
    columns: Arc<[Column]>,
    /// The columns' type OIDs, for row decoders that read by index.
    column_oids: Box<[Oid]>,
    /// How many rows its last result had: what a collecting reader reserves room for.
    rows_hint: AtomicU32,
}

/// The largest row count remembered as [`Statement::rows_hint`].
const MAX_ROWS_HINT: u32 = 1 << 16;

impl Statement {
    pub(crate) fn new(name: String, params: Vec<Oid>, columns: Vec<Column>) -> Statement {
        let column_oids = columns.iter().map(Column::type_oid).collect();
        Statement::decoding_as(name, params, columns, column_oids)
    }

    /// A statement whose rows are decoded as the types `column_oids` rather than the columns'
    /// own (a compiled query reads a citext column as text, its binary form).
    pub(crate) fn decoding_as(
        name: String,
        params: Vec<Oid>,
        columns: Vec<Column>,
        column_oids: Box<[Oid]>,
    ) -> Statement {
        Statement(Arc::new(Inner {
            name,
            params,
            columns: columns.into(),
            column_oids,
            rows_hint: AtomicU32::new(0),
        }))
    }

    /// The server-side name of the statement.
    pub(crate) fn name(&self) -> &str {
        &self.0.name
    }

    /// The parameter types the server inferred or was given, in `$1, $2, …` order.
    pub fn params(&self) -> &[Oid] {
        &self.0.params
    }

    /// The result columns; empty for statements that return no rows.
    pub fn columns(&self) -> &[Column] {
        &self.0.columns
    }

    /// How many rows the last result of this statement had (at most 65,536): a guess at the
    /// next one's, for reserving room.
    pub(crate) fn rows_hint(&self) -> usize {
        self.0.rows_hint.load(Ordering::Relaxed) as usize
    }

    /// Remembers how many rows a result had.
    pub(crate) fn set_rows_hint(&self, rows: u64) {
        let rows = u32::try_from(rows).unwrap_or(u32::MAX).min(MAX_ROWS_HINT);
        self.0.rows_hint.store(rows, Ordering::Relaxed);
    }

    /// Whether `other` is this very statement (a clone of it), not one with equal contents.
    pub(crate) fn same(&self, other: &Statement) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The result columns' type OIDs, in order.
    pub(crate) fn column_oids(&self) -> &[Oid] {
        &self.0.column_oids
    }

    /// The columns, shared with the rows read with this statement.
    pub(crate) fn shared_columns(&self) -> &Arc<[Column]> {
        &self.0.columns
    }
}

impl std::fmt::Debug for Statement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Statement")
            .field("name", &self.0.name)
            .field("params", &self.0.params)
            .field("columns", &self.0.columns)
            .finish()
    }
}
