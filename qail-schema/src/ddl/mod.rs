//! DDL scripts → a [`Snapshot`], without a database.
//!
//! Scripts are parsed with sqlparser's PostgreSQL dialect, one statement at a time, and applied
//! in order: `CREATE`/`ALTER`/`DROP` of schemas, tables, views, types, domains and functions.
//! A statement that cannot be parsed or applied becomes a [`DdlWarning`] naming the file and
//! line, and the import carries on. Statements with no effect on the snapshot (`COMMENT`,
//! `GRANT`, non-unique `CREATE INDEX`, `INSERT` …) are ignored silently.
//!
//! # Normalizations
//!
//! - Type names become catalog names (`integer` → `int4`, `character varying(20)` →
//!   `varchar`); modifiers such as lengths are not recorded.
//! - `serial`/`bigserial`/`smallserial` become `int4`/`int8`/`int2`, `NOT NULL`, with the
//!   default `nextval('<table>_<column>_seq'::regclass)`.
//! - Defaults and generation expressions are kept as sqlparser prints them, which is not always
//!   how PostgreSQL's `pg_get_expr` prints them (`'a'` vs `'a'::text`). Comparisons of
//!   snapshots treat them loosely: see [`crate::diff::loose_expr`].
//! - View and materialized view columns need the analyzer to be typed, which sits above this
//!   crate: [`from_sql_with_views`] takes the function that types a view's query (qail-analyzer's
//!   `view_columns`) and calls it at each `CREATE VIEW` with the snapshot as it stands then;
//!   [`from_sql`] records views with no columns, and a warning says so. View columns are
//!   nullable, as `schema pull` reads them.
//! - Sequences are recorded as relations (`last_value`, `log_cnt`, `is_called`): those of
//!   `CREATE SEQUENCE` and those PostgreSQL creates for `serial` and identity columns (named
//!   `<table>_<column>_seq`, dropped with their column or table, kept on renames).
//! - `DO $$ BEGIN …; …; END $$` whose body is a straight list of plain statements (optionally
//!   ending with `EXCEPTION WHEN … THEN NULL`) has those statements imported; any other `DO`
//!   body is reported by file and line.
//! - A `UNIQUE` constraint on exactly the primary key columns is dropped (PostgreSQL does the
//!   same when it creates the table).
//! - PostgreSQL 18's forms are read as a pull records them: a `VIRTUAL` generated column (the
//!   default from 18) like a `STORED` one, a temporal key (`WITHOUT OVERLAPS`, `PERIOD`) by its
//!   columns, a foreign key whether `ENFORCED` or not, and a `NOT ENFORCED` CHECK as having no
//!   effect (it forces no column non-null).
//!
//! # Limits
//!
//! - Forms sqlparser 0.59 does not parse are reported and skipped: `ALTER TABLE … SET
//!   SCHEMA`, `LIKE … INCLUDING …`, `CREATE AGGREGATE`, `DO` blocks with control flow,
//!   among others.
//!   `PARTITION OF`, `AS RANGE`, `RETURNS SETOF`, `VARIADIC` and domain `NOT NULL` are
//!   recognized here.
//! - `CREATE TABLE … AS` is recorded without columns, with a warning.
//! - `(LIKE t)` copies NOT NULL also where it came from a `CHECK (c IS NOT NULL)` of `t`
//!   (PostgreSQL copies only declared NOT NULL without `INCLUDING CONSTRAINTS`).
//! - Dropping a CHECK constraint does not undo the NOT NULL a `CHECK (c IS NOT NULL)` gave.
//! - `ALTER SEQUENCE … RENAME` is not followed; triggers, policies, privileges and comments
//!   are not part of a snapshot.

mod alter;
mod keys;
mod names;
mod objects;
mod pg18;
mod sequences;
mod sources;
mod split;
mod table;

use std::fmt;
use std::path::{Path, PathBuf};

use sqlparser::ast::Statement;

