//! The SQL of a `qail!` string: `{name}` captures, `IN {list}`s, `{? … }` optional clauses,
//! `{name}` sort-choice slots and bulk inserts' `VALUES {rows}`, rewritten to `$n`
//! placeholders numbered after the positional arguments, with a map between offsets of the SQL
//! as written and of the rewritten SQL.
//!
//! This is the one scanner of that syntax: the `qail!` macro (which adds what needs Rust's
//! parser: identifiers' validity, spans, the sort choices' arms) and the language server
//! (feature `lsp`) both call [`rewrite`], so they agree on what is a capture, a clause, a list
//! and where each is. Quoted strings, quoted identifiers, dollar-quoted strings and comments
//! hold none of them.
//!
//! ```
//! use qail_analyzer::capture::{no_bulk, rewrite};
//! let r = rewrite("SELECT * FROM t WHERE a = {x} AND b = $1 {? AND c IN {cs} }", 1, &[], &[], &no_bulk).unwrap();
//! assert_eq!(r.sql, "SELECT * FROM t WHERE a = $2 AND b = $1  AND c = ANY($3) ");
//! assert_eq!(r.captures[0].name, "x");
//! assert_eq!(r.captures[0].number, 2);
//! assert_eq!(r.clauses[0].numbers, [3]);
//! assert_eq!(r.max_positional, 1);
//! ```

use qail_schema::script::lex::{block_comment_end, dollar_quote_end, quoted_end};
use std::ops::Range;

use crate::Snapshot;

/// A `{name}` capture: the variable, its `$n` number (1-based) and where it is first written.
/// A bulk insert's `VALUES {rows}` is one capture per column, each with the field of a row it
/// sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// The variable's name, as written between the braces (trimmed).
    pub name: String,
    /// The `$n` it becomes.
    pub number: usize,
    /// Byte range of its first `{name}` in the SQL as written.
    pub range: Range<usize>,
    /// For a bulk insert's column parameter, the field of each row it sends.
    pub field: Option<Field>,
}

/// The field of each row a bulk insert's column parameter sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The field: named like the column (`{rows.*}`) or the tuple index (`{rows}`).
    pub member: Member,
    /// Whether the column is NOT NULL (the field then cannot be an `Option`).
    pub not_null: bool,
}

/// A field of a row: by name or by tuple index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Member {
    /// A named field (`row.seats`).
    Named(String),
    /// A tuple field (`row.0`).
    Index(usize),
}

/// A capture or clause that cannot be read: what is wrong and where (byte range of the SQL as
/// written).
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

fn error(message: String, range: Range<usize>) -> CaptureError {
    CaptureError { message, range }
}

/// A column of a bulk insert's target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkColumn {
    /// The column's name.
    pub name: String,
    /// The SQL type of an array of the column (`"int8"[]`).
    pub array: String,
    /// Whether the column is NOT NULL.
    pub not_null: bool,
}

/// Given the SQL before a bulk insert's `VALUES {rows}`, the target's columns.
pub type BulkColumns<'a> = &'a dyn Fn(&str) -> Result<Vec<BulkColumn>, String>;

/// [`BulkColumns`] of a caller with no snapshot: bulk inserts are refused.
pub fn no_bulk(_: &str) -> Result<Vec<BulkColumn>, String> {
    Err("a bulk insert `VALUES {rows}` needs the schema snapshot".to_owned())
}

/// The columns of the bulk insert whose SQL before `VALUES {rows}` is `before`, each with the
/// SQL type of an array of it, from the snapshot.
pub fn bulk_columns(before: &str, snapshot: &Snapshot) -> Result<Vec<BulkColumn>, String> {
    let usage = "a bulk insert is `INSERT INTO table (column, …) VALUES {rows}`: name the columns";
    let (schema, table, columns) = insert_target(before).ok_or(usage)?;
    let relation = snapshot
        .relations
        .iter()
        .filter(|r| r.name == table && schema.as_ref().is_none_or(|s| *s == r.schema))
        .min_by_key(|r| {
            snapshot
                .effective_search_path()
                .position(|s| s == r.schema)
                .unwrap_or(usize::MAX)
        })
        .ok_or_else(|| format!("table \"{table}\" is not in the schema snapshot"))?;
    columns
        .into_iter()
        .map(|name| {
            let column = relation
                .columns
                .iter()
                .find(|c| c.name == name)
                .ok_or_else(|| format!("column \"{name}\" does not exist in table \"{table}\""))?;
            if column.ty.array_dims > 0 {
                return Err(format!(
                    "column \"{name}\" is an array, which a bulk insert cannot send (UNNEST would flatten it): insert those rows with one query each"
                ));
            }
            let ty = &column.ty;
            let array = if ty.schema == "pg_catalog" {
                format!("\"{}\"[]", ty.name)
            } else {
                format!("\"{}\".\"{}\"[]", ty.schema, ty.name)
            };
            Ok(BulkColumn {
                name,
                array,
                not_null: column.not_null,
            })
        })
        .collect()
}

