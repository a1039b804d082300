//! Reading and writing `qail.schema.json`.
//!
//! The writer is hand-made over [`serde_json::Value`] so the file reads well in a diff: keys
//! come in a fixed, meaningful order (`schema`, `name`, `kind` first), an object that holds a
//! list of objects is spread over several lines with one list element per line, and every
//! other object (a column, a foreign key, a type reference) sits on one line.

use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{FORMAT_VERSION, Snapshot};

/// Why a snapshot file could not be read or written.
#[derive(Debug)]
pub enum FileError {
    /// The file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The file is not valid JSON, or does not have the snapshot's shape.
    Syntax {
        /// The file, when the snapshot came from one.
        path: Option<PathBuf>,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// What is wrong there.
        message: String,
    },
    /// The file was written in a format version this qail does not read.
    Version {
        /// The file, when the snapshot came from one.
        path: Option<PathBuf>,
        /// The `format_version` found in the file.
        found: u64,
    },
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileError::Io { path, source } => write!(
                f,
                "cannot access schema snapshot {}: {source}; check the path (or set QAIL_SCHEMA), \
                 or create it with `cargo qail schema pull`",
                path.display()
            ),
            FileError::Syntax {
                path,
                line,
                column,
                message,
            } => write!(
                f,
                "{}:{line}:{column}: broken schema snapshot: {message}; fix the file by hand or \
                 regenerate it with `cargo qail schema pull`",
                path_or_input(path.as_deref())
            ),
            FileError::Version { path, found } => {
                let src = path_or_input(path.as_deref());
                if *found > u64::from(FORMAT_VERSION) {
                    write!(
                        f,
                        "{src}: format_version {found} was written by a newer qail; qail {} reads \
                         format_version {FORMAT_VERSION} (qail 0.1 and later); upgrade qail or \
                         re-pull with `cargo qail schema pull`",
                        env!("CARGO_PKG_VERSION")
                    )
                } else {
                    write!(
                        f,
                        "{src}: format_version {found} is not a qail schema snapshot format \
                         (qail {} reads format_version {FORMAT_VERSION}); re-pull with \
                         `cargo qail schema pull`",
                        env!("CARGO_PKG_VERSION")
                    )
                }
            }
        }
    }
}

impl std::error::Error for FileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FileError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

fn path_or_input(path: Option<&Path>) -> String {
    path.map_or_else(
        || "<schema snapshot>".to_owned(),
        |p| p.display().to_string(),
    )
}

impl Snapshot {
    /// Reads a snapshot file.
    pub fn load(path: impl AsRef<Path>) -> Result<Snapshot, FileError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| FileError::Io {
            path: path.to_owned(),
            source,
        })?;
        Snapshot::from_json(&text).map_err(|e| e.with_path(path))
    }

    /// Parses a snapshot from its JSON text.
    ///
    /// An unknown `format_version` is refused before anything else is looked at; errors in the
    /// text carry a line and column.
    pub fn from_json(text: &str) -> Result<Snapshot, FileError> {
        let value: Value = serde_json::from_str(text).map_err(syntax)?;
        let found = value.get("format_version").and_then(Value::as_u64);
        match found {
            Some(v) if v == u64::from(FORMAT_VERSION) => {}
            Some(v) => {
                return Err(FileError::Version {
                    path: None,
                    found: v,
                });
            }
            None => {
                return Err(FileError::Syntax {
                    path: None,
                    line: 1,
                    column: 1,
                    message: "missing or non-numeric \"format_version\"".to_owned(),
                });
            }
        }
        serde_json::from_str(text).map_err(syntax)
    }

    /// Writes the snapshot to `path` (sorted first; see [`Snapshot::to_json`]).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), FileError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_json()).map_err(|source| FileError::Io {
            path: path.to_owned(),
            source,
        })
    }

    /// The file text: sorted, stable, one column per line, ending in a newline.
    pub fn to_json(&self) -> String {
        let mut sorted = self.clone();
        sorted.sort();
        let value = serde_json::to_value(&sorted).expect("a snapshot always serializes to JSON");
        let mut out = String::new();
        write_root(&mut out, &value);
        out.push('\n');
        out
    }
}

impl FileError {
    fn with_path(self, p: &Path) -> FileError {
        match self {
            FileError::Syntax {
                line,
                column,
                message,
                ..
            } => FileError::Syntax {
                path: Some(p.to_owned()),
                line,
                column,
                message,
            },
            FileError::Version { found, .. } => FileError::Version {
                path: Some(p.to_owned()),
                found,
            },
            io => io,
        }
    }
}

fn syntax(e: serde_json::Error) -> FileError {
    let full = e.to_string();
    // serde_json appends " at line L column C"; keep the message without it.
    let message = full
        .rsplit_once(" at line ")
        .map_or(full.as_str(), |(m, _)| m)
        .to_owned();
    FileError::Syntax {
        path: None,
        line: e.line(),
        column: e.column(),
        message,
    }
}

/// Keys in the order they are written; keys not listed follow in alphabetical order.
const KEY_ORDER: &[&str] = &[
    "format_version",
    "server_version",
    "postgres",
    "search_path",
    "schemas",
    "relations",
    "types",
    "functions",
    "extensions",
    "base_types",
    "operators",
    "casts",
    "sources",
    "schema",
    "name",
    "kind",
    "left",
    "right",
    "result",
    "function",
    "from",
    "to",
    "context",
    "category",
    "preferred",
    "array_oid",
    "type",
    "not_null",
    "default",
    "identity",
    "generated",
    "oid",
    "array_dims",
    "labels",
    "fields",
    "base",
    "subtype",
    "args",
    "arg_names",
    "defaults",
    "variadic",
    "returns",
    "returns_set",
    "out_columns",
    "strict",
    "volatility",
    "extension",
    "version",
    "columns",
    "primary_key",
    "unique",
    "foreign_keys",
    "ref_schema",
    "ref_table",
    "ref_columns",
    "table",
    "column",
    "file",
    "line",
];

