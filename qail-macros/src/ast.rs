//! The input of `qail!`: `[Type =>] "SQL" [, args…] [, name = match …]`, and the SQL's
//! `{ident}` captures, `IN {list}`s, `{? … }` optional clauses and `{name}` sort choices,
//! rewritten to `$n` placeholders and pieces with a map back to the original byte offsets.
//! Kept free of code generation so other tools can parse `qail!` input the same way.

use std::ops::Range;

use proc_macro2::{Ident, Span};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, LitStr, Token, Type};

/// `qail!([Type =>] "SQL", args…)`.
pub(crate) struct QueryInput {
    /// The user's row type in the `Type => "SQL"` form.
    pub(crate) target: Option<Type>,
    /// The SQL literal.
    pub(crate) sql: LitStr,
    /// Positional arguments for `$1…$n`.
    pub(crate) args: Vec<Expr>,
    /// Sort choices, `name = match value { Pattern => "SQL", … }`, after the arguments.
    pub(crate) choices: Vec<Choice>,
}

/// A sort choice declared as `name = match value { Pattern => "SQL", … }`: `{name}` in the SQL
/// becomes the SQL of the arm that matches.
pub(crate) struct Choice {
    pub(crate) name: Ident,
    /// The `match` with its arms; each arm's body is the SQL literal.
    pub(crate) matched: syn::ExprMatch,
    /// The SQL of each arm, in order.
    pub(crate) texts: Vec<LitStr>,
}

/// A named argument `name = match value { Pattern => "SQL", … }` as a [`Choice`].
fn parse_choice(expr: &Expr) -> syn::Result<Option<Choice>> {
    let Expr::Assign(assign) = expr else {
        return Ok(None);
    };
    let usage = "declare a sort choice as `name = match value { Pattern => \"SQL\", … }` and write `{name}` in the SQL";
    let Expr::Path(path) = &*assign.left else {
        return Err(syn::Error::new_spanned(&assign.left, usage));
    };
    let Some(name) = path.path.get_ident() else {
        return Err(syn::Error::new_spanned(&assign.left, usage));
    };
    let Expr::Match(matched) = &*assign.right else {
        return Err(syn::Error::new_spanned(&assign.right, usage));
    };
    let mut texts = Vec::new();
    for arm in &matched.arms {
        match &*arm.body {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) => texts.push(text.clone()),
            other => {
                return Err(syn::Error::new_spanned(
                    other,
                    "each arm of a sort choice is the SQL it stands for, as a string literal: `Pattern => \"price DESC, id\"`",
                ));
            }
        }
    }
    if texts.is_empty() {
        return Err(syn::Error::new_spanned(matched, usage));
    }
    Ok(Some(Choice {
        name: name.clone(),
        matched: matched.clone(),
        texts,
    }))
}

impl Parse for QueryInput {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let target = if input.peek(LitStr) {
            None
        } else {
            let ty: Type = input.parse().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "expected the SQL string, or `RowType => \"SQL\"`: qail!(\"SELECT …\", args…)",
                )
            })?;
            input.parse::<Token![=>]>()?;
            Some(ty)
        };
        let sql: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected the SQL as a string literal: qail!(\"SELECT …\")",
            )
        })?;
        let mut args = Vec::new();
        let mut choices: Vec<Choice> = Vec::new();
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
            let rest = Punctuated::<Expr, Token![,]>::parse_terminated(input)?;
            for expr in rest {
                match parse_choice(&expr)? {
                    Some(choice) => choices.push(choice),
                    None if choices.is_empty() => args.push(expr),
                    None => {
                        return Err(syn::Error::new_spanned(
                            expr,
                            "positional arguments come before the sort choices (`name = match …`)",
                        ));
                    }
                }
            }
        }
        Ok(QueryInput {
            target,
            sql,
            args,
            choices,
        })
    }
}