use crate::snapshot::{Field, Snapshot};
use split::{Flags, Parsed};

pub use sources::relative_to;
pub(crate) use table::force_not_null;

/// Columns that a CHECK expression's text (`((a IS NOT NULL))`) forces to be non-null.
pub(crate) fn parse_not_null_check(expr: &str) -> Vec<String> {
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    sqlparser::parser::Parser::new(&dialect)
        .try_with_sql(expr)
        .and_then(|mut p| p.parse_expr())
        .map(|e| table::not_null_columns(&e))
        .unwrap_or_default()
}

/// A statement that was skipped or only partly applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DdlWarning {
    /// The file's name, as given to [`from_sql`].
    pub file: String,
    /// 1-based line where the statement starts.
    pub line: u64,
    /// What happened, and what to do about it.
    pub message: String,
    /// The PostgreSQL major version that added the form warned about, when the warning is
    /// about that: it matters only to a target range that includes older versions
    /// ([`DdlWarning::applies_to`]).
    pub since: Option<u8>,
}

impl DdlWarning {
    /// Whether the warning matters to a project targeting `target` (from
    /// [`Snapshot::target`]): always, unless it is about a form newer than every version of
    /// the range.
    pub fn applies_to(&self, target: qail_catalog::Versions) -> bool {
        self.since
            .is_none_or(|since| target.first().is_some_and(|first| first < since))
    }
}

impl fmt::Display for DdlWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

/// Builds a snapshot from DDL scripts given as `(file name, text)`, applied in the given order.
///
/// The snapshot's search_path is `public`; `SET search_path` in a script changes how later
/// statements resolve unqualified names, as in a session. Views are recorded without columns
/// (see [`from_sql_with_views`]).
pub fn from_sql(files: &[(String, String)]) -> (Snapshot, Vec<DdlWarning>) {
    import(files, None)
}

/// Types a view's query (its `SELECT` as text) against the snapshot as it stands when the view
/// is created: the view's columns in order and whether reading it may change session state,
/// or why they cannot be known.
pub type ViewTyper<'a> = dyn FnMut(&Snapshot, &str) -> Result<TypedView, String> + 'a;

/// What a [`ViewTyper`] knows of a view's query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypedView {
    /// The view's columns, in order.
    pub columns: Vec<Field>,
    /// Whether the query may change session state
    /// ([`Relation::changes_session`](crate::snapshot::Relation::changes_session)).
    pub changes_session: bool,
}

/// [`from_sql`], with each view's and materialized view's columns from `typer` (qail-analyzer
/// provides one: this crate sits below the analyzer). The snapshot handed to `typer` has the
/// search_path in effect at the `CREATE VIEW`.
pub fn from_sql_with_views(
    files: &[(String, String)],
    typer: &mut ViewTyper<'_>,
) -> (Snapshot, Vec<DdlWarning>) {
    import(files, Some(typer))
}

fn import(
    files: &[(String, String)],
    mut typer: Option<&mut ViewTyper<'_>>,
) -> (Snapshot, Vec<DdlWarning>) {
    let mut imp = Importer::new();
    for (name, text) in files {
        imp.file.clone_from(name);
        for stmt in split::statements(text) {
            imp.line = stmt.line;
            match stmt.parsed {
                Ok(s) => imp.apply(&s),
                Err(e) => imp.warn(e),
            }
            if let Some(view) = imp.pending_view.take() {
                imp.type_view(view, typer.as_deref_mut());
            }
            imp.sync_sequences();
            imp.sources.record(&imp.snap, name, text, stmt.line);
        }
    }
    imp.finish()
}

/// Reads `.sql` files from `paths` (files, or directories whose `.sql` files are taken in name
/// order) and imports them with [`from_sql`].
pub fn from_paths(paths: &[PathBuf]) -> std::io::Result<(Snapshot, Vec<DdlWarning>)> {
    Ok(from_sql(&read_paths(paths)?))
}