/// An optional clause `{? … }`: where it is in the SQL as written, and the `$n` of the
/// captures inside it (the clause is included when each of them is `Some`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clause {
    /// Byte range of `{? … }` in the SQL as written.
    pub original: Range<usize>,
    /// The `$n` of the captures inside it.
    pub numbers: Vec<usize>,
}

/// A piece of the rewritten SQL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text every combination has.
    Text(String),
    /// The text of optional clause `index`.
    Clause(usize, String),
    /// The slot of sort choice `index` (of [`ChoiceSpec`]s).
    Choice(usize),
}

/// A sort choice's name and the SQL of each alternative, for [`rewrite`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChoiceSpec {
    /// The slot's name, `{name}` in the SQL.
    pub name: String,
    /// The SQL of each alternative, in order.
    pub texts: Vec<String>,
}

/// The SQL with captures rewritten to `$n`, and how offsets map between the two texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapturedSql {
    /// The SQL sent to the analyzer and the server: every optional clause included, each
    /// choice slot filled with the selected alternative.
    pub sql: String,
    /// Captured variables, in `$n` order, each name once.
    pub captures: Vec<Capture>,
    /// The highest positional `$n` written in the SQL (0 when there is none).
    pub max_positional: usize,
    /// The optional clauses, in order.
    pub clauses: Vec<Clause>,
    /// `sql`, piece by piece (the choice slots empty).
    pub pieces: Vec<Piece>,
    /// Where each sort choice slot `{name}` is in the SQL as written, with its choice's index.
    pub choice_slots: Vec<(usize, Range<usize>)>,
    /// `(rewritten range, original range)` of each replaced capture, in order.
    edits: Vec<(Range<usize>, Range<usize>)>,
}

impl CapturedSql {
    /// SQL that holds no captures (a `.sql` file): the rewritten SQL is the SQL as written.
    pub fn unchanged(sql: &str) -> CapturedSql {
        CapturedSql {
            sql: sql.to_owned(),
            captures: Vec::new(),
            max_positional: 0,
            clauses: Vec::new(),
            pieces: vec![Piece::Text(sql.to_owned())],
            choice_slots: Vec::new(),
            edits: Vec::new(),
        }
    }

    /// Maps a byte offset in the rewritten SQL back to the original text.
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

    /// Maps a byte range in the rewritten SQL back to the original text; a range touching a
    /// rewritten `$n` covers the whole `{ident}`.
    pub fn original_range(&self, range: &Range<usize>) -> Range<usize> {
        let start = self.original_offset(range.start);
        let end = self
            .edits
            .iter()
            .find(|(new, _)| range.end > new.start && range.end <= new.end)
            .map_or_else(|| self.original_offset(range.end), |(_, old)| old.end);
        start..end.max(start)
    }

