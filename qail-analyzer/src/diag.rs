//! Diagnostics: byte ranges from sqlparser spans, the caret rendering, "did you mean".

use std::ops::Range;

use sqlparser::tokenizer::{Location, Span};

/// An analyzer error: what is wrong, where in the SQL (byte range), and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// What is wrong, e.g. `column "nme" does not exist in table "harbors"`.
    pub message: String,
    /// The offending bytes of the SQL text (may be empty at the end of input).
    pub range: Range<usize>,
    /// The fix, printed under the caret line: `did you mean "name"?`, `add a cast: $1::int4`.
    pub hint: Option<String>,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "; {hint}")?;
        }
        Ok(())
    }
}

/// The message and hint for something (`uuidv7()`, `function random(integer, integer)`, `an
/// underscore in a numeric literal`) that PostgreSQL has only in `have`, used in a crate whose
/// queries must run on every version of `target`: `uuidv7() exists from PostgreSQL 18; this
/// crate targets 16 to 18`.
pub(crate) fn version_gap(
    what: &str,
    have: qail_catalog::Versions,
    target: qail_catalog::Versions,
) -> (String, String) {
    let targets = if target.first() == target.last() {
        format!("this crate targets PostgreSQL {target}")
    } else {
        format!("this crate targets {target}")
    };
    let lacking = target.without(have);
    let (exists, hint) = match (have.first(), have.last(), lacking.first()) {
        (Some(first), Some(last), Some(gap))
            if have.is_span() && gap < first && last >= target.last().unwrap_or(last) =>
        {
            (
                format!("exists from PostgreSQL {first}"),
                format!(
                    "raise the oldest version of \"postgres\" in qail.schema.json to \"{first}..\" if every server runs {first} or newer, or write the query without it"
                ),
            )
        }
        (Some(_), Some(last), Some(gap)) if have.is_span() && gap > last => (
            format!("exists up to PostgreSQL {last}"),
            format!(
                "PostgreSQL {gap} removed it: write the query without it, or lower the newest version of \"postgres\" in qail.schema.json"
            ),
        ),
        (Some(_), Some(_), _) => (
            format!("exists in PostgreSQL {have} only"),
            "write the query without it, or narrow \"postgres\" in qail.schema.json".to_string(),
        ),
        _ => (
            "exists in no supported PostgreSQL version".to_string(),
            "write the query without it".to_string(),
        ),
    };
    (format!("{what} {exists}; {targets}"), hint)
}

