//! `{name}` captures in the SQL of a `qail!` string: rewritten to `$n` placeholders numbered
//! after the positional arguments, with a map between offsets of the SQL as written and of the
//! rewritten SQL.
//!
//! This is the one scanner of captures: the `qail!` macro and the language server (feature
//! `lsp`) both call [`rewrite`], so they agree on what is a capture and where it is. Quoted
//! strings, quoted identifiers, dollar-quoted strings and comments hold no captures.
//!
//! ```
//! let r = qail_schema::capture::rewrite("SELECT * FROM t WHERE a = {x} AND b = $1", 1).unwrap();
//! assert_eq!(r.sql, "SELECT * FROM t WHERE a = $2 AND b = $1");
//! assert_eq!(r.captures[0].name, "x");
//! assert_eq!(r.captures[0].number, 2);
//! assert_eq!(r.max_positional, 1);
//! ```

use std::ops::Range;

/// A captured variable: its name, its `$n` number (1-based) and where it is first written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// The variable's name, as written between the braces (trimmed).
    pub name: String,
    /// The `$n` it becomes.
    pub number: usize,
    /// Byte range of its first `{name}` in the SQL as written.
    pub range: Range<usize>,
}

/// A capture that cannot be read: what is wrong and where (byte range of the SQL as written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureError {
    /// What is wrong and what to write instead.
    pub message: String,
    /// The offending bytes.
    pub range: Range<usize>,
}

impl std::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The SQL with captures rewritten to `$n`, and how offsets map between the two texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewritten {
    /// The SQL sent to the analyzer and the server.
    pub sql: String,
    /// Captured variables, in `$n` order, each name once.
    pub captures: Vec<Capture>,
    /// The highest positional `$n` written in the SQL (0 when there is none).
    pub max_positional: usize,
    /// `(rewritten range, original range)` of each replaced capture, in order.
    edits: Vec<(Range<usize>, Range<usize>)>,
}

impl Rewritten {
    /// SQL that holds no captures (a `.sql` file): the rewritten SQL is the SQL as written.
    pub fn unchanged(sql: &str) -> Rewritten {
        Rewritten {
            sql: sql.to_owned(),
            captures: Vec::new(),
            max_positional: 0,
            edits: Vec::new(),
        }
    }

    /// Maps a byte offset in the rewritten SQL back to the SQL as written; an offset inside a
    /// rewritten `$n` maps to the start of its `{name}`.
    pub fn original_offset(&self, offset: usize) -> usize {
        let mut shift: isize = 0;
        for (new, old) in &self.edits {
            if offset < new.start {
                break;
            }
            if offset < new.end {
                return old.start;
            }
            shift = signed(old.end) - signed(new.end);
        }
        usize::try_from(signed(offset) + shift).unwrap_or(0)
    }

    /// Maps a byte range in the rewritten SQL back to the SQL as written; a range touching a
    /// rewritten `$n` covers the whole `{name}`.
    pub fn original_range(&self, range: &Range<usize>) -> Range<usize> {
        let start = self.original_offset(range.start);
        let end = self
            .edits
            .iter()
            .find(|(new, _)| range.end > new.start && range.end <= new.end)
            .map_or_else(|| self.original_offset(range.end), |(_, old)| old.end);
        start..end.max(start)
    }

    /// Maps a byte offset of the SQL as written to the rewritten SQL; an offset inside a
    /// `{name}` maps to the start of its `$n`.
    pub fn rewritten_offset(&self, offset: usize) -> usize {
        let mut shift: isize = 0;
        for (new, old) in &self.edits {
            if offset < old.start {
                break;
            }
            if offset < old.end {
                return new.start;
            }
            shift = signed(new.end) - signed(old.end);
        }
        usize::try_from(signed(offset) + shift).unwrap_or(0)
    }

    /// The parameter number written at `offset` of the SQL as written: a `{name}` capture's
    /// number, or a positional `$n`.
    pub fn param_at(&self, original: &str, offset: usize) -> Option<usize> {
        if let Some((new, _)) = self
            .edits
            .iter()
            .find(|(_, old)| old.start <= offset && offset < old.end)
        {
            return self.sql[new.start + 1..new.end].parse().ok();
        }
        let bytes = original.as_bytes();
        let mut start = offset.min(bytes.len());
        while start > 0 && bytes[start - 1].is_ascii_digit() {
            start -= 1;
        }
        if start < bytes.len() && bytes[start] == b'$' {
            start += 1;
        } else if start > 0 && bytes[start - 1] == b'$' {
            // on the digits
        } else {
            return None;
        }
        let digits = original[start..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        original[start..start + digits].parse().ok()
    }
}

fn signed(n: usize) -> isize {
    isize::try_from(n).unwrap_or(isize::MAX)
}

/// Rewrites `{name}` captures of `sql` to `$n` numbered after the `positional` arguments (a
/// repeated name reuses its number).
///
/// The name must be a plain identifier (letters, digits, `_`); the macro also rejects Rust
/// keywords, which only it knows how to check.
pub fn rewrite(sql: &str, positional: usize) -> Result<Rewritten, CaptureError> {
    let bytes = sql.as_bytes();
    let mut out = Rewritten {
        sql: String::with_capacity(sql.len()),
        captures: Vec::new(),
        max_positional: 0,
        edits: Vec::new(),
    };
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\'' | b'"' => i = skip_quoted(bytes, i, bytes[i]),
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                i = sql[i..].find('\n').map_or(sql.len(), |n| i + n);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = sql[i + 2..].find("*/").map_or(sql.len(), |n| i + 2 + n + 2);
            }
            b'$' => {
                let digits = sql[i + 1..].bytes().take_while(u8::is_ascii_digit).count();
                match sql[i + 1..i + 1 + digits].parse::<usize>() {
                    Ok(n) => {
                        out.max_positional = out.max_positional.max(n);
                        i += 1 + digits;
                    }
                    Err(_) => i = skip_dollar_quoted(sql, i),
                }
            }
            b'{' => {
                let (name, end) = parse_capture(sql, i)?;
                out.sql.push_str(&sql[copied..i]);
                out.push_capture(name, i..end, positional);
                i = end;
                copied = i;
            }
            _ => i += 1,
        }
    }
    out.sql.push_str(&sql[copied..]);
    Ok(out)
}