/// A `{ident}` capture: the variable and its `$n` number (1-based). A bulk insert's
/// `VALUES {rows}` is one capture per column, each with the field of a row it sends.
pub(crate) struct Capture {
    pub(crate) ident: Ident,
    pub(crate) number: usize,
    pub(crate) field: Option<Field>,
}

/// The field of each row a bulk insert's column parameter sends.
#[derive(Clone)]
pub(crate) struct Field {
    pub(crate) member: syn::Member,
    /// Whether the column is NOT NULL (the field then cannot be an `Option`).
    pub(crate) not_null: bool,
}

/// A column of a bulk insert's target.
pub(crate) struct BulkColumn {
    pub(crate) name: String,
    /// The SQL type of an array of the column (`"int8"[]`).
    pub(crate) array: String,
    pub(crate) not_null: bool,
}

/// Given the SQL before a bulk insert's `VALUES {rows}`, the target's columns.
pub(crate) type BulkColumns<'a> = &'a dyn Fn(&str) -> Result<Vec<BulkColumn>, String>;

/// [`BulkColumns`] of a caller with no snapshot: bulk inserts are refused.
#[cfg_attr(not(test), allow(dead_code, reason = "for callers without a snapshot"))]
pub(crate) fn no_bulk(_: &str) -> Result<Vec<BulkColumn>, String> {
    Err("a bulk insert `VALUES {rows}` needs the schema snapshot".to_owned())
}

/// An optional clause `{? … }`: where it is in the SQL as written, and the `$n` of the
/// captures inside it (the clause is included when each of them is `Some`).
pub(crate) struct Clause {
    pub(crate) original: Range<usize>,
    pub(crate) numbers: Vec<usize>,
}

/// A piece of the rewritten SQL.
pub(crate) enum Piece {
    /// Text every combination has.
    Text(String),
    /// The text of optional clause `index`.
    Clause(usize, String),
    /// The slot of sort choice `index` (of [`ChoiceSpec`]s).
    Choice(usize),
}

/// A sort choice's name and the SQL of each alternative, for [`rewrite`].
pub(crate) struct ChoiceSpec {
    pub(crate) name: String,
    pub(crate) texts: Vec<String>,
}

/// The SQL with captures rewritten to `$n`, and how to map offsets back.
pub(crate) struct Rewritten {
    /// The SQL sent to the analyzer and the server: every optional clause included, each
    /// choice slot filled with the selected alternative.
    pub(crate) sql: String,
    /// Captured variables, in `$n` order, each name once.
    pub(crate) captures: Vec<Capture>,
    /// The highest positional `$n` written in the SQL (0 when there is none).
    pub(crate) max_positional: usize,
    /// The optional clauses, in order.
    pub(crate) clauses: Vec<Clause>,
    /// `sql`, piece by piece (the choice slots empty).
    pub(crate) pieces: Vec<Piece>,
    /// Where each sort choice slot `{name}` is in the SQL as written, with its choice's index.
    pub(crate) choice_slots: Vec<(usize, Range<usize>)>,
    /// `(rewritten range, original range)` of each replaced capture, in order.
    edits: Vec<(Range<usize>, Range<usize>)>,
}

impl Rewritten {
    /// Maps a byte offset in the rewritten SQL back to the original text.
    pub(crate) fn original_offset(&self, offset: usize) -> usize {
        let mut shift: isize = 0;
        for (new, old) in &self.edits {
            if offset < new.start {
                break;
            }
            if offset < new.end {
                return old.start;
            }
            shift = isize::try_from(old.end).unwrap_or(isize::MAX)
                - isize::try_from(new.end).unwrap_or(isize::MAX);
        }
        usize::try_from(isize::try_from(offset).unwrap_or(isize::MAX) + shift).unwrap_or(0)
    }

    /// Maps a byte range in the rewritten SQL back to the original text; a range touching a
    /// rewritten `$n` covers the whole `{ident}`.
    pub(crate) fn original_range(&self, range: &Range<usize>) -> Range<usize> {
        let start = self.original_offset(range.start);
        let end = self
            .edits
            .iter()
            .find(|(new, _)| range.end > new.start && range.end <= new.end)
            .map_or_else(|| self.original_offset(range.end), |(_, old)| old.end);
        start..end.max(start)
    }