fn key_rank(key: &str) -> usize {
    KEY_ORDER
        .iter()
        .position(|k| *k == key)
        .unwrap_or(KEY_ORDER.len())
}

fn ordered(map: &serde_json::Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by(|a, b| key_rank(a.0).cmp(&key_rank(b.0)).then_with(|| a.0.cmp(b.0)));
    entries
}

/// Whether `v` is, or contains, a list of objects: such a value is spread over lines.
fn holds_objects(v: &Value) -> bool {
    match v {
        Value::Array(items) => items.iter().any(Value::is_object),
        Value::Object(map) => map.values().any(holds_objects),
        _ => false,
    }
}

/// The top-level object always has one key per line.
fn write_root(out: &mut String, v: &Value) {
    match v {
        Value::Object(map) => write_object(out, map, 0),
        other => write_inline(out, other),
    }
}

fn write_object(out: &mut String, map: &serde_json::Map<String, Value>, indent: usize) {
    out.push_str("{\n");
    let entries = ordered(map);
    for (i, (k, val)) in entries.iter().enumerate() {
        push_indent(out, indent + 2);
        write_inline(out, &Value::String((*k).clone()));
        out.push_str(": ");
        write_value(out, val, indent + 2);
        out.push_str(if i + 1 < entries.len() { ",\n" } else { "\n" });
    }
    push_indent(out, indent);
    out.push('}');
}

fn write_value(out: &mut String, v: &Value, indent: usize) {
    match v {
        Value::Object(map) if holds_objects(v) => write_object(out, map, indent),
        Value::Array(items) if !items.is_empty() && holds_objects(v) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                push_indent(out, indent + 2);
                write_value(out, item, indent + 2);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            push_indent(out, indent);
            out.push(']');
        }
        other => write_inline(out, other),
    }
}

fn write_inline(out: &mut String, v: &Value) {
    match v {
        Value::Object(map) => {
            out.push('{');
            for (i, (k, val)) in ordered(map).into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_inline(out, &Value::String(k.clone()));
                out.push_str(": ");
                write_inline(out, val);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_inline(out, item);
            }
            out.push(']');
        }
        scalar => {
            let _ = write!(out, "{scalar}");
        }
    }
}

fn push_indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

// Note: the samples are built from DDL, so these tests need feature `ddl` (on by default).
#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Snapshot {
        crate::ddl::from_sql(&[(
            "t.sql".to_owned(),
            "CREATE TYPE mood AS ENUM ('a', 'b');
             CREATE TABLE harbors (id serial PRIMARY KEY, name text NOT NULL, m mood);
             CREATE TABLE ships (id int PRIMARY KEY, harbor int REFERENCES harbors);
             CREATE FUNCTION f(a int) RETURNS text LANGUAGE sql AS 'SELECT 1';"
                .to_owned(),
        )])
        .0
    }

    #[test]
    fn round_trip_is_lossless_and_stable() {
        let s = sample();
        let text = s.to_json();
        let back = Snapshot::from_json(&text).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.to_json(), text);
    }

    #[test]
    fn one_column_per_line() {
        let text = sample().to_json();
        assert!(text.contains(
            "\n        {\"name\": \"name\", \"type\": {\"schema\": \"pg_catalog\", \"name\": \"text\", \"oid\": 25}, \"not_null\": true},\n"
        ), "{text}");
        assert!(text.starts_with("{\n  \"format_version\": 1,\n"));
        assert!(text.contains("\"search_path\": [\"public\"]"));
    }

    #[test]
    fn a_snapshot_without_the_later_lists_still_loads() {
        let old = r#"{"format_version": 1, "search_path": ["public"], "schemas": ["public"],
            "relations": [], "types": [], "functions": [],
            "extensions": [{"name": "citext", "schema": "public", "version": "1.6"}]}"#;
        let s = Snapshot::from_json(old).expect("an older file loads");
        assert!(s.base_types.is_empty() && s.operators.is_empty() && s.casts.is_empty());
        assert!(
            !s.to_json().contains("base_types"),
            "empty lists are not written"
        );
    }

    #[test]
    fn newer_version_is_refused_with_advice() {
        let e = Snapshot::from_json("{\"format_version\": 7, \"whatever\": 1}").unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, FileError::Version { found: 7, .. }));
        assert!(
            msg.contains("format_version 7") && msg.contains("newer qail"),
            "{msg}"
        );
        assert!(msg.contains("upgrade qail or re-pull"), "{msg}");
    }

    #[test]
    fn broken_file_reports_line_and_column() {
        let mut text = sample().to_json();
        text = text.replacen("\"not_null\": true}", "\"not_null\": tru}", 1);
        let e = Snapshot::from_json(&text).unwrap_err();
        let FileError::Syntax { line, column, .. } = &e else {
            panic!("{e:?}")
        };
        let bad = text.lines().position(|l| l.contains("tru}")).unwrap() + 1;
        assert_eq!(*line, bad);
        assert!(*column > 1);
        assert!(e.to_string().contains(&format!(":{line}:{column}:")), "{e}");
    }

    #[test]
    fn wrong_shape_reports_line_and_column() {
        let text = sample()
            .to_json()
            .replacen("\"not_null\": true", "\"not_null\": \"yes\"", 1);
        let e = Snapshot::from_json(&text).unwrap_err();
        assert!(
            matches!(e, FileError::Syntax { line, .. } if line > 1),
            "{e}"
        );
    }
}
