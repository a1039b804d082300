//! Whole Rust sources checked at once, outside a session: every `qail!` query of a file that
//! the analyzer rejects, found as the server finds them in an open document (for `cargo qail
//! migrate check`), and every `qail!` statement as the macro compiles it (for `cargo qail
//! verify`).

use qail_analyzer::capture::{self, CapturedSql};
use qail_analyzer::{Analysis, Diagnostic};
use qail_schema::Snapshot;

use super::document::{Document, FileKind};
use super::rust_source;

/// A `qail!` query of a source that does not analyze.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    /// 1-based line and column (in characters) of the offending bytes in the source.
    pub line: usize,
    /// See `line`.
    pub column: usize,
    /// The query's SQL as written in the literal.
    pub sql: String,
    /// The analyzer's diagnostic, its range in `sql`.
    pub diagnostic: Diagnostic,
}

/// The `qail!` queries of the Rust source `text` that `snapshot` rejects, in order.
pub fn rejected(text: &str, snapshot: &Snapshot) -> Vec<Rejected> {
    if !text.contains("qail!") {
        return Vec::new();
    }
    let mut doc = Document::new(FileKind::Rust, text.to_owned());
    doc.analyze(snapshot);
    let mut out = Vec::new();
    for region in &doc.regions {
        let diagnostics: Vec<Diagnostic> = match (&region.rewritten, &region.analysis) {
            (Ok(rw), Some(Err(diags))) => diags
                .iter()
                .map(|d| Diagnostic {
                    range: rw.original_range(&d.range),
                    ..d.clone()
                })
                .collect(),
            (Err(e), _) => vec![Diagnostic {
                message: e.message.clone(),
                range: e.range.clone(),
                hint: None,
            }],
            _ => Vec::new(),
        };
        for d in diagnostics {
            let at = region.doc_range(&d.range).start;
            let pos = doc.lines.position(&doc.text, at);
            out.push(Rejected {
                line: pos.line as usize + 1,
                column: pos.character as usize + 1,
                sql: region.sql.clone(),
                diagnostic: d,
            });
        }
    }
    out
}

/// A `qail!` statement of a source, scanned and analyzed as the macro does: every optional
/// clause included, each sort choice at its first alternative (the fullest form).
#[derive(Debug, Clone)]
pub struct Statement {
    /// 1-based line of its `qail!`, as `line!()` in the expansion says.
    pub line: usize,
    /// The scanned SQL (captures as `$n`) and its analysis, or why there is none (the
    /// `qail!` dialect or the analyzer refuses it: the build refuses it too).
    pub analyzed: Result<(CapturedSql, Analysis), String>,
}

/// Every `qail!` statement of the Rust source `text`, in order; a checked COPY (which sends
/// no statement to describe) is left out.
pub fn statements(text: &str, snapshot: &Snapshot) -> Vec<Statement> {
    if !text.contains("qail!") {
        return Vec::new();
    }
    let bulk = |before: &str| capture::bulk_columns(before, snapshot);
    rust_source::invocations(text)
        .into_iter()
        .filter(|(_, e)| capture::copy_form(&e.sql).is_none())
        .map(|(at, e)| {
            let selected = vec![0; e.choices.len()];
            let analyzed = capture::rewrite(&e.sql, e.positional, &e.choices, &selected, &bulk)
                .map_err(|e| e.message)
                .and_then(
                    |scanned| match qail_analyzer::analyze(&scanned.sql, snapshot) {
                        Ok(analysis) => Ok((scanned, analysis)),
                        Err(diagnostics) => Err(diagnostics
                            .first()
                            .map_or_else(|| "rejected".to_owned(), |d| d.message.clone())),
                    },
                );
            Statement {
                line: text[..at].matches('\n').count() + 1,
                analyzed,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_query_on_a_missing_column_is_found_with_its_line() {
        let (snap, _) = qail_analyzer::import_ddl(&[(
            "m.sql".to_owned(),
            "CREATE TABLE users (id int PRIMARY KEY, email text);".to_owned(),
        )]);
        let src = "fn f() {\n    let q = qail!(\"SELECT id FROM users\");\n    let r = qail!(\"SELECT nickname FROM users WHERE id = {id}\");\n}\n";
        let found = super::rejected(src, &snap);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].line, found[0].column), (3, 27));
        assert!(found[0].diagnostic.message.contains("nickname"));
    }

    #[test]
    fn statements_are_found_in_their_fullest_form_at_the_line_of_their_qail() {
        let (snap, _) = qail_analyzer::import_ddl(&[(
            "m.sql".to_owned(),
            "CREATE TABLE users (id int PRIMARY KEY, email text);".to_owned(),
        )]);
        let src = "fn f() {\n    let q = qail!(\n        \"SELECT id FROM users {? WHERE email = {e}}\"\n    );\n    let c = qail!(\"COPY users (id, email) FROM {rows}\");\n    let r = qail!(\"SELECT nickname FROM users\");\n}\n";
        let found = super::statements(src, &snap);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].line, 2);
        let (scanned, analysis) = found[0].analyzed.as_ref().expect("analyzed");
        assert_eq!(scanned.sql, "SELECT id FROM users  WHERE email = $1");
        assert!(scanned.is_dynamic());
        assert_eq!(analysis.params.len(), 1);
        assert_eq!(found[1].line, 6);
        assert!(
            found[1]
                .analyzed
                .as_ref()
                .is_err_and(|e| e.contains("nickname"))
        );
    }
}