/// The `(file name, text)` of the `.sql` files of `paths` (files, or directories whose `.sql`
/// files are taken in name order), for [`from_sql`] or [`from_sql_with_views`].
pub fn read_paths(paths: &[PathBuf]) -> std::io::Result<Vec<(String, String)>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(p)?
                .map(|e| e.map(|e| e.path()))
                .collect::<Result<_, _>>()?;
            entries.retain(|e| e.extension().is_some_and(|x| x == "sql"));
            entries.sort();
            for e in entries {
                files.push(read(&e)?);
            }
        } else {
            files.push(read(p)?);
        }
    }
    Ok(files)
}

fn read(path: &Path) -> std::io::Result<(String, String)> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        std::io::Error::new(e.kind(), format!("cannot read {}: {e}", path.display()))
    })?;
    Ok((path.display().to_string(), text))
}

/// The state of an import: the snapshot so far and where we are.
pub(crate) struct Importer {
    pub(crate) snap: Snapshot,
    /// search_path used to resolve names (changed by `SET search_path`).
    pub(crate) path: Vec<String>,
    /// Names of keys, for later `DROP CONSTRAINT`/`DROP INDEX`.
    keys: Vec<keys::NamedKey>,
    /// Sequences PostgreSQL created for serial and identity columns.
    owned: Vec<sequences::Owned>,
    /// The view the last statement created, for its columns to be typed.
    pending_view: Option<PendingView>,
    warnings: Vec<DdlWarning>,
    sources: sources::Recorder,
    file: String,
    line: u64,
}

impl Importer {
    fn new() -> Importer {
        let mut snap = Snapshot::new();
        snap.schemas = vec!["public".to_owned()];
        Importer {
            snap,
            path: vec!["public".to_owned()],
            keys: Vec::new(),
            owned: Vec::new(),
            pending_view: None,
            warnings: Vec::new(),
            sources: sources::Recorder::default(),
            file: String::new(),
            line: 0,
        }
    }

    pub(crate) fn warn(&mut self, message: impl Into<String>) {
        self.warnings.push(DdlWarning {
            file: self.file.clone(),
            line: self.line,
            message: message.into(),
            since: None,
        });
    }

    /// Fills in the columns of the view the last statement created, or says why it cannot.
    fn type_view(&mut self, view: PendingView, typer: Option<&mut ViewTyper<'_>>) {
        let what = if view.materialized {
            "materialized view"
        } else {
            "view"
        };
        let (schema, name) = (view.schema, view.name);
        let Some(typer) = typer else {
            self.warn(format!(
                "{what} {schema}.{name} is recorded without columns (this import does not type \
                 view queries), so queries on it cannot be checked: build the snapshot with \
                 `cargo qail schema build` or pull it with `cargo qail schema pull`"
            ));
            return;
        };
        let saved = std::mem::replace(&mut self.snap.search_path, self.path.clone());
        let typed = typer(&self.snap, &view.query);
        self.snap.search_path = saved;
        let TypedView {
            columns: mut fields,
            changes_session,
        } = match typed {
            Ok(typed) => typed,
            Err(e) => {
                self.warn(format!(
                    "{what} {schema}.{name}: its query cannot be typed ({e}); it is recorded \
                     without columns: fix the query, or pull the snapshot with `cargo qail \
                     schema pull`"
                ));
                return;
            }
        };
        for (f, alias) in fields.iter_mut().zip(&view.aliases) {
            f.name.clone_from(alias);
        }
        let Some(i) = self.relation_index(Some(&schema), &name) else {
            return;
        };
        self.snap.relations[i].changes_session = changes_session;
        self.snap.relations[i].columns = fields
            .into_iter()
            .map(|f| crate::snapshot::Column {
                name: f.name,
                ty: f.ty,
                not_null: false,
                default: None,
                identity: None,
                generated: None,
            })
            .collect();
    }

