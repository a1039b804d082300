//! Every corpus query analyzed offline: parameter types and nullability, column names,
//! types and nullability must match the expectations written next to the SQL.

use qail_analyzer::{analyze, render};

use crate::support::{corpus, snapshot, type_str};

#[test]
fn corpus_matches_expectations() {
    let snap = snapshot();
    let cases = corpus();
    assert!(cases.len() >= 400, "the corpus has {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let got = match analyze(&case.sql, snap) {
            Ok(a) => a,
            Err(diags) => {
                let shown: Vec<String> = diags.iter().map(|d| render(&case.sql, d)).collect();
                failures.push(format!(
                    "line {}: {}\n{}",
                    case.line,
                    case.sql,
                    shown.join("\n")
                ));
                continue;
            }
        };
        let params: Vec<(String, bool)> = got
            .params
            .iter()
            .map(|p| (type_str(&p.ty), p.nullable))
            .collect();
        let cols: Vec<(String, String, bool)> = got
            .columns
            .iter()
            .map(|c| (c.name.clone(), type_str(&c.ty), c.nullable))
            .collect();
        if params != case.params || cols != case.cols {
            failures.push(format!(
                "line {}: {}\n  params want {:?}\n         got {:?}\n  cols want {:?}\n       got {:?}",
                case.line, case.sql, case.params, params, case.cols, cols
            ));
        }
    }
    let passed = cases.len() - failures.len();
    assert!(
        failures.is_empty(),
        "{passed}/{} corpus cases pass; failures:\n{}",
        cases.len(),
        failures.join("\n\n")
    );
}
