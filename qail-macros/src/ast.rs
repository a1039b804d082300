//! The input of `qail!`: `[Type =>] "SQL" [, args…]`, and the `{ident}` captures in the SQL,
//! rewritten to `$n` placeholders with a map back to the original byte offsets.

use std::ops::Range;

use proc_macro2::{Ident, Span};
use qail_schema::capture;
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

/// The SQL with captures rewritten to `$n`, and how to map offsets back: the scan is
/// `qail_schema::capture::rewrite` (shared with the language server); this adds the
/// identifiers as tokens.
pub(crate) struct Rewritten {
    /// The SQL sent to the analyzer and the server.
    pub(crate) sql: String,
    /// Captured variables, in `$n` order, each name once.
    pub(crate) captures: Vec<Capture>,
    /// The highest positional `$n` written in the SQL (0 when there is none).
    pub(crate) max_positional: usize,
    /// The shared scan's result, for mapping offsets.
    shared: capture::Rewritten,
}

impl Rewritten {
    /// Maps a byte offset in the rewritten SQL back to the original text.
    #[cfg(test)]
    pub(crate) fn original_offset(&self, offset: usize) -> usize {
        self.shared.original_offset(offset)
    }

    /// Maps a byte range in the rewritten SQL back to the original text; a range touching a
    /// rewritten `$n` covers the whole `{ident}`.
    pub(crate) fn original_range(&self, range: &Range<usize>) -> Range<usize> {
        self.shared.original_range(range)
    }
}

/// Rewrites `{ident}` captures to `$n` numbered after the `positional` arguments. Quoted
/// strings, quoted identifiers, dollar-quoted strings and comments are left alone.
pub(crate) fn rewrite_captures(
    sql: &str,
    positional: usize,
    span: Span,
) -> Result<Rewritten, String> {
    let shared = capture::rewrite(sql, positional).map_err(|e| e.message)?;
    let captures = shared
        .captures
        .iter()
        .map(|c| {
            // Note: the shared scan accepts any plain identifier; Rust keywords are not
            // variables.
            let ident = syn::parse_str::<Ident>(&c.name)
                .map_err(|_| capture::not_a_capture(&c.name, c.range.clone()).message)?;
            Ok(Capture {
                ident: Ident::new(&ident.to_string(), span),
                number: c.number,
            })
        })
        .collect::<Result<_, String>>()?;
    Ok(Rewritten {
        sql: shared.sql.clone(),
        captures,
        max_positional: shared.max_positional,
        shared,
    })
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