    /// Whether the query has optional clauses or sort choices.
    pub fn is_dynamic(&self) -> bool {
        self.pieces.iter().any(|p| !matches!(p, Piece::Text(_)))
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
            let text = &self.sql[new.clone()];
            let digits = &text[text.find('$')? + 1..];
            let len = digits.bytes().take_while(u8::is_ascii_digit).count();
            return digits[..len].parse().ok();
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

/// Rewrites `{ident}` captures to `$n` numbered after the `positional` arguments, `IN {list}`
/// to `= ANY($n)` (`NOT IN {list}` to `<> ALL($n)`), marks optional clauses `{? … }`, and
/// fills each `{name}` of sort choice `choices[i]` with its alternative `selected[i]`. Quoted
/// strings, quoted identifiers, dollar-quoted strings and comments are left alone.
pub fn rewrite(
    sql: &str,
    positional: usize,
    choices: &[ChoiceSpec],
    selected: &[usize],
    bulk: BulkColumns<'_>,
) -> Result<CapturedSql, CaptureError> {
    let bytes = sql.as_bytes();
    let mut out = CapturedSql {
        sql: String::with_capacity(sql.len()),
        captures: Vec::new(),
        max_positional: 0,
        clauses: Vec::new(),
        pieces: vec![Piece::Text(String::new())],
        choice_slots: Vec::new(),
        edits: Vec::new(),
    };
    let mut i = 0;
    let mut copied = 0;
    let mut open: Option<usize> = None;
    let mut outside: Vec<usize> = Vec::new();
    while i < bytes.len() {
        match bytes[i] {
            b'\'' | b'"' => i = quoted_end(bytes, i, bytes[i], false),
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                i = sql[i..].find('\n').map_or(sql.len(), |n| i + n);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => i = block_comment_end(bytes, i),
            b'$' => {
                let digits = sql[i + 1..].bytes().take_while(u8::is_ascii_digit).count();
                match sql[i + 1..i + 1 + digits].parse::<usize>() {
                    Ok(n) if open.is_some() => {
                        return Err(error(
                            format!(
                                "${n} inside an optional clause: capture a variable with `{{name}}` instead, so the clause is included when it is Some"
                            ),
                            i..i + 1 + digits,
                        ));
                    }
                    Ok(n) => {
                        out.max_positional = out.max_positional.max(n);
                        i += 1 + digits;
                    }
                    Err(_) => i = dollar_quote_end(sql, i).unwrap_or(i + 1),
                }
            }
            b'{' if bytes.get(i + 1) == Some(&b'?') => {
                if open.is_some() {
                    return Err(error(
                        format!(
                            "`{{?` at byte {i} of the SQL opens an optional clause inside another: close the first with `}}`"
                        ),
                        i..i + 2,
                    ));
                }
                out.push_text(&sql[copied..i]);
                out.mark(i..i + 2);
                out.clauses.push(Clause {
                    original: i..i,
                    numbers: Vec::new(),
                });
                let index = out.clauses.len() - 1;
                out.pieces.push(Piece::Clause(index, String::new()));
                open = Some(index);
                i += 2;
                copied = i;
            }
            b'}' if open.is_some() => {
                out.push_text(&sql[copied..i]);
                out.mark(i..i + 1);
                let index = open.take().unwrap_or_default();
                let clause = &mut out.clauses[index];
                clause.original.end = i + 1;
                if clause.numbers.is_empty() {
                    return Err(error(
                        format!(
                            "the optional clause `{}` has no `{{name}}` capture: it is included when its captures are Some, so capture an Option inside it",
                            sql[clause.original.clone()].trim()
                        ),
                        clause.original.clone(),
                    ));
                }
                out.pieces.push(Piece::Text(String::new()));
                i += 1;
                copied = i;
            }
            b'{' => {
                let (name, spread, end) = parse_capture(sql, i)?;
                out.push_text(&sql[copied..i]);
                if let Some(values) = out.values_keyword() {
                    if open.is_some() {
                        return Err(error(
                            format!(
                                "the bulk insert `VALUES {{{name}}}` is inside an optional clause: put it outside"
                            ),
                            i..end,
                        ));
                    }
                    let columns = bulk(&sql[..i]).map_err(|m| error(m, i..end))?;
                    out.push_bulk(name, spread, &columns, values, i..end, positional)?;
                } else if spread {
                    return Err(error(
                        format!(
                            "`{{{name}.*}}` sends the fields of each row as the columns of a bulk insert: write it right after `VALUES`"
                        ),
                        i..end,
                    ));
                } else if let Some(c) = choices.iter().position(|c| c.name == name) {
                    if open.is_some() {
                        return Err(error(
                            format!(
                                "the sort choice `{{{name}}}` is inside an optional clause: put it outside"
                            ),
                            i..end,
                        ));
                    }
                    let texts = &choices[c].texts;
                    let text = texts
                        .get(selected.get(c).copied().unwrap_or(0))
                        .map_or("", String::as_str);
                    let start = out.sql.len();
                    out.sql.push_str(text);
                    out.edits.push((start..out.sql.len(), i..end));
                    out.pieces.push(Piece::Choice(c));
                    out.choice_slots.push((c, i..end));
                    out.pieces.push(Piece::Text(String::new()));
                } else {
                    let number = out.number(name, i..end, positional);
                    match open {
                        Some(index) => {
                            if outside.contains(&number) {
                                return Err(both_sides(name, i..end));
                            }
                            out.clauses[index].numbers.push(number);
                        }
                        None => {
                            if out.clauses.iter().any(|c| c.numbers.contains(&number)) {
                                return Err(both_sides(name, i..end));
                            }
                            outside.push(number);
                        }
                    }
                    out.push_param(number, i..end);
                }
                i = end;
                copied = i;
            }
            _ => i += 1,
        }
    }
    if open.is_some() {
        let start = out.clauses.last().map_or(0, |c| c.original.start);
        return Err(error(
            "an optional clause `{? …` is not closed: end it with `}`".to_owned(),
            start..sql.len(),
        ));
    }
    out.push_text(&sql[copied..]);
    Ok(out)
}

fn both_sides(name: &str, range: Range<usize>) -> CaptureError {
    error(
        format!(
            "`{{{name}}}` is captured both inside and outside an optional clause: inside one it is an Option deciding the clause; use another variable outside"
        ),
        range,
    )
}

/// The identifier of the `{ident}` (or `{ident.*}`, then `true`) starting at `start`, and the
/// index after the `}`.
fn parse_capture(sql: &str, start: usize) -> Result<(&str, bool, usize), CaptureError> {
    let close = sql[start..].find('}').map(|n| start + n).ok_or_else(|| {
        error(
            format!(
                "unclosed `{{` at byte {start} of the SQL: write `{{name}}` to capture a variable"
            ),
            start..sql.len(),
        )
    })?;
    let name = sql[start + 1..close].trim();
    let (name, spread) = match name.strip_suffix(".*") {
        Some(prefix) => (prefix.trim_end(), true),
        None => (name, false),
    };
    if !is_plain_identifier(name) {
        return Err(not_a_capture(name, start..close + 1));
    }
    Ok((name, spread, close + 1))
}

/// Whether `name` is a plain identifier (letters, digits, `_`, not starting with a digit, not
/// `_` alone). The macro also rejects Rust keywords, which only it knows how to check.
pub fn is_plain_identifier(name: &str) -> bool {
    name.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && name != "_"
}

/// The error for a `{…}` whose content is not a plain identifier.
pub fn not_a_capture(name: &str, range: Range<usize>) -> CaptureError {
    error(
        format!(
            "`{{{name}}}` in the SQL is not a variable capture: write `{{name}}` with a plain identifier, `{{? … }}` for an optional clause, or pass the value as a `$n` argument"
        ),
        range,
    )
}

impl CapturedSql {
    /// Appends text to the SQL and its current piece.
    fn push_text(&mut self, text: &str) {
        self.sql.push_str(text);
        match self.pieces.last_mut() {
            Some(Piece::Text(t) | Piece::Clause(_, t)) => t.push_str(text),
            _ => self.pieces.push(Piece::Text(text.to_owned())),
        }
    }

    /// Records that `original` (a clause marker) was dropped at the current position.
    fn mark(&mut self, original: Range<usize>) {
        let at = self.sql.len();
        self.edits.push((at..at, original));
    }

    /// The `$n` of a capture (a repeated name reuses its number).
    fn number(&mut self, name: &str, original: Range<usize>, positional: usize) -> usize {
        match self
            .captures
            .iter()
            .find(|c| c.name == name && c.field.is_none())
        {
            Some(c) => c.number,
            None => {
                let number = positional + self.captures.len() + 1;
                self.captures.push(Capture {
                    name: name.to_owned(),
                    number,
                    range: original,
                    field: None,
                });
                number
            }
        }
    }

    /// When the current piece ends with the keyword `VALUES`, where it starts in `sql`.
    fn values_keyword(&self) -> Option<usize> {
        let current = match self.pieces.last() {
            Some(Piece::Text(t) | Piece::Clause(_, t)) => t.as_str(),
            _ => return None,
        };
        let start = keyword_before(current.trim_end(), "values")?;
        Some(self.sql.len() - (current.len() - start))
    }

    /// Replaces `VALUES` (at `values`) and the capture at `original` with `SELECT * FROM
    /// UNNEST($a::t[], …)`, one parameter per column, each sending a field of every row: the
    /// tuple fields in order, or (`spread`) the fields named like the columns.
    fn push_bulk(
        &mut self,
        rows: &str,
        spread: bool,
        columns: &[BulkColumn],
        values: usize,
        original: Range<usize>,
        positional: usize,
    ) -> Result<(), CaptureError> {
        let from = self.original_offset(values);
        let cut = self.sql.len() - values;
        self.sql.truncate(values);
        if let Some(Piece::Text(t) | Piece::Clause(_, t)) = self.pieces.last_mut() {
            t.truncate(t.len() - cut);
        }
        let mut text = String::from("SELECT * FROM UNNEST(");
        for (i, column) in columns.iter().enumerate() {
            let (name, array) = (&column.name, &column.array);
            let member = if spread {
                if !is_plain_identifier(name) {
                    return Err(not_a_field(name, rows, original));
                }
                Member::Named(name.clone())
            } else {
                Member::Index(i)
            };
            let number = positional + self.captures.len() + 1;
            self.captures.push(Capture {
                name: rows.to_owned(),
                number,
                range: original.clone(),
                field: Some(Field {
                    member,
                    not_null: column.not_null,
                }),
            });
            if i > 0 {
                text.push_str(", ");
            }
            text.push_str(&format!("${number}::{array}"));
        }
        text.push(')');
        self.push_text(&text);
        self.edits
            .push((values..self.sql.len(), from..original.end));
        Ok(())
    }

    /// Writes `$n` for the capture at `original`, or `= ANY($n)` when it follows `IN`
    /// (`<> ALL($n)` after `NOT IN`), and records the edit.
    fn push_param(&mut self, number: usize, original: Range<usize>) {
        let current = match self.pieces.last() {
            Some(Piece::Text(t) | Piece::Clause(_, t)) => t.as_str(),
            _ => "",
        };
        let (start, original, text) = match in_list(current) {
            Some((cut, negated)) => {
                let start = self.sql.len() - cut;
                let from = self.original_offset(start);
                self.sql.truncate(start);
                if let Some(Piece::Text(t) | Piece::Clause(_, t)) = self.pieces.last_mut() {
                    t.truncate(t.len() - cut);
                }
                let text = if negated {
                    format!("<> ALL(${number})")
                } else {
                    format!("= ANY(${number})")
                };
                (start, from..original.end, text)
            }
            None => (self.sql.len(), original, format!("${number}")),
        };
        self.push_text(&text);
        self.edits.push((start..self.sql.len(), original));
    }
}

/// The error for a bulk insert's column that `{rows.*}` cannot send as a field.
pub fn not_a_field(column: &str, rows: &str, range: Range<usize>) -> CaptureError {
    error(
        format!(
            "column \"{column}\" is not a Rust field name, so `{{{rows}.*}}` cannot send it: send tuples with `{{{rows}}}`"
        ),
        range,
    )
}

/// The target of the `INSERT INTO table (columns…)` that `text` ends with (with or without
/// its `VALUES`): the schema if written, the table and the columns, names unquoted.
pub fn insert_target(text: &str) -> Option<(Option<String>, String, Vec<String>)> {
    let text = text.trim_end();
    let text = keyword_before(text, "values").map_or(text, |at| &text[..at]);
    let lower = text.to_ascii_lowercase();
    let into = lower.rfind("into")? + 4;
    let rest = text[into..].trim_start();
    let open = rest.find('(')?;
    let close = rest.rfind(')')?;
    let name: Vec<String> = split_names(&rest[..open], '.');
    let columns = split_names(rest.get(open + 1..close)?, ',');
    if columns.is_empty() || !rest[close + 1..].trim().is_empty() {
        return None;
    }
    match name.as_slice() {
        [table] => Some((None, table.clone(), columns)),
        [schema, table] => Some((Some(schema.clone()), table.clone(), columns)),
        _ => None,
    }
}

/// A checked COPY, `COPY table (columns…) FROM {rows}` (or `{rows.*}`): the target as
/// written, the rows' variable, and whether their fields are named like the columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyForm {
    /// The target as written, `table (columns…)`.
    pub target: String,
    /// The rows' variable.
    pub rows: String,
    /// Whether the rows' fields are named like the columns (`{rows.*}`).
    pub spread: bool,
}

/// The [`CopyForm`] of `sql`, when it is one.
pub fn copy_form(sql: &str) -> Option<Result<CopyForm, String>> {
    let trimmed = sql.trim();
    let head = trimmed.get(..5)?;
    if !head.eq_ignore_ascii_case("copy ") {
        return None;
    }
    let usage = "a checked COPY is `COPY table (column, …) FROM {rows}` (tuples in column order) or `FROM {rows.*}` (fields named like the columns)";
    let Some(brace) = trimmed.rfind('{') else {
        return Some(Err(usage.to_owned()));
    };
    let before = trimmed[..brace].trim_end();
    let Some(from) = keyword_before(before, "from") else {
        return Some(Err(usage.to_owned()));
    };
    let parsed = match parse_capture(trimmed, brace) {
        Ok((rows, spread, end)) if trimmed[end..].trim().is_empty() => Ok(CopyForm {
            target: trimmed[5..from].trim().to_owned(),
            rows: rows.to_owned(),
            spread,
        }),
        Ok(_) => Err(usage.to_owned()),
        Err(e) => Err(e.message),
    };
    Some(parsed)
}

/// Names separated by `sep`, each trimmed and unquoted (`"Name"` keeps its case; a bare name
/// is folded to lower case, as PostgreSQL does).
fn split_names(text: &str, sep: char) -> Vec<String> {
    text.split(sep)
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(
            |n| match n.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
                Some(quoted) => quoted.replace("\"\"", "\""),
                None => n.to_lowercase(),
            },
        )
        .collect()
}