/// The name of the `{name}` starting at `start`, and the index after the `}`.
fn parse_capture(sql: &str, start: usize) -> Result<(&str, usize), CaptureError> {
    let close = sql[start..]
        .find('}')
        .map(|n| start + n)
        .ok_or_else(|| CaptureError {
            message: format!(
                "unclosed `{{` at byte {start} of the SQL: write `{{name}}` to capture a variable"
            ),
            range: start..sql.len(),
        })?;
    let name = sql[start + 1..close].trim();
    let plain = name.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && name != "_";
    if !plain {
        return Err(not_a_capture(name, start..close + 1));
    }
    Ok((name, close + 1))
}

/// The error for a `{…}` whose content is not a plain identifier.
pub fn not_a_capture(name: &str, range: Range<usize>) -> CaptureError {
    CaptureError {
        message: format!(
            "`{{{name}}}` in the SQL is not a variable capture: write `{{name}}` with a plain identifier, or pass the value as a `$n` argument"
        ),
        range,
    }
}

impl Rewritten {
    /// Appends the `$n` of a capture and records the edit.
    fn push_capture(&mut self, name: &str, original: Range<usize>, positional: usize) {
        let number = match self.captures.iter().find(|c| c.name == name) {
            Some(c) => c.number,
            None => {
                let number = positional + self.captures.len() + 1;
                self.captures.push(Capture {
                    name: name.to_owned(),
                    number,
                    range: original.clone(),
                });
                number
            }
        };
        let start = self.sql.len();
        self.sql.push('$');
        self.sql.push_str(&number.to_string());
        self.edits.push((start..self.sql.len(), original));
    }
}

/// Skips a `'…'` or `"…"` token (a doubled quote escapes itself); returns the index after it.
fn skip_quoted(bytes: &[u8], start: usize, quote: u8) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        if bytes[i] == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    bytes.len()
}

/// Skips `$tag$…$tag$` if one starts at `start`; a `$1` placeholder is stepped over.
fn skip_dollar_quoted(sql: &str, start: usize) -> usize {
    let rest = &sql[start + 1..];
    let tag_len = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let tag = &rest[..tag_len];
    if !rest[tag_len..].starts_with('$') || tag.starts_with(|c: char| c.is_ascii_digit()) {
        return start + 1;
    }
    let delimiter = format!("${tag}$");
    let body = start + delimiter.len();
    sql[body..]
        .find(&delimiter)
        .map_or(sql.len(), |n| body + n + delimiter.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(sql: &str, positional: usize) -> Rewritten {
        rewrite(sql, positional).unwrap()
    }

    #[test]
    fn captures_become_numbered_parameters() {
        let r = rw(
            "SELECT * FROM t WHERE a = {x} AND b = $1 AND c = {y} OR d = {x}",
            1,
        );
        assert_eq!(
            r.sql,
            "SELECT * FROM t WHERE a = $2 AND b = $1 AND c = $3 OR d = $2"
        );
        let names: Vec<_> = r.captures.iter().map(|c| (&*c.name, c.number)).collect();
        assert_eq!(names, [("x", 2), ("y", 3)]);
        assert_eq!(r.max_positional, 1);
        assert_eq!(r.captures[1].range, 49..52);
    }

    #[test]
    fn quoted_text_and_comments_are_not_captures() {
        let sql = "SELECT '{a}', \"{b}\", $$ {c} $$, $t${d}$t$ -- {e}\n /* {f} */ FROM t";
        let r = rw(sql, 0);
        assert_eq!(r.sql, sql);
        assert!(r.captures.is_empty());
    }

    #[test]
    fn bad_captures_are_explained() {
        let e = rewrite("SELECT {a b}", 0).unwrap_err();
        assert!(e.message.contains("plain identifier"), "{e}");
        assert_eq!(e.range, 7..12);
        let e = rewrite("SELECT {a", 0).unwrap_err();
        assert!(e.message.contains("unclosed"), "{e}");
    }

    #[test]
    fn offsets_map_both_ways() {
        let sql = "SELECT nme FROM t WHERE id = {harbor_id} AND nam = 1";
        let r = rw(sql, 0);
        let after = r.sql.find("nam =").unwrap();
        assert_eq!(r.original_offset(after), sql.find("nam =").unwrap());
        assert_eq!(r.rewritten_offset(sql.find("nam =").unwrap()), after);
        let param = r.sql.find("$1").unwrap();
        let range = r.original_range(&(param..param + 2));
        assert_eq!(&sql[range], "{harbor_id}");
        assert_eq!(r.original_offset(7), 7);
        assert_eq!(r.rewritten_offset(sql.find("harbor_id").unwrap()), param);
    }

    #[test]
    fn parameters_are_found_under_the_cursor() {
        let sql = "SELECT * FROM t WHERE a = {x} AND b = $1";
        let r = rw(sql, 1);
        assert_eq!(r.param_at(sql, sql.find('x').unwrap()), Some(2));
        assert_eq!(r.param_at(sql, sql.find("$1").unwrap()), Some(1));
        assert_eq!(r.param_at(sql, sql.find("$1").unwrap() + 1), Some(1));
        assert_eq!(r.param_at(sql, 3), None);
    }
}
