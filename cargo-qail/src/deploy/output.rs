//! The findings for a terminal, as JSON, or as SARIF 2.1.0 (for code scanning in CI).

use serde_json::{Value, json};

use super::{Finding, Kind};

/// How findings are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// For a terminal: the file and line, the SQL with a caret, the fix.
    Text,
    /// `{"pending": …, "findings": [{"rule", "level", "file", "line", "column", "message"}]}`.
    Json,
    /// SARIF 2.1.0.
    Sarif,
}

/// The findings in `format`.
pub fn render(findings: &[Finding], pending: &str, format: Format) -> String {
    match format {
        Format::Text => text(findings, pending),
        Format::Json => {
            let list: Vec<Value> = findings
                .iter()
                .map(|f| {
                    json!({
                        "rule": f.kind.id(),
                        "level": level(f),
                        "file": f.file,
                        "line": f.line,
                        "column": f.column,
                        "message": f.message,
                        "snippet": f.snippet,
                    })
                })
                .collect();
            let doc = json!({ "pending": pending, "findings": list });
            format!("{doc:#}\n")
        }
        Format::Sarif => sarif(findings),
    }
}

fn level(f: &Finding) -> &'static str {
    if f.breaking { "error" } else { "warning" }
}

fn text(findings: &[Finding], pending: &str) -> String {
    let mut out = String::new();
    for f in findings {
        out.push_str(&format!(
            "{}:{}:{}: {}\n",
            f.file, f.line, f.column, f.message
        ));
        for line in f.snippet.lines().skip(1) {
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
    }
    let errors = findings.iter().filter(|f| f.breaking).count();
    let warnings = findings.len() - errors;
    out.push_str(&format!(
        "migrate check ({pending}): {errors} error{}, {warnings} warning{}\n",
        if errors == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" }
    ));
    out
}

fn sarif(findings: &[Finding]) -> String {
    let rules: Vec<Value> = [Kind::Query, Kind::Deployed, Kind::Hazard]
        .iter()
        .map(|k| {
            let text = match k {
                Kind::Query => {
                    "A qail! query fails against the schema after the pending migrations"
                }
                Kind::Deployed => "A query of the deployed version fails while the migration runs",
                Kind::Hazard => "A pending statement locks or rewrites a table that holds rows",
            };
            json!({ "id": k.id(), "shortDescription": { "text": text } })
        })
        .collect();
    let results: Vec<Value> = findings
        .iter()
        .map(|f| {
            json!({
                "ruleId": f.kind.id(),
                "level": level(f),
                "message": { "text": f.message },
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": { "uri": f.file },
                        "region": { "startLine": f.line, "startColumn": f.column }
                    }
                }]
            })
        })
        .collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "cargo-qail",
                "informationUri": "https://github.com/qail-rs/qail",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules
            }},
            "results": results
        }]
    });
    format!("{doc:#}\n")
}
