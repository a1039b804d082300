//! The column and constraint forms of PostgreSQL 18 (and the generated-column form it made
//! the default) that sqlparser 0.59 does not parse, rewritten in the tokens into what it does
//! parse with the same effect on a snapshot:
//! - `GENERATED ALWAYS AS (expr) VIRTUAL`, and `GENERATED ALWAYS AS (expr)` alone (virtual
//!   from 18): read as `… STORED`. A snapshot records the generation expression either way,
//!   as `schema pull` does; the statement is flagged, for a warning where the target range
//!   includes versions before 18 (which refuse it);
//! - `WITHOUT OVERLAPS` after a key's last column: the key's columns are the same;
//! - `PERIOD` before a foreign key's last column, on either side: the same columns;
//! - `ENFORCED` (the default) goes; `NOT ENFORCED` goes from a foreign key (which PostgreSQL
//!   records all the same), and makes a `CHECK` have no effect (PostgreSQL does not enforce
//!   it, so a `CHECK (c IS NOT NULL) NOT ENFORCED` does not make `c` non-null). A primary key
//!   or unique constraint cannot be `NOT ENFORCED`: refused, as the server refuses it.

use sqlparser::parser::ParserError;
use sqlparser::tokenizer::{Token, TokenWithSpan};

fn word(t: Option<&TokenWithSpan>, w: &str) -> bool {
    matches!(t.map(|t| &t.token), Some(Token::Word(x))
        if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

fn is(t: Option<&TokenWithSpan>, token: &Token) -> bool {
    t.is_some_and(|t| t.token == *token)
}

/// The index of the `)` closing the `(` at `open`.
fn close_of(tokens: &[TokenWithSpan], open: usize) -> Option<usize> {
    let mut depth = 0_usize;
    for (k, t) in tokens.iter().enumerate().skip(open) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// The index of the `(` opening the `)` at `close`.
fn open_of(tokens: &[TokenWithSpan], close: usize) -> Option<usize> {
    let mut depth = 0_usize;
    for k in (0..=close).rev() {
        match tokens[k].token {
            Token::RParen => depth += 1,
            Token::LParen => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// Rewrites the forms above in `tokens` (whitespace already removed); whether the statement
/// declares a virtual generated column (a form PostgreSQL 18 added).
pub(crate) fn rewrite(tokens: &mut Vec<TokenWithSpan>) -> Result<bool, ParserError> {
    let virtual_column = generated(tokens);
    let mut i = 0;
    while i < tokens.len() {
        let key_end = is(tokens.get(i + 2), &Token::RParen);
        if word(tokens.get(i), "WITHOUT") && word(tokens.get(i + 1), "OVERLAPS") && key_end {
            tokens.drain(i..i + 2);
            continue;
        }
        let column_next = matches!(tokens.get(i + 1).map(|t| &t.token), Some(Token::Word(_)));
        let list_item = i > 0 && matches!(tokens[i - 1].token, Token::Comma | Token::LParen);
        if word(tokens.get(i), "PERIOD")
            && column_next
            && list_item
            && key_end
            && foreign_key_list(tokens, i + 2)
        {
            tokens.remove(i);
            continue;
        }
        i += 1;
    }
    enforced(tokens)?;
    Ok(virtual_column)
}

/// Whether the list closed at `close` is a foreign key's: after `FOREIGN KEY` or after the
/// table `REFERENCES` names (a column named `period` of a table's last column is not).
fn foreign_key_list(tokens: &[TokenWithSpan], close: usize) -> bool {
    let Some(open) = open_of(tokens, close) else {
        return false;
    };
    let name = |k: usize| {
        matches!(tokens[k].token, Token::Word(_) | Token::Period)
            && !word(tokens.get(k), "REFERENCES")
    };
    word(tokens.get(open.wrapping_sub(1)), "KEY")
        || (2..=4).any(|back| {
            open >= back
                && word(tokens.get(open - back), "REFERENCES")
                && (open - back + 1..open).all(name)
        })
}

/// `GENERATED ALWAYS AS (…)` followed by `VIRTUAL` or by neither `STORED` nor `VIRTUAL`;
/// whether there was one.
fn generated(tokens: &mut Vec<TokenWithSpan>) -> bool {
    let mut seen = false;
    let mut i = 0;
    while i + 3 < tokens.len() {
        let expression = word(tokens.get(i), "GENERATED")
            && word(tokens.get(i + 1), "ALWAYS")
            && word(tokens.get(i + 2), "AS")
            && is(tokens.get(i + 3), &Token::LParen);
        if let (true, Some(close)) = (expression, close_of(tokens, i + 3)) {
            let span = tokens[close].span;
            let stored = TokenWithSpan {
                token: Token::make_keyword("STORED"),
                span,
            };
            if word(tokens.get(close + 1), "VIRTUAL") {
                tokens[close + 1] = stored;
                seen = true;
            } else if !word(tokens.get(close + 1), "STORED") {
                tokens.insert(close + 1, stored);
                seen = true;
            }
            i = close + 1;
        } else {
            i += 1;
        }
    }
    seen
}

/// `[NOT] ENFORCED` after a constraint.
fn enforced(tokens: &mut Vec<TokenWithSpan>) -> Result<(), ParserError> {
    let mut i = tokens.len();
    while i > 0 {
        i -= 1;
        if !word(tokens.get(i), "ENFORCED") || i == 0 {
            continue;
        }
        let not = word(tokens.get(i - 1), "NOT");
        let start = if not { i - 1 } else { i };
        let Some(before) = start.checked_sub(1) else {
            continue;
        };
        // Note: a column named `enforced` is no characteristic: one ends a constraint, so it
        // follows no `(` or `,` and precedes the end of the item or another characteristic.
        let ends = match tokens.get(i + 1).map(|t| &t.token) {
            None | Some(Token::Comma | Token::RParen | Token::SemiColon | Token::EOF) => true,
            Some(Token::Word(_)) => ["DEFERRABLE", "INITIALLY", "NOT", "NO"]
                .iter()
                .any(|w| word(tokens.get(i + 1), w)),
            _ => false,
        };
        if !ends || matches!(tokens[before].token, Token::LParen | Token::Comma) {
            continue;
        }
        let check = if is(tokens.get(before), &Token::RParen) {
            open_of(tokens, before)
                .filter(|&open| open > 0 && word(tokens.get(open - 1), "CHECK"))
                .map(|open| (open, before))
        } else {
            None
        };
        let key = word(tokens.get(before), "KEY")
            || word(tokens.get(before), "UNIQUE")
            || (is(tokens.get(before), &Token::RParen)
                && open_of(tokens, before).is_some_and(|open| {
                    open > 0
                        && (word(tokens.get(open - 1), "KEY")
                            || word(tokens.get(open - 1), "UNIQUE"))
                }));
        if not && key {
            return Err(ParserError::ParserError(
                "primary key and unique constraints cannot be marked NOT ENFORCED".into(),
            ));
        }
        tokens.drain(start..=i);
        if let (true, Some((open, close))) = (not, check) {
            let span = tokens[open].span;
            tokens.splice(
                open + 1..close,
                [TokenWithSpan {
                    token: Token::make_keyword("TRUE"),
                    span,
                }],
            );
        }
        i = start;
    }
    Ok(())
}
