//! Shared helpers: the fixture snapshot and the corpus file format.
//!
//! `corpus.txt` holds cases separated by blank lines. A case is SQL (one or more lines) then
//! `params:` and `cols:` lines. A type is written `int4`, `text[]`, `billing.currency`; a
//! trailing `?` marks it nullable. Columns are `name type`, comma separated. `#` starts a
//! comment line.

use std::sync::OnceLock;

use qail_analyzer::{Analysis, render};
use qail_schema::Snapshot;
use qail_schema::snapshot::TypeRef;

pub(crate) fn snapshot() -> &'static Snapshot {
    static SNAP: OnceLock<Snapshot> = OnceLock::new();
    SNAP.get_or_init(|| {
        let text = include_str!("../fixtures/app.schema.json");
        serde_json::from_str(text).expect("the fixture snapshot parses")
    })
}

/// `sql` analyzed against the fixture snapshot; a diagnostic fails the test, rendered.
pub(crate) fn analyze(sql: &str) -> Analysis {
    qail_analyzer::analyze(sql, snapshot()).unwrap_or_else(|d| {
        panic!(
            "{}",
            d.iter()
                .map(|d| render(sql, d))
                .collect::<Vec<_>>()
                .join("\n")
        )
    })
}

/// A type as the corpus writes it.
pub(crate) fn type_str(t: &TypeRef) -> String {
    let base = if t.schema == "pg_catalog" || t.schema == "public" {
        t.name.clone()
    } else {
        format!("{}.{}", t.schema, t.name)
    };
    format!("{base}{}", "[]".repeat(t.array_dims as usize))
}

#[derive(Debug, Clone)]
pub(crate) struct Case {
    pub(crate) line: usize,
    pub(crate) sql: String,
    /// (type, nullable)
    pub(crate) params: Vec<(String, bool)>,
    /// (name, type, nullable)
    pub(crate) cols: Vec<(String, String, bool)>,
}

pub(crate) fn corpus() -> Vec<Case> {
    let text = include_str!("corpus.txt");
    let mut cases = Vec::new();
    let mut current: Option<Case> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        if line.trim_start().starts_with('#') {
            continue;
        }
        if line.is_empty() {
            cases.extend(current.take());
            continue;
        }
        let case = current.get_or_insert_with(|| Case {
            line: i + 1,
            sql: String::new(),
            params: vec![],
            cols: vec![],
        });
        if let Some(p) = line.strip_prefix("params:") {
            case.params = list(p).into_iter().map(|t| nullable(&t)).collect();
        } else if let Some(c) = line.strip_prefix("cols:") {
            case.cols = list(c)
                .into_iter()
                .map(|spec| {
                    let (name, ty) = spec
                        .rsplit_once(' ')
                        .unwrap_or_else(|| panic!("line {}: column `{spec}` needs a type", i + 1));
                    let (ty, n) = nullable(ty);
                    (name.to_string(), ty, n)
                })
                .collect();
        } else {
            if !case.sql.is_empty() {
                case.sql.push('\n');
            }
            case.sql.push_str(line);
        }
    }
    cases.extend(current);
    cases
}

fn list(s: &str) -> Vec<String> {
    s.split(", ")
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(str::to_string)
        .collect()
}

fn nullable(t: &str) -> (String, bool) {
    match t.strip_suffix('?') {
        Some(base) => (base.to_string(), true),
        None => (t.to_string(), false),
    }
}
