//! An open document and its SQL regions: each statement of a `.sql` file, each `qail!`
//! literal of a `.rs` file, with the map from the SQL's bytes to the document's and the
//! analysis against the snapshot.

use std::ops::Range;

use super::rust_source;
use super::text::Lines;
use qail_analyzer::capture::{self, CaptureError, CapturedSql, ChoiceSpec};
use qail_analyzer::{Analysis, Diagnostic};
use qail_schema::Snapshot;

/// What kind of file a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    /// A `.sql` file: statements separated by `;`.
    Sql,
    /// A `.rs` file: SQL in `qail!` string literals.
    Rust,
}

/// One piece of SQL in a document.
pub(crate) struct Region {
    /// The SQL as written (a literal's value, captures and all).
    pub(crate) sql: String,
    /// `map[i]`: the document offset of byte `i` of `sql`; one more entry for its end.
    pub(crate) map: Vec<usize>,
    /// Captures rewritten to `$n` (nothing rewritten in a `.sql` file).
    pub(crate) rewritten: Result<CapturedSql, CaptureError>,
    /// For a `qail!` literal, the positional arguments and sort choices after it, to scan it
    /// again with the snapshot (which a bulk insert's `VALUES {rows}` needs).
    invocation: Option<(usize, Vec<ChoiceSpec>)>,
    /// The analyzer's answer on the rewritten SQL (ranges into the rewritten SQL); `None`
    /// when the captures could not be read.
    pub(crate) analysis: Option<Result<Analysis, Vec<Diagnostic>>>,
}

impl Region {
    fn new(sql: String, map: Vec<usize>, rewritten: Result<CapturedSql, CaptureError>) -> Region {
        Region {
            sql,
            map,
            rewritten,
            invocation: None,
            analysis: None,
        }
    }

    /// A `qail!` literal's region, scanned by [`capture::rewrite`] as the macro scans it: each
    /// sort choice's slot filled with its first alternative, every optional clause included.
    fn embedded(e: rust_source::Embedded, snapshot: Option<&Snapshot>) -> Region {
        let rewritten = scan(&e.sql, e.positional, &e.choices, snapshot);
        Region {
            invocation: Some((e.positional, e.choices)),
            ..Region::new(e.sql, e.map, rewritten)
        }
    }

    /// The document range of a byte range of `sql`.
    pub(crate) fn doc_range(&self, range: &Range<usize>) -> Range<usize> {
        let at = |i: usize| self.map[i.min(self.map.len() - 1)];
        let start = at(range.start);
        // Note: an escape's bytes all map to its backslash; the range ends after the escape.
        let end = if range.end > range.start {
            let last = at(range.end - 1);
            let next = at(range.end);
            if next > last { next } else { last + 1 }
        } else {
            start
        };
        start..end.max(start)
    }

    /// The byte of `sql` at document offset `offset`.
    pub(crate) fn offset(&self, offset: usize) -> usize {
        self.map
            .partition_point(|&m| m < offset)
            .min(self.sql.len())
    }

    /// Whether document offset `offset` is in the region (its end included, for typing at
    /// the end).
    fn contains(&self, offset: usize) -> bool {
        self.map[0] <= offset && offset <= self.map[self.map.len() - 1]
    }

    /// The rewritten SQL and its analysis, when the analyzer accepted it.
    pub(crate) fn analyzed(&self) -> Option<(&CapturedSql, &Analysis)> {
        match (&self.rewritten, &self.analysis) {
            (Ok(r), Some(Ok(a))) => Some((r, a)),
            _ => None,
        }
    }
}

/// Scans a `qail!` literal's SQL; a bulk insert's columns come from `snapshot`.
fn scan(
    sql: &str,
    positional: usize,
    choices: &[ChoiceSpec],
    snapshot: Option<&Snapshot>,
) -> Result<CapturedSql, CaptureError> {
    let selected = vec![0; choices.len()];
    match snapshot {
        Some(snapshot) => capture::rewrite(sql, positional, choices, &selected, &|before| {
            capture::bulk_columns(before, snapshot)
        }),
        None => capture::rewrite(sql, positional, choices, &selected, &capture::no_bulk),
    }
}

