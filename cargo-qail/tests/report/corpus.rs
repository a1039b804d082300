//! The analyzer's whole corpus, cut into one `.sql` file of named statements and run through
//! `cargo qail analyze --format json`: every statement's parameter and column types (as
//! PostgreSQL's format_type spells them) and nullability must be the corpus's expectations.

use serde_json::Value;

use crate::support::corpus;
use crate::util::{analyze, stderr, stdout, temp_dir};

/// A corpus type (`int4`, `text[]`, `billing.currency`) as format_type spells it.
fn format_type_spelling(corpus_type: &str) -> String {
    let (base, array) = match corpus_type.find("[]") {
        Some(i) => (&corpus_type[..i], "[]"),
        None => (corpus_type, ""),
    };
    let base = match base {
        "bool" => "boolean",
        "bpchar" => "character",
        "char" => "\"char\"",
        "float4" => "real",
        "float8" => "double precision",
        "int2" => "smallint",
        "int4" => "integer",
        "int8" => "bigint",
        "time" => "time without time zone",
        "timetz" => "time with time zone",
        "timestamp" => "timestamp without time zone",
        "timestamptz" => "timestamp with time zone",
        "varbit" => "bit varying",
        "varchar" => "character varying",
        other => other,
    };
    format!("{base}{array}")
}

fn str_of<'v>(v: &'v Value, key: &str) -> &'v str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is a string in {v}"))
}

#[test]
fn json_types_match_the_corpus() {
    let cases = corpus();
    assert!(cases.len() >= 100, "the corpus has {} cases", cases.len());
    let mut text = String::from("-- The analyzer corpus, one named statement per case.\n\n");
    let mut lines = Vec::new();
    for case in &cases {
        text.push_str(&format!("-- name: corpus_line_{}\n", case.line));
        lines.push(text.matches('\n').count() + 1);
        text.push_str(&case.sql);
        text.push_str(";\n\n");
    }
    let path = temp_dir("corpus").join("corpus.sql");
    std::fs::write(&path, &text).expect("write the corpus file");
    let out = analyze(&["--format", "json", path.to_str().expect("UTF-8 temp path")]);
    let json: Value = serde_json::from_str(&stdout(&out)).expect("the output is JSON");
    let statements = json["statements"].as_array().expect("a statements array");
    assert_eq!(statements.len(), cases.len(), "one statement per case");
    let mut failures = Vec::new();
    for ((case, st), line) in cases.iter().zip(statements).zip(&lines) {
        assert_eq!(str_of(st, "name"), format!("corpus_line_{}", case.line));
        assert_eq!(st["line"].as_u64(), u64::try_from(*line).ok(), "{st}");
        assert_eq!(str_of(st, "sql"), case.sql);
        let params: Vec<(String, bool)> = case
            .params
            .iter()
            .map(|(t, n)| (format_type_spelling(t), *n))
            .collect();
        let cols: Vec<(String, String, bool)> = case
            .cols
            .iter()
            .map(|(name, t, n)| (name.clone(), format_type_spelling(t), *n))
            .collect();
        let got_params: Vec<(String, bool)> = st["params"]
            .as_array()
            .expect("params")
            .iter()
            .map(|p| (str_of(p, "type").to_owned(), p["nullable"] == true))
            .collect();
        let got_cols: Vec<(String, String, bool)> = st["columns"]
            .as_array()
            .expect("columns")
            .iter()
            .map(|c| {
                (
                    str_of(c, "name").to_owned(),
                    str_of(c, "type").to_owned(),
                    c["nullable"] == true,
                )
            })
            .collect();
        for c in st["columns"].as_array().expect("columns") {
            let reasons = c["reasons"].as_array().expect("reasons");
            if str_of(c, "why").is_empty() || reasons.is_empty() {
                failures.push(format!(
                    "corpus line {}: column without reasons: {c}",
                    case.line
                ));
            }
        }
        if st["ok"] != true || got_params != params || got_cols != cols {
            failures.push(format!(
                "corpus line {}: {}\n  want params {params:?}\n       cols {cols:?}\n  got {st}",
                case.line, case.sql
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