    fn apply(&mut self, parsed: &Parsed) {
        let result = match parsed {
            Parsed::Sql(stmt, flags) => self.apply_sql(stmt, *flags),
            Parsed::PartitionOf {
                name,
                parent,
                if_not_exists,
            } => self.partition_of(name, parent, *if_not_exists),
            Parsed::Range { name, subtype } => self.create_range(name, subtype),
            Parsed::ResetSearchPath => {
                self.path.clone_from(&self.snap.search_path);
                Ok(())
            }
            Parsed::SetIdentity {
                table,
                column,
                always,
            } => self.set_identity(table, column, *always),
            Parsed::NoEffect => Ok(()),
        };
        if let Err(message) = result {
            self.warn(message);
        }
    }

    fn apply_sql(&mut self, stmt: &Statement, flags: Flags) -> Result<(), String> {
        if flags.virtual_column {
            self.warnings.push(DdlWarning {
                file: self.file.clone(),
                line: self.line,
                message: "a virtual generated column (`GENERATED ALWAYS AS (…) VIRTUAL`, or \
                          without STORED) exists from PostgreSQL 18, and the target range \
                          includes older versions, which refuse this statement: write \
                          `GENERATED ALWAYS AS (…) STORED`, or target PostgreSQL 18 alone \
                          (\"postgres\": \"18\" in the snapshot)"
                    .to_owned(),
                since: Some(18),
            });
        }
        match stmt {
            Statement::CreateTable(ct) => self.create_table(ct),
            Statement::AlterTable {
                name,
                operations,
                if_exists,
                ..
            } => self.alter_table(name, operations, *if_exists),
            Statement::Set(set) => self.set(set),
            other => self.apply_object(other, flags),
        }
    }

    fn finish(mut self) -> (Snapshot, Vec<DdlWarning>) {
        self.resolve_foreign_keys();
        self.snap.sources = std::mem::take(&mut self.sources).finish(&self.snap);
        self.snap.sort();
        (self.snap, self.warnings)
    }

    /// `REFERENCES t` without columns means t's primary key; fill those in now that every
    /// table is known.
    fn resolve_foreign_keys(&mut self) {
        let mut missing = Vec::new();
        for ri in 0..self.snap.relations.len() {
            for fi in 0..self.snap.relations[ri].foreign_keys.len() {
                let fk = &self.snap.relations[ri].foreign_keys[fi];
                if !fk.ref_columns.is_empty() {
                    continue;
                }
                let pk = self
                    .snap
                    .relation(Some(&fk.ref_schema), &fk.ref_table)
                    .map(|r| r.primary_key.clone())
                    .unwrap_or_default();
                if pk.is_empty() {
                    missing.push(format!(
                        "foreign key {} references {}.{}, which has no primary key; name the \
                         referenced columns",
                        fk.name, fk.ref_schema, fk.ref_table
                    ));
                }
                self.snap.relations[ri].foreign_keys[fi].ref_columns = pk;
            }
        }
        for m in missing {
            self.line = 0;
            self.warn(m);
        }
    }

    fn set(&mut self, set: &sqlparser::ast::Set) -> Result<(), String> {
        use sqlparser::ast::Set;
        if let Set::SingleAssignment {
            variable, values, ..
        } = set
            && variable.to_string().eq_ignore_ascii_case("search_path")
        {
            self.path = values
                .iter()
                .map(|v| names::unquote_value(&v.to_string()))
                .filter(|s| s != "$user" && s != "pg_catalog")
                .collect();
        }
        Ok(())
    }
}

/// A view created by the last statement, waiting for its columns.
pub(crate) struct PendingView {
    schema: String,
    name: String,
    materialized: bool,
    /// Its `SELECT`, as sqlparser prints it.
    query: String,
    /// The column names given after the view's name, if any.
    aliases: Vec<String>,
}

#[cfg(test)]
mod tests;
