//! The semantic difference between two snapshots, for `cargo qail schema check` and
//! `schema diff`: one readable line per change, such as
//! `table public.harbors: column name: type text → varchar`.
//!
//! Default and generation expressions are compared loosely by default ([`loose_expr`]):
//! a snapshot built from DDL prints them as written, a pulled one as PostgreSQL's
//! `pg_get_expr` prints them (`'NO'` vs `'NO'::bpchar`), and both mean the same.

mod expr;
mod items;

use std::fmt;

use crate::snapshot::Snapshot;

pub use expr::loose_expr;

/// How default and generation expressions are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExprCompare {
    /// Text must be identical.
    Exact,
    /// Equal after [`loose_expr`] (the default).
    #[default]
    Loose,
    /// Only whether there is an expression matters.
    Presence,
}

/// What [`diff`] compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DiffOptions {
    /// How defaults and generated-column expressions are compared.
    pub exprs: ExprCompare,
    /// Do not report view columns when one side has none (a view imported from DDL, whose
    /// columns need the analyzer).
    pub lenient_view_columns: bool,
}

/// One difference: the object it concerns and what changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The object: `table public.harbors`, `type public.mood`, `search_path`.
    pub object: String,
    /// What changed, from the first snapshot to the second.
    pub detail: String,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.object, self.detail)
    }
}

/// The changes that turn `old` into `new`, in a stable order. `server_version` is not
/// compared. Empty when the two describe the same schema.
pub fn diff(old: &Snapshot, new: &Snapshot, opts: &DiffOptions) -> Vec<Change> {
    let (mut old, mut new) = (old.clone(), new.clone());
    old.sort();
    new.sort();
    let mut out = Vec::new();
    if old.search_path != new.search_path {
        out.push(Change {
            object: "search_path".to_owned(),
            detail: format!(
                "{} → {}",
                old.search_path.join(", "),
                new.search_path.join(", ")
            ),
        });
    }
    for s in old.schemas.iter().filter(|s| !new.schemas.contains(s)) {
        out.push(Change {
            object: format!("schema {s}"),
            detail: "removed".to_owned(),
        });
    }
    for s in new.schemas.iter().filter(|s| !old.schemas.contains(s)) {
        out.push(Change {
            object: format!("schema {s}"),
            detail: "added".to_owned(),
        });
    }
    items::relations(&old, &new, opts, &mut out);
    items::types(&old, &new, &mut out);
    items::functions(&old, &new, &mut out);
    items::extensions(&old, &new, &mut out);
    out
}

/// Renders a list of changes, one per line, for a terminal.
pub fn render(changes: &[Change]) -> String {
    changes.iter().map(|c| format!("  {c}\n")).collect()
}

// Note: the samples are built from DDL, so these tests need feature `ddl` (on by default).
#[cfg(test)]
mod tests {
    use super::*;
    use crate::ddl::from_sql;

    fn snap(sql: &str) -> Snapshot {
        from_sql(&[("t.sql".to_owned(), sql.to_owned())]).0
    }

    fn lines(a: &str, b: &str) -> Vec<String> {
        diff(&snap(a), &snap(b), &DiffOptions::default())
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn same_schema_has_no_changes() {
        let sql = "CREATE TABLE harbors (id int PRIMARY KEY, name text DEFAULT 'x');";
        assert!(lines(sql, sql).is_empty());
    }

    #[test]
    fn column_changes_read_well() {
        let got = lines(
            "CREATE TABLE harbors (id int, name text, depth int);",
            "CREATE TABLE harbors (id int NOT NULL, name varchar(20), size int);",
        );
        assert_eq!(
            got,
            [
                "table public.harbors: column depth removed",
                "table public.harbors: column size added (int4)",
                "table public.harbors: column id: now NOT NULL",
                "table public.harbors: column name: type text → varchar",
            ]
        );
    }

    #[test]
    fn objects_added_and_removed() {
        let got = lines(
            "CREATE TYPE mood AS ENUM ('a'); CREATE TABLE t (x int);",
            "CREATE TYPE mood AS ENUM ('a', 'b'); CREATE TABLE u (x int);",
        );
        assert_eq!(
            got,
            [
                "table public.t: removed",
                "table public.u: added",
                "type public.mood: enum (a) → enum (a, b)",
            ]
        );
    }

    #[test]
    fn a_view_that_came_to_change_the_session_is_a_change() {
        let sql = "CREATE TABLE t (x int); CREATE VIEW v AS SELECT x FROM t;";
        let (a, mut b) = (snap(sql), snap(sql));
        let v = b.relations.iter_mut().find(|r| r.name == "v").expect("v");
        v.changes_session = true;
        let got: Vec<String> = diff(&a, &b, &DiffOptions::default())
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            got,
            [
                "view public.v: reading it may change session state (a function its query or \
              policy calls): no → yes"
            ]
        );
    }

    #[test]
    fn defaults_compare_loosely_unless_exact() {
        let mut a = snap("CREATE TABLE t (c char(2) DEFAULT 'NO');");
        let b = a.clone();
        a.relations[0].columns[0].default = Some("'NO'::bpchar".to_owned());
        assert!(diff(&a, &b, &DiffOptions::default()).is_empty());
        let exact = DiffOptions {
            exprs: ExprCompare::Exact,
            ..DiffOptions::default()
        };
        assert_eq!(diff(&a, &b, &exact).len(), 1);
    }
}
