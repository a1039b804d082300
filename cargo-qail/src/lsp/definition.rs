//! Go to definition: a relation or column → the DDL file and line the snapshot records
//! ([`qail_schema::snapshot::Source`], when it was built from SQL files), else its entry in the
//! snapshot file.

use std::path::{Path, PathBuf};

use super::resolve::Target;
use qail_schema::Snapshot;

/// The file and 0-based line where `target` is defined.
pub(crate) fn locate(
    snap: &Snapshot,
    snapshot_path: &Path,
    target: &Target<'_>,
) -> Option<(PathBuf, u32)> {
    let (rel, column) = match target {
        Target::Relation(rel) => (*rel, None),
        Target::Column(rel, c, _) => (*rel, Some(c.name.as_str())),
    };
    let source = column
        .and_then(|c| snap.source(&rel.schema, &rel.name, Some(c)))
        .or_else(|| snap.source(&rel.schema, &rel.name, None));
    if let Some(s) = source {
        let file = Path::new(&s.file);
        let path = if file.is_absolute() {
            file.to_owned()
        } else {
            snapshot_path.parent().unwrap_or(Path::new("")).join(file)
        };
        if path.is_file() {
            return Some((path, u32::try_from(s.line.saturating_sub(1)).unwrap_or(0)));
        }
    }
    let text = std::fs::read_to_string(snapshot_path).ok()?;
    let line = json_line(&text, &rel.schema, &rel.name, column)?;
    Some((snapshot_path.to_owned(), line))
}

/// The 0-based line of a relation's entry in the snapshot file (`"name": "harbors",` after
/// its `"schema"` line), or of one of its columns' lines.
fn json_line(text: &str, schema: &str, table: &str, column: Option<&str>) -> Option<u32> {
    let schema_line = format!("\"schema\": {},", json_string(schema));
    let name_line = format!("\"name\": {},", json_string(table));
    let lines: Vec<&str> = text.lines().collect();
    let relations = lines
        .iter()
        .position(|l| l.trim_start().starts_with("\"relations\""))?;
    let at = (relations..lines.len().saturating_sub(1))
        .find(|&i| lines[i].trim() == schema_line && lines[i + 1].trim() == name_line)?
        + 1;
    let found = match column {
        None => at,
        Some(c) => {
            let col = format!("{{\"name\": {},", json_string(c));
            (at..lines.len())
                .take_while(|&i| i == at || !lines[i].trim_start().starts_with("\"schema\""))
                .find(|&i| lines[i].trim_start().starts_with(&col))
                .unwrap_or(at)
        }
    };
    u32::try_from(found).ok()
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_entries_are_found_by_line() {
        let (snap, _) = qail_schema::ddl::from_sql(&[(
            "t.sql".to_owned(),
            "CREATE TABLE a (id int); CREATE TABLE harbors (id int, name text);".to_owned(),
        )]);
        let mut plain = snap.clone();
        plain.sources.clear();
        let text = plain.to_json();
        let lines: Vec<&str> = text.lines().collect();
        let l = json_line(&text, "public", "harbors", None).unwrap() as usize;
        assert_eq!(lines[l].trim(), "\"name\": \"harbors\",");
        let l = json_line(&text, "public", "harbors", Some("name")).unwrap() as usize;
        assert!(
            lines[l].trim().starts_with("{\"name\": \"name\""),
            "{}",
            lines[l]
        );
    }
}