/// Renders a diagnostic the way DESIGN.md shows it:
///
/// ```text
/// error: column "nme" does not exist in table "harbors"
///   |  SELECT id, nme FROM harbors WHERE id = $1
///   |             ^^^ did you mean "name"?
/// ```
///
/// Only the SQL line holding the start of the range is printed; a range that spans lines is
/// underlined to the end of that line.
pub fn render(sql: &str, d: &Diagnostic) -> String {
    let start = floor_char_boundary(sql, d.range.start.min(sql.len()));
    let line_start = sql[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = sql[start..].find('\n').map_or(sql.len(), |i| start + i);
    let line = sql[line_start..line_end].trim_end_matches('\r');
    // Note: a range may start in the carriage returns trimmed off the line's end.
    let line_end = (line_start + line.len()).max(start);
    let end = floor_char_boundary(sql, d.range.end.clamp(start, line_end));
    let pad = sql[line_start..start]
        .chars()
        .map(|c| if c == '\t' { '\t' } else { ' ' });
    let width = sql[start..end].chars().count().max(1);
    let mut out = format!("error: {}\n  |  {line}\n  |  ", d.message);
    out.extend(pad);
    out.extend(std::iter::repeat_n('^', width));
    if let Some(hint) = &d.hint {
        out.push(' ');
        out.push_str(hint);
    }
    out
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Maps sqlparser's 1-based line/column locations (columns count characters) to byte offsets.
pub(crate) struct LineIndex<'a> {
    sql: &'a str,
    starts: Vec<usize>,
    /// Every character is one byte: a column is a byte count, no scan needed.
    ascii: bool,
}

impl<'a> LineIndex<'a> {
    pub(crate) fn new(sql: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(sql.match_indices('\n').map(|(i, _)| i + 1));
        Self {
            sql,
            starts,
            ascii: sql.is_ascii(),
        }
    }

    /// Byte offset of a location; `None` for the empty location sqlparser uses for "unknown".
    pub(crate) fn offset(&self, loc: Location) -> Option<usize> {
        let line = usize::try_from(loc.line).ok()?.checked_sub(1)?;
        let col = usize::try_from(loc.column).ok()?.checked_sub(1)?;
        let start = *self.starts.get(line)?;
        let text = &self.sql[start..];
        let off = if self.ascii {
            col.min(text.len())
        } else {
            text.char_indices().nth(col).map_or(text.len(), |(i, _)| i)
        };
        Some(start + off)
    }

    /// Byte range of a span, or `None` when sqlparser did not record one.
    pub(crate) fn range(&self, span: Span) -> Option<Range<usize>> {
        let start = self.offset(span.start)?;
        let end = self.offset(span.end).unwrap_or(start).max(start);
        Some(start..end)
    }
}

/// Levenshtein distance over characters, for "did you mean".
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(cur).min(row[j])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// The closest candidate to `name`, if it is close enough to be a plausible typo.
pub(crate) fn closest<'c>(
    name: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let lower = name.to_lowercase();
    let limit = (name.chars().count() / 3).max(1) + 1;
    candidates
        .into_iter()
        .map(|c| (distance(&lower, &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// `did you mean "x"?` for the closest candidate.
pub(crate) fn did_you_mean<'c>(
    name: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<String> {
    closest(name, candidates).map(|c| format!("did you mean \"{c}\"?"))
}

/// Turns sqlparser's "… at Line: 1, Column: 8" into a diagnostic pointing there.
pub(crate) fn syntax_error(sql: &str, message: &str) -> Diagnostic {
    let (text, loc) = match message.rfind(" at Line: ") {
        Some(at) => (
            &message[..at],
            parse_location(&message[at + " at Line: ".len()..]),
        ),
        None => (message, None),
    };
    let index = LineIndex::new(sql);
    let mut start = loc.and_then(|l| index.offset(l)).unwrap_or(sql.len());
    // Note: sqlparser sometimes reports the location after the offending token; point at
    // the token it names when it is not at the reported place.
    if let Some(found) = text
        .rsplit_once("found: ")
        .map(|(_, f)| f.trim())
        .filter(|f| !f.is_empty() && *f != "EOF")
    {
        let here = sql[start..]
            .get(..found.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(found));
        if !here && let Some(i) = sql[..start].to_lowercase().rfind(&found.to_lowercase()) {
            start = i;
        }
    }
    let end = sql[start..]
        .find(|c: char| c.is_whitespace() || c == ',' || c == ')' || c == ';')
        .map_or(sql.len(), |i| start + i.max(1).min(sql.len() - start));
    let text = text.strip_prefix("sql parser error: ").unwrap_or(text);
    Diagnostic {
        message: format!("syntax error: {text}"),
        range: start..end.max(start),
        hint: Some("fix the SQL syntax here".into()),
    }
}

fn parse_location(s: &str) -> Option<Location> {
    let (line, rest) = s.split_once(", Column: ")?;
    let col: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some(Location {
        line: line.trim().parse().ok()?,
        column: col.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_in_trailing_carriage_returns_renders() {
        let sql = "\r\r(\r";
        let d = Diagnostic {
            message: "syntax error at end of input".to_owned(),
            range: 4..4,
            hint: None,
        };
        assert_eq!(
            render(sql, &d),
            "error: syntax error at end of input\n  |  \r\r(\n  |      ^"
        );
    }

    #[test]
    fn renders_caret_under_range() {
        let sql = "SELECT id, nme FROM harbors WHERE id = $1";
        let d = Diagnostic {
            message: "column \"nme\" does not exist in table \"harbors\"".into(),
            range: 11..14,
            hint: Some("did you mean \"name\"?".into()),
        };
        assert_eq!(
            render(sql, &d),
            "error: column \"nme\" does not exist in table \"harbors\"\n  |  SELECT id, nme FROM harbors WHERE id = $1\n  |             ^^^ did you mean \"name\"?"
        );
    }

    #[test]
    fn renders_only_the_offending_line() {
        let sql = "SELECT id\nFROM harbours\nWHERE true";
        let d = Diagnostic {
            message: "m".into(),
            range: 15..23,
            hint: None,
        };
        assert_eq!(
            render(sql, &d),
            "error: m\n  |  FROM harbours\n  |       ^^^^^^^^"
        );
    }

    #[test]
    fn line_index_maps_multibyte_columns() {
        let sql = "SELECT 'é', x\nFROM t";
        let idx = LineIndex::new(sql);
        assert_eq!(
            idx.offset(Location {
                line: 1,
                column: 13
            }),
            Some(13)
        );
        assert_eq!(idx.offset(Location { line: 2, column: 6 }), Some(20));
        assert_eq!(idx.offset(Location { line: 0, column: 0 }), None);
    }

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(closest("nme", ["id", "name", "country"]), Some("name"));
        assert_eq!(
            closest("harbours", ["harbors", "operators"]),
            Some("harbors")
        );
        assert_eq!(closest("zzz", ["id", "name"]), None);
    }

    #[test]
    fn syntax_error_points_at_location() {
        let d = syntax_error(
            "SELECT FROM WHERE",
            "sql parser error: Expected: an expression, found: WHERE at Line: 1, Column: 13",
        );
        assert_eq!(d.range, 12..17);
        assert_eq!(
            d.message,
            "syntax error: Expected: an expression, found: WHERE"
        );
        let sql = "SELECT id,\n  FROM harbors";
        let d = syntax_error(
            sql,
            "Expected an expression, found: FROM at Line: 2, Column: 8",
        );
        assert_eq!(&sql[d.range], "FROM");
    }
}