/// When `text` ends with the keyword `IN` (and blanks), how many bytes to cut from its end to
/// drop it (with a `NOT` before it), and whether it was `NOT IN`.
fn in_list(text: &str) -> Option<(usize, bool)> {
    let trimmed = text.trim_end();
    let before = keyword_before(trimmed, "in")?;
    let rest = trimmed[..before].trim_end();
    match keyword_before(rest, "not") {
        Some(not) => Some((text.len() - not, true)),
        None => Some((text.len() - before, false)),
    }
}

/// Where `keyword` starts when `text` ends with it as a whole word (any case).
fn keyword_before(text: &str, keyword: &str) -> Option<usize> {
    let start = text.len().checked_sub(keyword.len())?;
    let word = text.get(start..)?;
    let boundary = text[..start]
        .chars()
        .next_back()
        .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '"'));
    (word.eq_ignore_ascii_case(keyword) && boundary).then_some(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(sql: &str, positional: usize) -> CapturedSql {
        rewrite(sql, positional, &[], &[], &no_bulk).unwrap()
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
        let e = rewrite("SELECT {a b}", 0, &[], &[], &no_bulk).unwrap_err();
        assert!(e.message.contains("plain identifier"), "{e}");
        assert_eq!(e.range, 7..12);
        let e = rewrite("SELECT {a", 0, &[], &[], &no_bulk).unwrap_err();
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

    #[test]
    fn dynamic_syntax_maps_to_the_sql_as_written() {
        let sql = "SELECT 1 FROM t WHERE a NOT IN {xs} {? AND b = {b} } ORDER BY {sort}";
        let choices = [ChoiceSpec {
            name: "sort".to_owned(),
            texts: vec!["a DESC".to_owned()],
        }];
        let r = rewrite(sql, 0, &choices, &[0], &no_bulk).unwrap();
        assert_eq!(
            r.sql,
            "SELECT 1 FROM t WHERE a <> ALL($1)  AND b = $2  ORDER BY a DESC"
        );
        assert!(r.is_dynamic());
        // The cursor on a list or inside a clause finds its parameter; on a clause marker or a
        // choice slot, none.
        assert_eq!(r.param_at(sql, sql.find("xs").unwrap()), Some(1));
        assert_eq!(r.param_at(sql, sql.find("{b}").unwrap() + 1), Some(2));
        assert_eq!(r.param_at(sql, sql.find("{?").unwrap()), None);
        assert_eq!(r.param_at(sql, sql.find("sort").unwrap()), None);
        let at = r.sql.find("b = ").unwrap();
        assert_eq!(r.original_offset(at), sql.find("b = ").unwrap());
        assert_eq!(r.rewritten_offset(sql.find("b = ").unwrap()), at);
        let e = rewrite("SELECT 1 {? AND true }", 0, &[], &[], &no_bulk).unwrap_err();
        assert_eq!(e.range, 9..22);
    }
}
