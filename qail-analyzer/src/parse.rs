//! The parse of the pre-passes' SQL: tokenized, `JSON_TABLE`'s PostgreSQL clauses that
//! sqlparser 0.59 lacks (it reads MySQL's form) taken out of the tokens, then parsed. Tokens
//! keep their locations, so what is parsed still points into the user's SQL.
//!
//! Out of a `JSON_TABLE(doc, path … COLUMNS (…) …)`: the path's `AS name`, the `PASSING`
//! list (kept aside by range: its values are typed), a column's `FORMAT JSON`, wrapper,
//! `QUOTES` and `… ON EMPTY` / `… ON ERROR` behaviours (a `DEFAULT` value kept aside, typed
//! as the column), a `NESTED` path's `AS name`, and the table's `ON ERROR` behaviour; a
//! column written without `PATH` (PostgreSQL's default path, the column's name) gets a
//! placeholder path, which does not change a type. The query of `JSON_ARRAY(SELECT …)` is
//! put in parentheses, the form sqlparser reads.

use std::ops::Range;

use sqlparser::ast::Statement;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

use crate::diag::LineIndex;

/// What was taken out of JSON_TABLEs to be typed by the analyzer.
#[derive(Debug, Default)]
pub(crate) struct JsonTableAside {
    /// Each `PASSING value AS name, …` list, without the keyword.
    pub(crate) passing: Vec<Range<usize>>,
    /// Each column `DEFAULT value`: where the column's name starts, and the value.
    pub(crate) defaults: Vec<(usize, Range<usize>)>,
    /// Each path name (`path AS name`, of the table's path or a NESTED PATH): where it is,
    /// and the name (unquoted names in lower case).
    pub(crate) path_names: Vec<(Range<usize>, String)>,
    /// Each table's `… ON ERROR` behaviour.
    pub(crate) behaviors: Vec<Range<usize>>,
}

/// The name a word token gives (unquoted names in lower case), with its byte range.
fn named(tokens: &[TokenWithSpan], at: usize, lines: &LineIndex) -> Option<(Range<usize>, String)> {
    let t = tokens.get(at)?;
    let Token::Word(w) = &t.token else {
        return None;
    };
    let name = match w.quote_style {
        Some(_) => w.value.clone(),
        None => w.value.to_lowercase(),
    };
    Some((lines.range(t.span)?, name))
}

/// Parses `sql` (the pre-passes' output), taking JSON_TABLE's clauses out first.
pub(crate) fn statements(
    sql: &str,
    aside: &mut JsonTableAside,
) -> Result<Vec<Statement>, ParserError> {
    let dialect = crate::dialect::Postgres::default();
    let mut tokens = Tokenizer::new(&dialect, sql).tokenize_with_location()?;
    json_tables(&mut tokens, &LineIndex::new(sql), aside);
    Parser::new(&dialect)
        .with_tokens_with_locations(tokens)
        .parse_statements()
}

