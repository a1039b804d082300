//! The text format: what a person reads in a terminal.

use std::fmt::Write as _;

use super::Statement;
use super::names::format_type;
use super::why::explain;
use qail_analyzer::{Analysis, Diagnostic, render};
use qail_schema::Snapshot;

/// Every statement with its parameters and columns, or its diagnostics, then a summary line
/// (see the [module docs](super) for an example).
pub fn to_text(statements: &[Statement], snapshot: &Snapshot) -> String {
    let mut out = String::new();
    for st in statements {
        header(&mut out, st);
        match &st.result {
            Ok(a) => analysis(&mut out, a, snapshot),
            Err(diags) => errors(&mut out, st, diags),
        }
        out.push('\n');
    }
    let failed = statements.iter().filter(|s| s.result.is_err()).count();
    let n = statements.len();
    let _ = writeln!(
        out,
        "{n} statement{}: {} ok, {failed} failed",
        if n == 1 { "" } else { "s" },
        n - failed
    );
    out
}

/// For each statement with a result column `name`, the chain of reasons for its type and
/// nullability; failed statements show their diagnostics. The second value says whether any
/// statement had the column.
pub fn why_text(statements: &[Statement], name: &str, snapshot: &Snapshot) -> (String, bool) {
    let mut out = String::new();
    let mut found = false;
    for st in statements {
        match &st.result {
            Ok(a) => {
                for (i, col) in a.columns.iter().enumerate().filter(|(_, c)| c.name == name) {
                    found = true;
                    header(&mut out, st);
                    let e = explain(col, i, st, snapshot);
                    let _ = write!(
                        out,
                        "{}: {}, {}",
                        col.name,
                        format_type(&col.ty, snapshot),
                        if col.nullable { "nullable" } else { "not null" }
                    );
                    if let Some(rust) = &col.rust_type {
                        let _ = write!(out, ", Rust type {rust}");
                    }
                    out.push('\n');
                    for reason in &e.reasons {
                        let _ = writeln!(out, "  - {reason}");
                    }
                    out.push('\n');
                }
            }
            Err(diags) => {
                header(&mut out, st);
                errors(&mut out, st, diags);
                out.push('\n');
            }
        }
    }
    (out, found)
}

fn header(out: &mut String, st: &Statement) {
    let _ = writeln!(out, "{} at {}:{}", st.title(), st.file, st.line);
}

fn analysis(out: &mut String, a: &Analysis, snapshot: &Snapshot) {
    if a.params.is_empty() {
        out.push_str("  params: none\n");
    } else {
        out.push_str("  params:\n");
        for (i, p) in a.params.iter().enumerate() {
            let null = if p.nullable { ", NULL allowed" } else { "" };
            let _ = writeln!(out, "    ${} {}{null}", i + 1, format_type(&p.ty, snapshot));
        }
    }
    if !a.returns_rows {
        out.push_str("  returns no rows\n");
        return;
    }
    if a.columns.is_empty() {
        out.push_str("  columns: none\n");
        return;
    }
    out.push_str("  columns:\n");
    let types: Vec<String> = a
        .columns
        .iter()
        .map(|c| format_type(&c.ty, snapshot))
        .collect();
    let name_w = a
        .columns
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(0);
    let type_w = types.iter().map(|t| t.chars().count()).max().unwrap_or(0);
    for (c, ty) in a.columns.iter().zip(&types) {
        let mut line = format!("    {:<name_w$}  {ty:<type_w$}", c.name);
        if c.nullable {
            let _ = write!(line, "  NULL — {}", c.why.join("; "));
        }
        if let Some(rust) = &c.rust_type {
            let _ = write!(line, "  (Rust type {rust})");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// The diagnostics, each with the caret display the macros use and the file position.
fn errors(out: &mut String, st: &Statement, diags: &[Diagnostic]) {
    for d in diags {
        let shown = render(&st.sql, d);
        let (line, column) = st.position(d.range.start);
        let (first, rest) = shown.split_once('\n').unwrap_or((shown.as_str(), ""));
        let _ = writeln!(out, "{first}\n  --> {}:{line}:{column}", st.file);
        if !rest.is_empty() {
            out.push_str(rest);
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::analyze_file;

    fn fixture() -> Snapshot {
        serde_json::from_str(include_str!(
            "../../../qail-analyzer/tests/fixtures/app.schema.json"
        ))
        .expect("the fixture snapshot parses")
    }

    #[test]
    fn columns_are_aligned_and_reasons_follow_null() {
        let snap = fixture();
        let sql = "-- name: Routes\nSELECT c.id, o.name AS origin_name, $2::int4 AS n\n\
                   FROM odyssey_connections c LEFT JOIN harbors o ON o.id = c.origin_harbor_id\n\
                   WHERE c.name = $1";
        let text = to_text(&analyze_file("q.sql", sql, &snap), &snap);
        assert_eq!(
            text,
            "Routes at q.sql:2\n  params:\n    $1 text\n    $2 integer\n  columns:\n    \
             id           uuid\n    origin_name  text     NULL — right side of LEFT JOIN \
             harbors AS o\n    n            integer\n\n1 statement: 1 ok, 0 failed\n"
        );
    }

    #[test]
    fn errors_point_into_the_file() {
        let snap = fixture();
        let sql = "SELECT 1;\n\nUPDATE harbors SET name = $1;\nSELECT id,\n  nme FROM harbors";
        let text = to_text(&analyze_file("q.sql", sql, &snap), &snap);
        assert!(
            text.contains("statement 2 at q.sql:3\n  params:\n    $1 text\n  returns no rows\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "statement 3 at q.sql:4\nerror: column \"nme\" does not exist in table \
                 \"harbors\"\n  --> q.sql:5:3\n  |    nme FROM harbors\n  |    ^^^"
            ),
            "{text}"
        );
        assert!(text.ends_with("3 statements: 2 ok, 1 failed\n"), "{text}");
    }
}
