//! `cargo qail analyze`: the analyzer over SQL files, with the reasons behind every type.
//!
//! ```text
//! cargo qail analyze [--snapshot PATH] [--format text|json] [--why NAME] [--timings] FILE…
//! ```
//!
//! Each FILE (`-` for standard input) holds one or more statements, split by [`split`]: at
//! `;` outside quotes, dollar quotes and comments. A comment line `-- name: Foo` before a
//! statement names it (and ends the statement before it). Every statement is checked with
//! [`qail_analyzer::analyze`] against the snapshot: `--snapshot PATH`, else env
//! `QAIL_SCHEMA`, else the nearest `qail.schema.json` in the current directory or a parent —
//! the same file the `qail!` macro would use
//! ([`snapshot::discover`](qail_schema::snapshot::discover)).
//!
//! Exit status: 0 when every statement checks, 1 when any fails, 2 on a usage error (an
//! unknown flag, a file that cannot be read, no snapshot or a broken one). A rejected
//! statement never stops the others from being reported.
//!
//! # Text format
//!
//! ```text
//! FerryRoutes at queries.sql:3
//!   params:
//!     $1 text
//!     $2 integer, NULL allowed
//!   columns:
//!     id           uuid
//!     origin       text  NULL — right side of LEFT JOIN harbors AS origin
//!
//! statement 2 at queries.sql:9
//! error: column "nme" does not exist in table "harbors"
//!   --> queries.sql:9:12
//!   |  SELECT id, nme FROM harbors
//!   |             ^^^ did you mean "name"?
//!
//! 2 statements: 1 ok, 1 failed
//! ```
//!
//! `--why NAME` prints, for each statement that has a result column `NAME`, the chain of
//! reasons for that column's type and nullability:
//!
//! ```text
//! FerryRoutes at queries.sql:3
//! origin: text, nullable
//!   - column public.harbors.name is text NOT NULL
//!   - harbors AS origin is the right side of a LEFT JOIN (line 5), so its columns may be NULL
//!   - no WHERE predicate rejects NULL for origin
//! ```
//!
//! # JSON format
//!
//! `--format json` prints one JSON object; the field names below are stable (new fields may
//! be added, none renamed or removed):
//!
//! ```json
//! {"statements": [{
//!   "name": "FerryRoutes",
//!   "file": "queries.sql",
//!   "index": 1,
//!   "line": 3,
//!   "sql": "SELECT …",
//!   "ok": true,
//!   "params": [{"index": 1, "type": "text", "nullable": false}],
//!   "columns": [{"name": "origin", "type": "text", "nullable": true,
//!                "source": "public.harbors.name",
//!                "why": "right side of LEFT JOIN harbors AS origin",
//!                "reasons": ["column public.harbors.name is text NOT NULL", "…"],
//!                "rust_type": null}],
//!   "errors": []
//! }]}
//! ```
//!
//! | field | meaning |
//! |-------|---------|
//! | `statements` | every statement of every file, in order |
//! | `name` | from the `-- name: Foo` comment line, or `null` |
//! | `file` | the path as given on the command line; `<stdin>` for `-` |
//! | `index` | 1-based position of the statement in its file |
//! | `line` | 1-based line of the statement's first token in its file |
//! | `sql` | the statement's text as analyzed (no leading comments, no `;`) |
//! | `ok` | whether the statement checks; then `errors` is empty |
//! | `params[].index` | `n` of `$n` |
//! | `params[].type` | the type as PostgreSQL's `format_type()` spells it ([`format_type`]): `bigint`, `character varying`, `text[]`, `billing.currency` |
//! | `params[].nullable` | whether passing NULL is meaningful (`Option<T>` in Rust) |
//! | `columns[].name` | the column name PostgreSQL reports (alias suffixes `!`, `?`, `: Type` removed) |
//! | `columns[].type` | as for parameters |
//! | `columns[].nullable` | whether the column can be NULL |
//! | `columns[].source` | `schema.table.column` the value is taken from unchanged, or `null` |
//! | `columns[].why` | one line: why the column is nullable, or why it is not (`primary key`, `NOT NULL column`) |
//! | `columns[].reasons` | the whole chain, as `--why` prints it |
//! | `columns[].rust_type` | the Rust type from an alias `AS "name: path::Type"`, or `null` |
//! | `errors[].message` | what is wrong |
//! | `errors[].start`, `errors[].end` | byte range of the offending text in `sql` |
//! | `errors[].line`, `errors[].column` | 1-based position of `start` in the file (column in characters) |
//! | `errors[].hint` | the fix, or `null` |

