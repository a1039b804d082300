//! A tolerant reading of SQL that is being typed: tokens, and the relations a statement names
//! in FROM, JOIN, UPDATE, INTO and USING with their aliases and outer-join sides.
//!
//! Completion runs on text that does not parse (`SELECT o. FROM harbors o`), so it cannot wait
//! for the analyzer; this reading never fails.

use qail_schema::script::lex::{dollar_quote_end, quoted_end};
use std::ops::Range;

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A name or keyword; `quoted` for `"Name"`.
    Word { quoted: bool },
    /// A string constant (`'…'`, `E'…'`, `$$…$$`); may be unterminated at the end of text.
    Str,
    /// A number.
    Number,
    /// `$n` or a `{name}` capture.
    Param,
    /// `.`
    Dot,
    /// `,`
    Comma,
    /// `(`
    Open,
    /// `)`
    Close,
    /// `::`
    Cast,
    /// Any other operator or punctuation (`=`, `<>`, `;`, `[`…).
    Op,
}

/// A token: its kind and byte range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    pub(crate) kind: Kind,
    pub(crate) range: Range<usize>,
}

impl Token {
    /// The token's text in `sql`.
    pub(crate) fn text<'s>(&self, sql: &'s str) -> &'s str {
        &sql[self.range.clone()]
    }

    /// The name a word stands for: unquoted words fold to lower case, as PostgreSQL does.
    pub(crate) fn name(&self, sql: &str) -> String {
        let text = self.text(sql);
        match self.kind {
            Kind::Word { quoted: true } => text
                .strip_prefix('"')
                .map(|t| t.strip_suffix('"').unwrap_or(t))
                .unwrap_or(text)
                .replace("\"\"", "\""),
            _ => text.to_lowercase(),
        }
    }

    /// Whether this is the unquoted keyword `kw` (upper case).
    pub(crate) fn is(&self, sql: &str, kw: &str) -> bool {
        self.kind == (Kind::Word { quoted: false }) && self.text(sql).eq_ignore_ascii_case(kw)
    }
}

/// Cuts `sql` into tokens; comments and white space are dropped. Unterminated strings,
/// quoted names and comments run to the end.
pub(crate) fn tokens(sql: &str) -> Vec<Token> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let c = b[i];
        let kind = match c {
            _ if c.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                i = sql[i..].find('\n').map_or(b.len(), |n| i + n);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = sql[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
                continue;
            }
            b'\'' => {
                i = quoted_end(b, i, b'\'', false);
                Kind::Str
            }
            b'E' | b'e' if b.get(i + 1) == Some(&b'\'') => {
                i = quoted_end(b, i + 1, b'\'', true);
                Kind::Str
            }
            b'"' => {
                i = quoted_end(b, i, b'"', false);
                Kind::Word { quoted: true }
            }
            b'$' => {
                let digits = b[i + 1..].iter().take_while(|d| d.is_ascii_digit()).count();
                if digits > 0 {
                    i += 1 + digits;
                    Kind::Param
                } else {
                    i = dollar_quote_end(sql, i).unwrap_or(i + 1);
                    Kind::Str
                }
            }
            b'{' => {
                i = sql[i..].find('}').map_or(b.len(), |n| i + n + 1);
                Kind::Param
            }
            b'.' if b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                i = number_end(b, i);
                Kind::Number
            }
            b'.' => {
                i += 1;
                Kind::Dot
            }
            b',' => {
                i += 1;
                Kind::Comma
            }
            b'(' => {
                i += 1;
                Kind::Open
            }
            b')' => {
                i += 1;
                Kind::Close
            }
            b':' if b.get(i + 1) == Some(&b':') => {
                i += 2;
                Kind::Cast
            }
            _ if c.is_ascii_digit() => {
                i = number_end(b, i);
                Kind::Number
            }
            _ if is_word_start(sql, i) => {
                i = word_end(sql, i);
                Kind::Word { quoted: false }
            }
            _ if c < 0x80 => {
                i += 1;
                while i < b.len() && b"+-*/<>=~!@#%^&|`?".contains(&b[i]) && c != b';' {
                    i += 1;
                }
                Kind::Op
            }
            _ => {
                i += sql[i..].chars().next().map_or(1, char::len_utf8);
                Kind::Op
            }
        };
        out.push(Token {
            kind,
            range: start..i,
        });
    }
    out
}

fn is_word_start(sql: &str, i: usize) -> bool {
    sql[i..]
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// The end of the word starting at `i`.
pub(crate) fn word_end(sql: &str, i: usize) -> usize {
    sql[i..]
        .char_indices()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .map_or(sql.len(), |(n, _)| i + n)
}

/// The start of the word that ends at `i` (`i` when there is none).
pub(crate) fn word_start(sql: &str, i: usize) -> usize {
    sql[..i]
        .char_indices()
        .rev()
        .take_while(|&(_, c)| c.is_alphanumeric() || c == '_')
        .last()
        .map_or(i, |(n, _)| n)
}

fn number_end(b: &[u8], start: usize) -> usize {
    let mut i = start;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.' || b[i] == b'_') {
        i += 1;
    }
    i
}

