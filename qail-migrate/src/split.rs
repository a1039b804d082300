//! Splitting a file into statements, for migrations that run outside a transaction.
//!
//! Note: PostgreSQL runs the statements of one simple-protocol Query message in an implicit
//! transaction block, where `CREATE INDEX CONCURRENTLY`, `VACUUM` or `ALTER TYPE … ADD VALUE`
//! (before 12) are refused; so a non-transactional file is sent one statement at a time.
//! The lexer knows just enough SQL to find the semicolons that end statements: quoted
//! strings (`'…'`, `E'…'` with backslash escapes), quoted identifiers, dollar quoting
//! (`$tag$…$tag$`), line comments and nested block comments.

/// The statements of `sql`, each without its `;`, skipping ones that hold only whitespace and
/// comments.
pub(crate) fn statements(sql: &str) -> Vec<&str> {
    let bytes = sql.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut i) = (0, 0);
    let mut code = false;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                i = memchr_from(bytes, b'\n', i).map_or(bytes.len(), |n| n + 1);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = block_comment_end(bytes, i);
                continue;
            }
            b'\'' => {
                let escapes = i > 0
                    && matches!(bytes.get(i - 1), Some(b'e' | b'E'))
                    && !bytes
                        .get(i.wrapping_sub(2))
                        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
                i = quoted_end(bytes, i, b'\'', escapes);
            }
            b'"' => i = quoted_end(bytes, i, b'"', false),
            b'$' => i = dollar_end(sql, i),
            b';' => {
                if code {
                    out.push(sql[start..i].trim());
                }
                code = false;
                i += 1;
                start = i;
                continue;
            }
            _ => i += 1,
        }
        if !b.is_ascii_whitespace() {
            code = true;
        }
    }
    if code {
        out.push(sql[start..].trim());
    }
    out
}

fn memchr_from(bytes: &[u8], needle: u8, from: usize) -> Option<usize> {
    bytes
        .get(from..)?
        .iter()
        .position(|&b| b == needle)
        .map(|p| p + from)
}

/// The index after the block comment opening at `i` (comments nest in PostgreSQL).
fn block_comment_end(bytes: &[u8], mut i: usize) -> usize {
    let mut depth = 0_usize;
    while i < bytes.len() {
        match (bytes.get(i), bytes.get(i + 1)) {
            (Some(b'/'), Some(b'*')) => {
                depth += 1;
                i += 2;
            }
            (Some(b'*'), Some(b'/')) => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The index after the quoted string or identifier opening at `i` (a doubled quote is part
/// of it; with `escapes`, so is a backslash-escaped character).
fn quoted_end(bytes: &[u8], mut i: usize, quote: u8, escapes: bool) -> usize {
    i += 1;
    while let Some(&b) = bytes.get(i) {
        if escapes && b == b'\\' {
            i += 2;
        } else if b == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
            } else {
                return i + 1;
            }
        } else {
            i += 1;
        }
    }
    bytes.len()
}

/// The index after the dollar-quoted string opening at `i`, or `i + 1` when the `$` opens none
/// (a parameter `$1`, or part of an identifier).
fn dollar_end(sql: &str, i: usize) -> usize {
    let rest = &sql[i + 1..];
    let tag_len = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let after_identifier = sql[..i]
        .chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric() || c == '_');
    if after_identifier
        || !rest[tag_len..].starts_with('$')
        || rest.starts_with(|c: char| c.is_ascii_digit())
    {
        return i + 1;
    }
    let delimiter = &sql[i..i + tag_len + 2];
    let body = i + delimiter.len();
    sql[body..]
        .find(delimiter)
        .map_or(sql.len(), |end| body + end + delimiter.len())
}

#[cfg(test)]
mod tests {
    use super::statements;

    #[test]
    fn splits_on_semicolons_outside_quotes_and_comments() {
        let sql = "-- qail:no-transaction\n\
                   CREATE INDEX CONCURRENTLY i ON t (a);\n\
                   INSERT INTO t VALUES ('a;b', E'c\\';d', \"x;y\");\n\
                   /* a; /* nested; */ still; */ SELECT 1;\n\
                   CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql;\n\
                   SELECT $$;$$, $1;\n\
                   -- only a comment;\n";
        assert_eq!(
            statements(sql),
            [
                "-- qail:no-transaction\nCREATE INDEX CONCURRENTLY i ON t (a)",
                "INSERT INTO t VALUES ('a;b', E'c\\';d', \"x;y\")",
                "/* a; /* nested; */ still; */ SELECT 1",
                "CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql",
                "SELECT $$;$$, $1",
            ]
        );
    }

    #[test]
    fn keeps_a_last_statement_without_semicolon() {
        assert_eq!(statements("VACUUM t"), ["VACUUM t"]);
        assert!(statements("  -- nothing\n /* here */ ;; ").is_empty());
    }
}
