//! The statements of a binary: every `qail!` registers its [`Template`] here, at link time
//! (a `linkme` distributed slice: no build script, no start-up code), with what it was
//! compiled against that the template does not hold. `Pool::verify` describes them all.

use super::Template;

pub use linkme;

/// Whether a result column taken unchanged from a table column was NOT NULL in the snapshot
/// the statement was compiled against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotNull {
    /// Not a table column taken unchanged (an expression, the nullable side of a join, …):
    /// nothing to compare.
    Unknown,
    /// The table column was NOT NULL.
    Yes,
    /// The table column could be NULL.
    No,
}

/// A statement as `qail!` compiled it.
#[derive(Debug)]
pub struct Compiled {
    /// Its template (SQL, parameter types, expected columns, `file:line`).
    pub template: &'static Template,
    /// Per result column, in order, the NOT NULL-ness of its table column.
    pub not_null: &'static [NotNull],
}

/// Every statement `qail!` compiled into this binary (the static ones; a query with optional
/// clauses or sort choices is not registered).
#[linkme::distributed_slice]
pub static STATEMENTS: [Compiled];