fn is_word(t: &TokenWithSpan, w: &str) -> bool {
    matches!(&t.token, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

/// Edits to make to the tokens: indexes to drop, tokens to insert before an index.
struct Edits {
    drop: Vec<bool>,
    insert: Vec<(usize, Vec<TokenWithSpan>)>,
}

/// The non-whitespace tokens' indexes, and the matching `)` of every `(` among them.
struct View {
    at: Vec<usize>,
    close: Vec<Option<usize>>,
}

impl View {
    fn new(tokens: &[TokenWithSpan]) -> View {
        let at: Vec<usize> = (0..tokens.len())
            .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
            .collect();
        let mut close = vec![None; at.len()];
        let mut open = Vec::new();
        for (k, &i) in at.iter().enumerate() {
            match tokens[i].token {
                Token::LParen => open.push(k),
                Token::RParen => {
                    if let Some(o) = open.pop() {
                        close[o] = Some(k);
                    }
                }
                _ => {}
            }
        }
        View { at, close }
    }

    /// The view positions of the items of the list `open..close` split at top-level commas.
    fn items(&self, tokens: &[TokenWithSpan], open: usize, close: usize) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        let mut start = open + 1;
        let mut k = open + 1;
        while k < close {
            if let Some(c) = self.close[k] {
                k = c + 1;
                continue;
            }
            if tokens[self.at[k]].token == Token::Comma {
                out.push(start..k);
                start = k + 1;
            }
            k += 1;
        }
        if start < close {
            out.push(start..close);
        }
        out
    }
}

fn json_tables(tokens: &mut Vec<TokenWithSpan>, lines: &LineIndex, aside: &mut JsonTableAside) {
    // Note: most queries have neither call; they are parsed as tokenized.
    if !tokens
        .iter()
        .any(|t| is_word(t, "JSON_TABLE") || is_word(t, "JSON_ARRAY"))
    {
        return;
    }
    let view = View::new(tokens);
    let mut edits = Edits {
        drop: vec![false; tokens.len()],
        insert: Vec::new(),
    };
    for k in 0..view.at.len().saturating_sub(1) {
        let call = is_word(&tokens[view.at[k]], "JSON_TABLE")
            && tokens[view.at[k + 1]].token == Token::LParen;
        if let (true, Some(close)) = (call, view.close.get(k + 1).copied().flatten()) {
            table(tokens, &view, k + 1, close, lines, aside, &mut edits);
        }
        // Note: `JSON_ARRAY(SELECT …)` builds an array of the query's rows; parenthesized,
        // sqlparser reads the query as the call's one argument, typed like the server types
        // the query's one column.
        let array = is_word(&tokens[view.at[k]], "JSON_ARRAY")
            && tokens[view.at[k + 1]].token == Token::LParen
            && view.at.get(k + 2).is_some_and(|&q| {
                ["SELECT", "VALUES", "WITH"]
                    .iter()
                    .any(|w| is_word(&tokens[q], w))
            });
        if let (true, Some(close)) = (array, view.close.get(k + 1).copied().flatten()) {
            let (open_at, close_at) = (view.at[k + 1], view.at[close]);
            edits.insert.push((
                open_at + 1,
                vec![TokenWithSpan {
                    token: Token::LParen,
                    span: tokens[open_at].span,
                }],
            ));
            edits.insert.push((
                close_at,
                vec![TokenWithSpan {
                    token: Token::RParen,
                    span: tokens[close_at].span,
                }],
            ));
        }
    }
    if edits.drop.iter().all(|d| !d) && edits.insert.is_empty() {
        return;
    }
    let mut out = Vec::with_capacity(tokens.len());
    edits.insert.sort_by_key(|(i, _)| *i);
    let mut inserts = edits.insert.into_iter().peekable();
    for (i, t) in std::mem::take(tokens).into_iter().enumerate() {
        while let Some((_, add)) = inserts.next_if(|(at, _)| *at == i) {
            out.extend(add);
        }
        if !edits.drop[i] {
            out.push(t);
        }
    }
    *tokens = out;
}

/// The byte range of the view positions `from..to`.
fn bytes(
    tokens: &[TokenWithSpan],
    view: &View,
    lines: &LineIndex,
    from: usize,
    to: usize,
) -> Option<Range<usize>> {
    let first = lines.range(tokens[*view.at.get(from)?].span)?;
    let last = lines.range(tokens[*view.at.get(to.checked_sub(1)?)?].span)?;
    Some(first.start..last.end)
}

fn drop(view: &View, edits: &mut Edits, from: usize, to: usize) {
    for k in from..to {
        edits.drop[view.at[k]] = true;
    }
}

/// One `JSON_TABLE(…)` whose parentheses are at view positions `open` and `close`.
fn table(
    tokens: &[TokenWithSpan],
    view: &View,
    open: usize,
    close: usize,
    lines: &LineIndex,
    aside: &mut JsonTableAside,
    edits: &mut Edits,
) {
    let word = |k: usize, w: &str| k < close && is_word(&tokens[view.at[k]], w);
    // The path is the first token after the first top-level comma.
    let Some(comma) = view.items(tokens, open, close).first().map(|r| r.end) else {
        return;
    };
    let mut k = comma + 2;
    if word(k, "AS") {
        if let Some(&at) = view.at.get(k + 1) {
            aside.path_names.extend(named(tokens, at, lines));
        }
        drop(view, edits, k, k + 2);
        k += 2;
    }
    let Some(columns) = (k..close).find(|&c| word(c, "COLUMNS")) else {
        return;
    };
    if word(k, "PASSING") {
        if let Some(range) = bytes(tokens, view, lines, k + 1, columns) {
            aside.passing.push(range);
        }
        drop(view, edits, k, columns);
    }
    let Some(list_close) = view.close.get(columns + 1).copied().flatten() else {
        return;
    };
    column_list(tokens, view, columns + 1, list_close, lines, aside, edits);
    // The table's `… ON ERROR` behaviour.
    if list_close + 1 < close
        && let Some(range) = bytes(tokens, view, lines, list_close + 1, close)
    {
        aside.behaviors.push(range);
    }
    drop(view, edits, list_close + 1, close);
}

/// The column definitions in the parentheses at `open`..`close`.
fn column_list(
    tokens: &[TokenWithSpan],
    view: &View,
    open: usize,
    close: usize,
    lines: &LineIndex,
    aside: &mut JsonTableAside,
    edits: &mut Edits,
) {
    for item in view.items(tokens, open, close) {
        let word = |k: usize, w: &str| k < item.end && is_word(&tokens[view.at[k]], w);
        let start = item.start;
        if word(start, "NESTED") {
            let path = if word(start + 1, "PATH") {
                start + 2
            } else {
                start + 1
            };
            if word(path + 1, "AS") {
                if let Some(&at) = view.at.get(path + 2) {
                    aside.path_names.extend(named(tokens, at, lines));
                }
                drop(view, edits, path + 1, path + 3);
            }
            if let Some(c) = (path + 1..item.end).find(|&c| word(c, "COLUMNS"))
                && let Some(inner_close) = view.close.get(c + 1).copied().flatten()
            {
                column_list(tokens, view, c + 1, inner_close, lines, aside, edits);
            }
            continue;
        }
        if word(start + 1, "FOR") {
            continue;
        }
        // The type runs to the first clause word (`WITH TIME ZONE` is part of a type).
        let clause = |k: usize| {
            [
                "FORMAT", "EXISTS", "PATH", "WITHOUT", "KEEP", "OMIT", "NULL", "ERROR", "DEFAULT",
                "EMPTY", "TRUE", "FALSE", "UNKNOWN",
            ]
            .iter()
            .any(|w| word(k, w))
                || (word(k, "WITH") && !word(k + 1, "TIME") && !word(k + 1, "LOCAL"))
        };
        let mut k = start + 1;
        while k < item.end && !clause(k) {
            k = view.close[k].map_or(k + 1, |c| c + 1);
        }
        if word(k, "FORMAT") {
            let end = if word(k + 2, "ENCODING") {
                k + 4
            } else {
                k + 2
            };
            drop(view, edits, k, end.min(item.end));
            k = end;
        }
        if word(k, "EXISTS") {
            k += 1;
        }
        if word(k, "PATH") {
            k += 2;
        } else {
            let at = view.at[k.min(item.end)];
            let span = tokens[view.at[k.min(item.end) - 1]].span;
            edits.insert.push((
                at,
                vec![
                    TokenWithSpan {
                        token: Token::Whitespace(sqlparser::tokenizer::Whitespace::Space),
                        span,
                    },
                    TokenWithSpan {
                        token: Token::make_keyword("PATH"),
                        span,
                    },
                    TokenWithSpan {
                        token: Token::SingleQuotedString("$".into()),
                        span,
                    },
                    TokenWithSpan {
                        token: Token::Whitespace(sqlparser::tokenizer::Whitespace::Space),
                        span,
                    },
                ],
            ));
        }
        // Wrapper, quotes and behaviours: a DEFAULT value runs to its `ON`.
        let name_at = lines.range(tokens[view.at[start]].span).map(|r| r.start);
        let mut d = k;
        while d < item.end {
            if word(d, "DEFAULT") {
                let mut e = d + 1;
                while e < item.end && !word(e, "ON") {
                    e = view.close[e].map_or(e + 1, |c| c + 1);
                }
                if let (Some(at), Some(range)) = (name_at, bytes(tokens, view, lines, d + 1, e)) {
                    aside.defaults.push((at, range));
                }
                d = e;
            } else {
                d += 1;
            }
        }
        drop(view, edits, k.min(item.end), item.end);
    }
}