/// Words that end a table reference: a word after a relation's name that is one of these is
/// not its alias.
const NOT_ALIAS: &[&str] = &[
    "WHERE",
    "JOIN",
    "LEFT",
    "RIGHT",
    "FULL",
    "INNER",
    "CROSS",
    "NATURAL",
    "ON",
    "USING",
    "GROUP",
    "ORDER",
    "LIMIT",
    "OFFSET",
    "SET",
    "VALUES",
    "RETURNING",
    "UNION",
    "EXCEPT",
    "INTERSECT",
    "WINDOW",
    "HAVING",
    "FOR",
    "DEFAULT",
    "SELECT",
    "OUTER",
    "TABLESAMPLE",
    "FETCH",
    "WITH",
    "AS",
    "OVERRIDING",
    "ON",
    "DO",
];

/// A relation named by the statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RelRef {
    /// The schema written before the name, if any.
    pub(crate) schema: Option<String>,
    /// The relation's name; `None` for a derived table `(SELECT …) AS x`.
    pub(crate) name: Option<String>,
    /// The alias, if any.
    pub(crate) alias: Option<String>,
    /// Bytes of the name (with its schema) or of the derived table.
    pub(crate) range: Range<usize>,
    /// Why its columns may be NULL: `right side of LEFT JOIN harbors AS origin`, in the
    /// analyzer's words.
    pub(crate) null_reason: Option<String>,
}

impl RelRef {
    /// The name the statement refers to it by: the alias, else the name.
    pub(crate) fn visible(&self) -> Option<&str> {
        self.alias.as_deref().or(self.name.as_deref())
    }

    /// `harbors AS origin` or `harbors`, as the analyzer labels relations.
    pub(crate) fn label(&self) -> String {
        let name = self.name.as_deref().unwrap_or("(subquery)");
        match &self.alias {
            Some(a) => format!("{name} AS {a}"),
            None => name.to_owned(),
        }
    }
}

/// The relations `tokens` name, in order. A RIGHT or FULL JOIN marks the relations before it
/// in the same parenthesis level; a LEFT or FULL JOIN marks the one it joins.
pub(crate) fn relations(sql: &str, tokens: &[Token]) -> Vec<RelRef> {
    let mut out: Vec<RelRef> = Vec::new();
    // Index in `out` where the FROM list of each open parenthesis level starts.
    let mut level_start = vec![0usize];
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        match t.kind {
            Kind::Open => level_start.push(out.len()),
            Kind::Close if level_start.len() > 1 => {
                level_start.pop();
            }
            _ => {}
        }
        let clause = ["FROM", "JOIN", "UPDATE", "INTO", "USING"]
            .into_iter()
            .find(|kw| t.is(sql, kw));
        let Some(clause) = clause else {
            i += 1;
            continue;
        };
        if clause == "USING" && tokens.get(i + 1).is_some_and(|n| n.kind == Kind::Open) {
            i += 1;
            continue;
        }
        let join = (clause == "JOIN").then(|| join_word(sql, tokens, i));
        let start = *level_start.last().unwrap_or(&0);
        let mut j = i + 1;
        while let Some((mut rel, next)) = table_ref(sql, tokens, j) {
            if let Some(word @ ("RIGHT" | "FULL")) = join {
                let label = rel.label();
                for earlier in &mut out[start..] {
                    earlier
                        .null_reason
                        .get_or_insert_with(|| format!("left side of {word} JOIN {label}"));
                }
            }
            if let Some(word @ ("LEFT" | "FULL")) = join {
                rel.null_reason = Some(format!("right side of {word} JOIN {}", rel.label()));
            }
            out.push(rel);
            j = next;
            let more = clause == "FROM" && tokens.get(j).is_some_and(|n| n.kind == Kind::Comma);
            if !more {
                break;
            }
            j += 1;
        }
        // Note: the tokens of the references are read again (a derived table's FROM names
        // relations too); none of them starts a clause.
        i += 1;
    }
    out
}

/// `LEFT`, `RIGHT`, `FULL` or `INNER` for the JOIN at `at`.
fn join_word(sql: &str, tokens: &[Token], at: usize) -> &'static str {
    let before = |n: usize| at.checked_sub(n).map(|k| &tokens[k]);
    let word = match before(1) {
        Some(t) if t.is(sql, "OUTER") => before(2),
        other => other,
    };
    ["LEFT", "RIGHT", "FULL"]
        .into_iter()
        .find(|w| word.is_some_and(|t| t.is(sql, w)))
        .unwrap_or("INNER")
}

