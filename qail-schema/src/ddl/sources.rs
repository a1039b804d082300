//! Where each relation and column of an import was defined: file and line, recorded as the
//! statements are applied ([`crate::snapshot::Source`]).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::snapshot::{Snapshot, Source};

/// The sources recorded so far: a relation's first appearance, then each column's.
#[derive(Default)]
pub(crate) struct Recorder {
    /// schema → table → how many columns it had when last seen.
    known: HashMap<String, HashMap<String, usize>>,
    /// `(schema, table, column)` of the columns that have a source.
    columns: HashSet<(String, String, String)>,
    sources: Vec<Source>,
    /// The text (address and length) whose line starts are in `line_starts`.
    lines_of: (usize, usize),
    /// Byte offset of each line of the current file.
    line_starts: Vec<usize>,
}

impl Recorder {
    /// Records the relations and columns that `snap` has and no earlier statement gave: they
    /// were defined by the statement at `line` of `file` (whose text is `text`).
    pub(crate) fn record(&mut self, snap: &Snapshot, file: &str, text: &str, line: u64) {
        let key = (text.as_ptr() as usize, text.len());
        if self.lines_of != key || self.line_starts.is_empty() {
            self.lines_of = key;
            self.line_starts = std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect();
        }
        for rel in &snap.relations {
            let seen = self
                .known
                .get(rel.schema.as_str())
                .and_then(|t| t.get(rel.name.as_str()));
            match seen {
                Some(&n) if n == rel.columns.len() => continue,
                Some(_) => {}
                None => {
                    self.sources.push(Source {
                        schema: rel.schema.clone(),
                        table: rel.name.clone(),
                        column: None,
                        file: file.to_owned(),
                        line,
                    });
                }
            }
            for col in &rel.columns {
                let id = (rel.schema.clone(), rel.name.clone(), col.name.clone());
                if self.columns.insert(id) {
                    self.sources.push(Source {
                        schema: rel.schema.clone(),
                        table: rel.name.clone(),
                        column: Some(col.name.clone()),
                        file: file.to_owned(),
                        line: column_line(text, &self.line_starts, line, &col.name),
                    });
                }
            }
            self.known
                .entry(rel.schema.clone())
                .or_default()
                .insert(rel.name.clone(), rel.columns.len());
        }
    }

    /// The sources of what is still in `snap`, sorted.
    pub(crate) fn finish(self, snap: &Snapshot) -> Vec<Source> {
        let exists: HashSet<(&str, &str, Option<&str>)> = snap
            .relations
            .iter()
            .flat_map(|r| {
                let columns = r.columns.iter().map(|c| Some(c.name.as_str()));
                std::iter::once(None)
                    .chain(columns)
                    .map(|c| (r.schema.as_str(), r.name.as_str(), c))
            })
            .collect();
        let mut sources: Vec<Source> = self
            .sources
            .into_iter()
            .filter(|s| {
                exists.contains(&(s.schema.as_str(), s.table.as_str(), s.column.as_deref()))
            })
            .collect();
        sources.sort_by(|a, b| {
            (&a.schema, &a.table, &a.column).cmp(&(&b.schema, &b.table, &b.column))
        });
        sources
            .dedup_by(|a, b| (&a.schema, &a.table, &a.column) == (&b.schema, &b.table, &b.column));
        sources
    }
}

/// The first line from `from` (1-based) to the end of the statement (the first line holding a
/// `;`) that names `column` as a word; `from` when none does. `starts` holds the byte offset of
/// each line of `text`.
fn column_line(text: &str, starts: &[usize], from: u64, column: &str) -> u64 {
    let index = usize::try_from(from.saturating_sub(1)).unwrap_or(usize::MAX);
    let Some(&start) = starts.get(index) else {
        return from;
    };
    let column = column.to_lowercase();
    for (line, n) in text[start..].lines().zip(from..) {
        let lower = line.to_lowercase();
        let named = lower.match_indices(&column).any(|(i, m)| {
            let word = |c: char| c.is_alphanumeric() || c == '_';
            !lower[..i].ends_with(word) && !lower[i + m.len()..].starts_with(word)
        });
        if named {
            return n;
        }
        if line.contains(';') {
            break;
        }
    }
    from
}

/// Rewrites the sources' file names relative to `dir` (the snapshot file's directory) where
/// the file is below it, so that the snapshot can be committed and read from any checkout.
pub fn relative_to(snap: &mut Snapshot, dir: &Path) {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_owned());
    let mut done: HashMap<String, String> = HashMap::new();
    for s in &mut snap.sources {
        if let Some(file) = done.get(&s.file) {
            file.clone_into(&mut s.file);
            continue;
        }
        let relative = Path::new(&s.file)
            .canonicalize()
            .ok()
            .and_then(|full| Some(full.strip_prefix(&dir).ok()?.to_string_lossy().into_owned()))
            .unwrap_or_else(|| s.file.clone());
        done.insert(std::mem::replace(&mut s.file, relative.clone()), relative);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn relations_and_columns_know_their_lines() {
        let text = "CREATE TABLE harbors (\n  id serial PRIMARY KEY,\n  name text NOT NULL\n);\n\nALTER TABLE harbors ADD COLUMN country text;\nCREATE TABLE t (a int);\nDROP TABLE t;\n";
        let (snap, _) = crate::ddl::from_sql(&[("m/01.sql".to_owned(), text.to_owned())]);
        let at = |t: &str, c: Option<&str>| {
            let s = snap.source("public", t, c).expect("recorded");
            (s.file.as_str(), s.line)
        };
        assert_eq!(at("harbors", None), ("m/01.sql", 1));
        assert_eq!(at("harbors", Some("id")), ("m/01.sql", 2));
        assert_eq!(at("harbors", Some("name")), ("m/01.sql", 3));
        assert_eq!(at("harbors", Some("country")), ("m/01.sql", 6));
        assert!(snap.source("public", "t", None).is_none(), "dropped");
    }
}
