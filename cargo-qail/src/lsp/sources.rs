//! Whole Rust sources checked at once, outside a session: every `qail!` query of a file that
//! the analyzer rejects, found as the server finds them in an open document (for `cargo qail
//! migrate check`).

use qail_analyzer::Diagnostic;
use qail_schema::Snapshot;

use super::document::{Document, FileKind};

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
}
