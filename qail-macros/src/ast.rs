//! The input of `qail!`: `[Type =>] "SQL" [, args…]`, and the `{ident}` captures in the SQL,
//! rewritten to `$n` placeholders with a map back to the original byte offsets.

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
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
            let rest = Punctuated::<Expr, Token![,]>::parse_terminated(input)?;
            args.extend(rest);
        }
        Ok(QueryInput { target, sql, args })
    }
}

/// A `{ident}` capture: the variable and its `$n` number (1-based).
pub(crate) struct Capture {
    pub(crate) ident: Ident,
    pub(crate) number: usize,
}

/// The SQL with captures rewritten to `$n`, and how to map offsets back.
pub(crate) struct Rewritten {
    /// The SQL sent to the analyzer and the server.
    pub(crate) sql: String,
    /// Captured variables, in `$n` order, each name once.
    pub(crate) captures: Vec<Capture>,
    /// The highest positional `$n` written in the SQL (0 when there is none).
    pub(crate) max_positional: usize,
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
}

/// Rewrites `{ident}` captures to `$n` numbered after the `positional` arguments. Quoted
/// strings, quoted identifiers, dollar-quoted strings and comments are left alone.
pub(crate) fn rewrite_captures(
    sql: &str,
    positional: usize,
    span: Span,
) -> Result<Rewritten, String> {
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
                let (ident, end) = parse_capture(sql, i)?;
                out.sql.push_str(&sql[copied..i]);
                out.push_capture(ident, i..end, positional, span);
                i = end;
                copied = i;
            }
            _ => i += 1,
        }
    }
    out.sql.push_str(&sql[copied..]);
    Ok(out)
}

/// The identifier of the `{ident}` starting at `start`, and the index after the `}`.
fn parse_capture(sql: &str, start: usize) -> Result<(Ident, usize), String> {
    let close = sql[start..].find('}').map(|n| start + n).ok_or_else(|| {
        format!("unclosed `{{` at byte {start} of the SQL: write `{{name}}` to capture a variable")
    })?;
    let name = sql[start + 1..close].trim();
    let ident = syn::parse_str::<Ident>(name).map_err(|_| {
        format!(
            "`{{{name}}}` in the SQL is not a variable capture: write `{{name}}` with a plain identifier, or pass the value as a `$n` argument"
        )
    })?;
    Ok((ident, close + 1))
}

impl Rewritten {
    /// Appends the `$n` of a capture (a repeated name reuses its number) and records the edit.
    fn push_capture(
        &mut self,
        ident: Ident,
        original: Range<usize>,
        positional: usize,
        span: Span,
    ) {
        let number = match self.captures.iter().find(|c| c.ident == ident) {
            Some(c) => c.number,
            None => {
                let number = positional + self.captures.len() + 1;
                self.captures.push(Capture {
                    ident: Ident::new(&ident.to_string(), span),
                    number,
                });
                number
            }
        };
        let start = self.sql.len();
        self.sql.push_str(&format!("${number}"));
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
    use quote::quote;

    fn rw(sql: &str, positional: usize) -> Rewritten {
        rewrite_captures(sql, positional, Span::call_site()).unwrap()
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
        let e = rewrite_captures("SELECT {a b}", 0, Span::call_site())
            .err()
            .unwrap();
        assert!(e.contains("plain identifier"), "{e}");
        let e = rewrite_captures("SELECT {a", 0, Span::call_site())
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
}