/// The table reference starting at token `i`, and the index after it.
fn table_ref(sql: &str, tokens: &[Token], mut i: usize) -> Option<(RelRef, usize)> {
    while tokens
        .get(i)
        .is_some_and(|t| t.is(sql, "ONLY") || t.is(sql, "LATERAL"))
    {
        i += 1;
    }
    let first = tokens.get(i)?;
    let (schema, name, range, mut j) = match first.kind {
        Kind::Word { .. } if !is_reserved(sql, first) => {
            if tokens.get(i + 1).is_some_and(|t| t.kind == Kind::Dot)
                && let Some(second) = tokens
                    .get(i + 2)
                    .filter(|t| matches!(t.kind, Kind::Word { .. }))
            {
                (
                    Some(first.name(sql)),
                    Some(second.name(sql)),
                    first.range.start..second.range.end,
                    i + 3,
                )
            } else {
                (None, Some(first.name(sql)), first.range.clone(), i + 1)
            }
        }
        Kind::Open => {
            let close = matching_close(tokens, i);
            (
                None,
                None,
                first.range.start..tokens.get(close).map_or(sql.len(), |t| t.range.end),
                close + 1,
            )
        }
        _ => return None,
    };
    // A function in FROM: `generate_series(1, 3) AS g`.
    if name.is_some() && tokens.get(j).is_some_and(|t| t.kind == Kind::Open) {
        j = matching_close(tokens, j) + 1;
    }
    let mut alias = None;
    if tokens.get(j).is_some_and(|t| t.is(sql, "AS")) {
        j += 1;
    }
    if let Some(t) = tokens.get(j)
        && matches!(t.kind, Kind::Word { .. })
        && !is_reserved(sql, t)
    {
        alias = Some(t.name(sql));
        j += 1;
        // Column aliases: `AS x(a, b)`.
        if tokens.get(j).is_some_and(|t| t.kind == Kind::Open) {
            j = matching_close(tokens, j) + 1;
        }
    }
    Some((
        RelRef {
            schema,
            name,
            alias,
            range,
            null_reason: None,
        },
        j,
    ))
}

fn is_reserved(sql: &str, t: &Token) -> bool {
    NOT_ALIAS.iter().any(|kw| t.is(sql, kw))
}

/// The index of the `)` matching the `(` at `open` (the last token when unclosed).
pub(crate) fn matching_close(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0usize;
    for (k, t) in tokens.iter().enumerate().skip(open) {
        match t.kind {
            Kind::Open => depth += 1,
            Kind::Close => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rels(sql: &str) -> Vec<(Option<String>, Option<String>, Option<String>)> {
        relations(sql, &tokens(sql))
            .into_iter()
            .map(|r| (r.name, r.alias, r.null_reason))
            .collect()
    }

    fn s(x: &str) -> Option<String> {
        Some(x.to_owned())
    }

    #[test]
    fn incomplete_statements_still_name_their_relations() {
        let sql = "SELECT o. FROM harbors o LEFT JOIN operators AS op ON op.id = o.";
        assert_eq!(
            rels(sql),
            [
                (s("harbors"), s("o"), None),
                (
                    s("operators"),
                    s("op"),
                    s("right side of LEFT JOIN operators AS op")
                ),
            ]
        );
    }

    #[test]
    fn lists_subqueries_and_right_joins() {
        let sql = "SELECT 1 FROM a, public.b x, (SELECT 1) AS d RIGHT OUTER JOIN c USING (id) WHERE 'FROM z' = $1";
        let r = relations(sql, &tokens(sql));
        assert_eq!(r.len(), 4);
        assert_eq!(r[1].schema.as_deref(), Some("public"));
        assert_eq!(r[2].name, None);
        assert_eq!(r[2].alias.as_deref(), Some("d"));
        assert_eq!(
            r[0].null_reason.as_deref(),
            Some("left side of RIGHT JOIN c")
        );
        assert_eq!(r[3].null_reason, None);
    }

    #[test]
    fn tokens_know_strings_params_and_names() {
        let sql = "SELECT \"Odd\"\"Name\", E'a\\'b', $1, {x}, a::int4 -- c\n FROM t";
        let kinds: Vec<Kind> = tokens(sql).into_iter().map(|t| t.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::Word { quoted: false },
                Kind::Word { quoted: true },
                Kind::Comma,
                Kind::Str,
                Kind::Comma,
                Kind::Param,
                Kind::Comma,
                Kind::Param,
                Kind::Comma,
                Kind::Word { quoted: false },
                Kind::Cast,
                Kind::Word { quoted: false },
                Kind::Word { quoted: false },
                Kind::Word { quoted: false },
            ]
        );
        assert_eq!(tokens(sql)[1].name(sql), "Odd\"Name");
    }
}