/// An open document.
pub(crate) struct Document {
    pub(crate) kind: FileKind,
    pub(crate) text: String,
    pub(crate) lines: Lines,
    pub(crate) regions: Vec<Region>,
}

impl Document {
    /// Reads the regions of `text`; they are analyzed by [`Document::analyze`].
    pub(crate) fn new(kind: FileKind, text: String) -> Document {
        let regions = match kind {
            FileKind::Sql => crate::report::split(&text)
                .into_iter()
                .map(|piece| sql_region(&text, piece.range))
                .collect(),
            FileKind::Rust => rust_source::embedded(&text)
                .into_iter()
                .map(|e| Region::embedded(e, None))
                .collect(),
        };
        Document {
            kind,
            lines: Lines::new(&text),
            text,
            regions,
        }
    }

    /// Runs the analyzer on every region.
    pub(crate) fn analyze(&mut self, snapshot: &Snapshot) {
        for r in &mut self.regions {
            if let Some((positional, choices)) = &r.invocation {
                r.rewritten = scan(&r.sql, *positional, choices, Some(snapshot));
            }
            r.analysis = r
                .rewritten
                .as_ref()
                .ok()
                .map(|rw| qail_analyzer::analyze(&rw.sql, snapshot));
        }
    }

    /// The region at document offset `offset`. In a `.sql` file, text after the last
    /// statement's end and before the next `;` belongs to that statement (it is being typed),
    /// and elsewhere an empty region starts at `offset`.
    pub(crate) fn region_at(&self, offset: usize) -> Option<RegionAt<'_>> {
        if let Some(r) = self.regions.iter().find(|r| r.contains(offset)) {
            return Some(RegionAt::Analyzed(r));
        }
        if self.kind == FileKind::Rust {
            return None;
        }
        let before = self
            .regions
            .iter()
            .rev()
            .find(|r| r.map[0] <= offset)
            .map(|r| r.map[0])
            .filter(|&start| !self.text[start..offset].contains(';'));
        let start = before.unwrap_or_else(|| self.text[..offset].rfind(';').map_or(0, |i| i + 1));
        let end = self.text[offset..]
            .find(';')
            .map_or(self.text.len(), |i| offset + i);
        Some(RegionAt::Typed(Box::new(sql_region(
            &self.text,
            start..end,
        ))))
    }
}

/// A region found at an offset: one of the document's, or a piece of a `.sql` file being
/// typed (not analyzed).
pub(crate) enum RegionAt<'d> {
    Analyzed(&'d Region),
    Typed(Box<Region>),
}

impl std::ops::Deref for RegionAt<'_> {
    type Target = Region;

    fn deref(&self) -> &Region {
        match self {
            RegionAt::Analyzed(r) => r,
            RegionAt::Typed(r) => r,
        }
    }
}

fn sql_region(text: &str, range: Range<usize>) -> Region {
    let sql = text[range.clone()].to_owned();
    let rewritten = Ok(CapturedSql::unchanged(&sql));
    Region::new(sql, (range.start..=range.end).collect(), rewritten)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_regions_cover_the_statement_being_typed() {
        let text = "SELECT 1;\nSELECT o. FROM harbors o";
        let doc = Document::new(FileKind::Sql, text.to_owned());
        let dot = text.find("o.").unwrap() + 2;
        let r = doc.region_at(dot).unwrap();
        assert_eq!(r.sql, "SELECT o. FROM harbors o");
        assert_eq!(r.offset(dot), 9);
        let text = "SELECT 1;\n  SELECT ";
        let doc = Document::new(FileKind::Sql, text.to_owned());
        let r = doc.region_at(text.len()).unwrap();
        assert_eq!(r.sql, "SELECT ");
        let text = "SELECT 1;  ";
        let doc = Document::new(FileKind::Sql, text.to_owned());
        assert_eq!(doc.region_at(text.len()).unwrap().sql, "  ");
    }

    #[test]
    fn rust_ranges_cover_escapes() {
        let text = "qail!(\"SELECT \\\"nme\\\" FROM t\")";
        let doc = Document::new(FileKind::Rust, text.to_owned());
        let r = &doc.regions[0];
        let at = r.sql.find("\"nme\"").unwrap();
        let range = r.doc_range(&(at..at + 5));
        assert_eq!(&text[range], "\\\"nme\\\"");
    }
}
