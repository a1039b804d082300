//! The lexical pieces of SQL text that every scanner in the crate steps over without reading
//! them: quoted strings and identifiers, dollar-quoted strings and (nested) block comments.
//! The `qail!` capture scanner, the statement splitter, the parser's pre-pass and the
//! language server's tolerant reader all skip these the same way, so they agree on where a
//! string or comment ends.

/// Letters, `_` and every byte of a multi-byte character start an identifier.
pub fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

/// The end of a quoted token opening at `i` (a doubled quote is an escaped quote; with
/// `backslash`, as in an `E'…'` string, `\` escapes the next byte).
pub fn quoted_end(b: &[u8], i: usize, quote: u8, backslash: bool) -> usize {
    let mut j = i + 1;
    while let Some(&c) = b.get(j) {
        if backslash && c == b'\\' {
            j += 2;
        } else if c == quote {
            if b.get(j + 1) == Some(&quote) {
                j += 2;
            } else {
                return j + 1;
            }
        } else {
            j += 1;
        }
    }
    b.len()
}

/// The end of a dollar-quoted string opening at `i`, or `None` when the `$` does not open
/// one (a parameter `$1`, an operator).
pub fn dollar_quote_end(text: &str, i: usize) -> Option<usize> {
    let b = text.as_bytes();
    let tag_len = b[i + 1..]
        .iter()
        .take_while(|&&c| is_ident_start(c) || c.is_ascii_digit())
        .count();
    if tag_len > 0 && !is_ident_start(b[i + 1]) {
        return None;
    }
    if b.get(i + 1 + tag_len) != Some(&b'$') {
        return None;
    }
    let tag = &text[i..i + tag_len + 2];
    let body = i + tag.len();
    Some(
        text[body..]
            .find(tag)
            .map_or(text.len(), |n| body + n + tag.len()),
    )
}

/// The end of a block comment opening at `i`; block comments nest, as in PostgreSQL.
pub fn block_comment_end(b: &[u8], i: usize) -> usize {
    let mut depth = 0usize;
    let mut j = i;
    while j < b.len() {
        match (b[j], b.get(j + 1)) {
            (b'/', Some(b'*')) => {
                depth += 1;
                j += 2;
            }
            (b'*', Some(b'/')) => {
                depth -= 1;
                j += 2;
                if depth == 0 {
                    return j;
                }
            }
            _ => j += 1,
        }
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_comments_and_dollar_strings_end_where_postgres_ends_them() {
        assert_eq!(quoted_end(b"'it''s' x", 0, b'\'', false), 7);
        assert_eq!(quoted_end(br"'a\'b' x", 0, b'\'', true), 6);
        assert_eq!(quoted_end(b"'open", 0, b'\'', false), 5);
        assert_eq!(dollar_quote_end("$t$ a $ b $t$ x", 0), Some(13));
        assert_eq!(dollar_quote_end("$$x$$", 0), Some(5));
        assert_eq!(dollar_quote_end("$1 + 2", 0), None);
        assert_eq!(block_comment_end(b"/* a /* b */ c */ x", 0), 17);
        assert_eq!(block_comment_end(b"/* open", 0), 7);
    }
}