mod cli;
mod joins;
mod json;
pub(crate) mod names;

mod text;
pub(crate) mod why;

pub use cli::{Format, Options, run};
pub use json::to_json;
pub use names::format_type;
pub use qail_schema::script::{Piece, split};
pub use text::{to_text, why_text};

use qail_analyzer::{Analysis, Diagnostic};
use qail_schema::Snapshot;

/// One statement of a file, analyzed.
#[derive(Debug, Clone)]
pub struct Statement {
    /// The file as it was named (`<stdin>` for standard input).
    pub file: String,
    /// 1-based position of the statement in its file.
    pub index: usize,
    /// From a `-- name: Foo` comment line before the statement.
    pub name: Option<String>,
    /// 1-based line of the statement's first token in the file.
    pub line: usize,
    /// 1-based column (in characters) of the statement's first token.
    pub column: usize,
    /// The statement's text.
    pub sql: String,
    /// The analysis, or the diagnostics (byte ranges into `sql`).
    pub result: Result<Analysis, Vec<Diagnostic>>,
}

impl Statement {
    /// `Foo` or `statement 3`.
    pub fn title(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => format!("statement {}", self.index),
        }
    }

    /// The 1-based file line and column (in characters) of byte `offset` of `sql`.
    pub fn position(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.sql.len());
        while !self.sql.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &self.sql[..offset];
        let newlines = before.matches('\n').count();
        match before.rfind('\n') {
            Some(nl) => (self.line + newlines, before[nl + 1..].chars().count() + 1),
            None => (self.line, self.column + before.chars().count()),
        }
    }
}

/// Splits `text` (the contents of `file`) into statements and analyzes each against
/// `snapshot`.
pub fn analyze_file(file: &str, text: &str, snapshot: &Snapshot) -> Vec<Statement> {
    let mut line = 1;
    let mut line_start = 0;
    let mut seen = 0;
    split(text)
        .into_iter()
        .enumerate()
        .map(|(i, piece)| {
            let start = piece.range.start;
            line += text[seen..start].matches('\n').count();
            if let Some(nl) = text[seen..start].rfind('\n') {
                line_start = seen + nl + 1;
            }
            seen = start;
            let sql = &text[piece.range];
            Statement {
                file: file.to_owned(),
                index: i + 1,
                name: piece.name,
                line,
                column: text[line_start..start].chars().count() + 1,
                sql: sql.to_owned(),
                result: qail_analyzer::analyze(sql, snapshot),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_know_their_file_positions() {
        let text = "-- name: A\nSELECT 1;\n\n  SELECT 'é', 2; SELECT\n  3";
        let st = analyze_file("q.sql", text, &Snapshot::new());
        let pos: Vec<(usize, usize, usize)> =
            st.iter().map(|s| (s.index, s.line, s.column)).collect();
        assert_eq!(pos, [(1, 2, 1), (2, 4, 3), (3, 4, 18)]);
        assert_eq!(st[0].title(), "A");
        assert_eq!(st[2].title(), "statement 3");
        assert_eq!(st[1].position(8), (4, 11));
        assert_eq!(st[2].position(9), (5, 3));
        assert_eq!(st[2].sql, "SELECT\n  3");
    }
}