    /// Whether the query has optional clauses or sort choices.
    pub(crate) fn is_dynamic(&self) -> bool {
        self.pieces.iter().any(|p| !matches!(p, Piece::Text(_)))
    }
}

/// Rewrites `{ident}` captures to `$n` numbered after the `positional` arguments, `IN {list}`
/// to `= ANY($n)` (`NOT IN {list}` to `<> ALL($n)`), marks optional clauses `{? … }`, and
/// fills each `{name}` of sort choice `choices[i]` with its alternative `selected[i]`. Quoted
/// strings, quoted identifiers, dollar-quoted strings and comments are left alone.
pub(crate) fn rewrite(
    sql: &str,
    positional: usize,
    span: Span,
    choices: &[ChoiceSpec],
    selected: &[usize],
    bulk: BulkColumns<'_>,
) -> Result<Rewritten, String> {
    let bytes = sql.as_bytes();
    let mut out = Rewritten {
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
                    Ok(n) if open.is_some() => {
                        return Err(format!(
                            "${n} inside an optional clause: capture a variable with `{{name}}` instead, so the clause is included when it is Some"
                        ));
                    }
                    Ok(n) => {
                        out.max_positional = out.max_positional.max(n);
                        i += 1 + digits;
                    }
                    Err(_) => i = skip_dollar_quoted(sql, i),
                }
            }
            b'{' if bytes.get(i + 1) == Some(&b'?') => {
                if open.is_some() {
                    return Err(format!(
                        "`{{?` at byte {i} of the SQL opens an optional clause inside another: close the first with `}}`"
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
                    return Err(format!(
                        "the optional clause `{}` has no `{{name}}` capture: it is included when its captures are Some, so capture an Option inside it",
                        sql[clause.original.clone()].trim()
                    ));
                }
                out.pieces.push(Piece::Text(String::new()));
                i += 1;
                copied = i;
            }
            b'{' => {
                let (ident, spread, end) = parse_capture(sql, i)?;
                out.push_text(&sql[copied..i]);
                let name = ident.to_string();
                if let Some(values) = out.values_keyword() {
                    if open.is_some() {
                        return Err(format!(
                            "the bulk insert `VALUES {{{name}}}` is inside an optional clause: put it outside"
                        ));
                    }
                    let columns = bulk(&sql[..i])?;
                    out.push_bulk(&ident, spread, &columns, values, i..end, positional, span)?;
                } else if spread {
                    return Err(format!(
                        "`{{{name}.*}}` sends the fields of each row as the columns of a bulk insert: write it right after `VALUES`"
                    ));
                } else if let Some(c) = choices.iter().position(|c| c.name == name) {
                    if open.is_some() {
                        return Err(format!(
                            "the sort choice `{{{name}}}` is inside an optional clause: put it outside"
                        ));
                    }
                    let text = &choices[c].texts[selected.get(c).copied().unwrap_or(0)];
                    let start = out.sql.len();
                    out.sql.push_str(text);
                    out.edits.push((start..out.sql.len(), i..end));
                    out.pieces.push(Piece::Choice(c));
                    out.choice_slots.push((c, i..end));
                    out.pieces.push(Piece::Text(String::new()));
                } else {
                    let number = out.number(ident, positional, span);
                    match open {
                        Some(index) => {
                            if outside.contains(&number) {
                                return Err(both_sides(&name));
                            }
                            out.clauses[index].numbers.push(number);
                        }
                        None => {
                            if out.clauses.iter().any(|c| c.numbers.contains(&number)) {
                                return Err(both_sides(&name));
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
        return Err("an optional clause `{? …` is not closed: end it with `}`".to_owned());
    }
    out.push_text(&sql[copied..]);
    Ok(out)
}

fn both_sides(name: &str) -> String {
    format!(
        "`{{{name}}}` is captured both inside and outside an optional clause: inside one it is an Option deciding the clause; use another variable outside"
    )
}

/// The identifier of the `{ident}` (or `{ident.*}`, then `true`) starting at `start`, and the
/// index after the `}`.
fn parse_capture(sql: &str, start: usize) -> Result<(Ident, bool, usize), String> {
    let close = sql[start..].find('}').map(|n| start + n).ok_or_else(|| {
        format!("unclosed `{{` at byte {start} of the SQL: write `{{name}}` to capture a variable")
    })?;
    let name = sql[start + 1..close].trim();
    let (name, spread) = match name.strip_suffix(".*") {
        Some(prefix) => (prefix.trim_end(), true),
        None => (name, false),
    };
    let ident = syn::parse_str::<Ident>(name).map_err(|_| {
        format!(
            "`{{{name}}}` in the SQL is not a variable capture: write `{{name}}` with a plain identifier, `{{? … }}` for an optional clause, or pass the value as a `$n` argument"
        )
    })?;
    Ok((ident, spread, close + 1))
}

impl Rewritten {
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
    fn number(&mut self, ident: Ident, positional: usize, span: Span) -> usize {
        match self
            .captures
            .iter()
            .find(|c| c.ident == ident && c.field.is_none())
        {
            Some(c) => c.number,
            None => {
                let number = positional + self.captures.len() + 1;
                self.captures.push(Capture {
                    ident: Ident::new(&ident.to_string(), span),
                    number,
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
    #[allow(
        clippy::too_many_arguments,
        reason = "one call site, each value distinct"
    )]
    fn push_bulk(
        &mut self,
        ident: &Ident,
        spread: bool,
        columns: &[BulkColumn],
        values: usize,
        original: Range<usize>,
        positional: usize,
        span: Span,
    ) -> Result<(), String> {
        let from = self.original_offset(values);
        let cut = self.sql.len() - values;
        self.sql.truncate(values);
        if let Some(Piece::Text(t) | Piece::Clause(_, t)) = self.pieces.last_mut() {
            t.truncate(t.len() - cut);
        }
        let mut text = String::from("SELECT * FROM UNNEST(");
        for (i, column) in columns.iter().enumerate() {
            let (name, array) = (&column.name, &column.array);
            let field = if spread {
                let name = syn::parse_str::<Ident>(name).map_err(|_| {
                    format!(
                        "column \"{name}\" is not a Rust field name, so `{{{ident}.*}}` cannot send it: send tuples with `{{{ident}}}`"
                    )
                })?;
                syn::Member::Named(Ident::new(&name.to_string(), span))
            } else {
                syn::Member::Unnamed(syn::Index {
                    index: u32::try_from(i).unwrap_or(u32::MAX),
                    span,
                })
            };
            let number = positional + self.captures.len() + 1;
            self.captures.push(Capture {
                ident: Ident::new(&ident.to_string(), span),
                number,
                field: Some(Field {
                    member: field,
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

/// The target of the `INSERT INTO table (columns…)` that `text` ends with (with or without
/// its `VALUES`): the schema if written, the table and the columns, names unquoted.
pub(crate) fn insert_target(text: &str) -> Option<(Option<String>, String, Vec<String>)> {
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
pub(crate) struct CopyForm {
    pub(crate) target: String,
    pub(crate) rows: Ident,
    pub(crate) spread: bool,
}

/// The [`CopyForm`] of `sql`, when it is one.
pub(crate) fn copy_form(sql: &str) -> Option<Result<CopyForm, String>> {
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
    let parsed = parse_capture(trimmed, brace).and_then(|(rows, spread, end)| {
        if trimmed[end..].trim().is_empty() {
            Ok(CopyForm {
                target: trimmed[5..from].trim().to_owned(),
                rows,
                spread,
            })
        } else {
            Err(usage.to_owned())
        }
    });
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
    use quote::quote;

    fn rw(sql: &str, positional: usize) -> Rewritten {
        rewrite(sql, positional, Span::call_site(), &[], &[], &no_bulk).unwrap()
    }

    #[test]
    fn parses_plain_and_typed_forms() {
        let q: QueryInput = syn::parse2(quote!("SELECT 1")).unwrap();
        assert!(q.target.is_none() && q.args.is_empty());
        let q: QueryInput = syn::parse2(quote!(Harbor => "SELECT $1", a + 1, b,)).unwrap();
        assert!(q.target.is_some());
        assert_eq!(q.args.len(), 2);
        assert!(syn::parse2::<QueryInput>(quote!(Harbor "x")).is_err());
        assert!(syn::parse2::<QueryInput>(quote!("x" a)).is_err());
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
        let names: Vec<_> = r
            .captures
            .iter()
            .map(|c| (c.ident.to_string(), c.number))
            .collect();
        assert_eq!(names, [("x".to_owned(), 2), ("y".to_owned(), 3)]);
        assert_eq!(r.max_positional, 1);
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
        let e = rewrite("SELECT {a b}", 0, Span::call_site(), &[], &[], &no_bulk)
            .err()
            .unwrap();
        assert!(e.contains("plain identifier"), "{e}");
        let e = rewrite("SELECT {a", 0, Span::call_site(), &[], &[], &no_bulk)
            .err()
            .unwrap();
        assert!(e.contains("unclosed"), "{e}");
    }

    #[test]
    fn offsets_map_back_to_the_original() {
        let sql = "SELECT nme FROM t WHERE id = {harbor_id} AND nam = 1";
        let r = rw(sql, 0);
        let after = r.sql.find("nam =").unwrap();
        assert_eq!(r.original_offset(after), sql.find("nam =").unwrap());
        let param = r.sql.find("$1").unwrap();
        let range = r.original_range(&(param..param + 2));
        assert_eq!(&sql[range], "{harbor_id}");
        assert_eq!(r.original_offset(7), 7);
    }

    #[test]
    fn lists_and_clauses_are_rewritten() {
        let sql = "SELECT 1 WHERE a IN {xs} AND b not  in {ys} AND c = {z} {? AND d = {d} AND e IN {es} } LIMIT 1";
        let r = rw(sql, 0);
        assert_eq!(
            r.sql,
            "SELECT 1 WHERE a = ANY($1) AND b <> ALL($2) AND c = $3  AND d = $4 AND e = ANY($5)  LIMIT 1"
        );
        assert_eq!(r.clauses.len(), 1);
        assert_eq!(r.clauses[0].numbers, [4, 5]);
        assert_eq!(
            &sql[r.clauses[0].original.clone()],
            "{? AND d = {d} AND e IN {es} }"
        );
        let at = r.sql.find("<> ALL").unwrap();
        assert_eq!(&sql[r.original_range(&(at..at + 10))], "not  in {ys}");
        let at = r.sql.find("LIMIT").unwrap();
        assert_eq!(r.original_offset(at), sql.find("LIMIT").unwrap());
        assert!(matches!(&r.pieces[1], Piece::Clause(0, t) if t == " AND d = $4 AND e = ANY($5) "));
        // `IN` inside a word is not the keyword.
        assert_eq!(rw("SELECT {x} AS within", 0).sql, "SELECT $1 AS within");
        assert_eq!(
            rw("SELECT 1 FROM t JOIN u ON u.a = {x}", 0).sql,
            "SELECT 1 FROM t JOIN u ON u.a = $1"
        );
    }

    #[test]
    fn clause_mistakes_are_explained() {
        let e = |sql| {
            rewrite(sql, 0, Span::call_site(), &[], &[], &no_bulk)
                .err()
                .unwrap()
        };
        assert!(e("SELECT 1 {? AND true }").contains("has no `{name}` capture"));
        assert!(e("SELECT 1 {? AND a = {a} ").contains("not closed"));
        assert!(e("SELECT 1 {? AND a = {a} {? AND b = {b} } }").contains("inside another"));
        assert!(e("SELECT 1 {? AND a = $1 }").contains("capture a variable"));
        assert!(e("SELECT {a} {? AND a = {a} }").contains("both inside and outside"));
    }

    #[test]
    fn sort_choices_fill_their_slot() {
        let choices = [ChoiceSpec {
            name: "sort".to_owned(),
            texts: vec!["name".to_owned(), "id DESC".to_owned()],
        }];
        let r = rewrite(
            "SELECT 1 ORDER BY {sort}, {x}",
            0,
            Span::call_site(),
            &choices,
            &[1],
            &no_bulk,
        )
        .unwrap();
        assert_eq!(r.sql, "SELECT 1 ORDER BY id DESC, $1");
        assert!(matches!(r.pieces[1], Piece::Choice(0)));
        let q: QueryInput = syn::parse2(quote!(
            "SELECT 1",
            a,
            sort = match o {
                A => "x",
                _ => "y",
            }
        ))
        .unwrap();
        assert_eq!(
            (q.args.len(), q.choices.len(), q.choices[0].texts.len()),
            (1, 1, 2)
        );
        assert!(syn::parse2::<QueryInput>(quote!("SELECT 1", sort = o)).is_err());
        assert!(
            syn::parse2::<QueryInput>(quote!(
                "SELECT 1",
                sort = match o {
                    A => 1,
                }
            ))
            .is_err()
        );
    }

    fn sailing_columns(before: &str) -> Result<Vec<BulkColumn>, String> {
        let (_, table, columns) = insert_target(before).ok_or("no target")?;
        assert_eq!(table, "sailings");
        Ok(columns
            .into_iter()
            .map(|name| BulkColumn {
                name,
                array: "int8[]".to_owned(),
                not_null: true,
            })
            .collect())
    }

    #[test]
    fn bulk_inserts_unnest_one_array_per_column() {
        let sql = "INSERT INTO sailings (id, \"Seats\") VALUES {rows} RETURNING id";
        let r = rewrite(sql, 0, Span::call_site(), &[], &[], &sailing_columns).unwrap();
        assert_eq!(
            r.sql,
            "INSERT INTO sailings (id, \"Seats\") SELECT * FROM UNNEST($1::int8[], $2::int8[]) RETURNING id"
        );
        let fields: Vec<_> = r
            .captures
            .iter()
            .map(|c| c.field.clone().unwrap().member)
            .collect();
        assert_eq!(fields, [syn::parse_quote!(0), syn::parse_quote!(1)]);
        let sql = "INSERT INTO public.sailings (id, seats) VALUES {rows.*}";
        let r = rewrite(sql, 0, Span::call_site(), &[], &[], &sailing_columns).unwrap();
        let fields: Vec<_> = r
            .captures
            .iter()
            .map(|c| c.field.clone().unwrap().member)
            .collect();
        assert_eq!(fields, [syn::parse_quote!(id), syn::parse_quote!(seats)]);
        let at = r.sql.find("SELECT").unwrap();
        assert_eq!(
            &sql[r.original_range(&(at..r.sql.len()))],
            "VALUES {rows.*}"
        );
        assert_eq!(
            insert_target("INSERT INTO \"My\".\"T\" (A, \"b\")"),
            Some((
                Some("My".to_owned()),
                "T".to_owned(),
                vec!["a".to_owned(), "b".to_owned()]
            ))
        );
        assert!(rewrite("SELECT {rows.*}", 0, Span::call_site(), &[], &[], &no_bulk).is_err());
    }

    #[test]
    fn copy_forms_are_recognized() {
        let c = copy_form(" copy sailings (id, notes) FROM {rows.*} ")
            .unwrap()
            .unwrap();
        assert_eq!(
            (c.target.as_str(), c.rows.to_string(), c.spread),
            ("sailings (id, notes)", "rows".to_owned(), true)
        );
        assert!(copy_form("SELECT 1").is_none());
        assert!(copy_form("COPY t (a) FROM STDIN").unwrap().is_err());
        assert!(
            copy_form("COPY t (a) FROM {rows} WHERE true")
                .unwrap()
                .is_err()
        );
    }
}
