//! The SQL inside `qail!` invocations of a Rust file: each invocation's string literal, its
//! value (escapes decoded), where every byte of the value is in the file, and how many
//! positional arguments follow it (captures are numbered after them).
//!
//! The file is read at the level of Rust tokens (comments, strings, raw strings, character
//! literals and lifetimes are told apart), so a `qail!` in a comment or a string is not one.

use std::ops::Range;

use qail_analyzer::capture::ChoiceSpec;

/// The SQL literal of one `qail!` invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Embedded {
    /// The literal's value: the SQL as written.
    pub(crate) sql: String,
    /// `map[i]` is the file offset of byte `i` of `sql` (an escape's bytes all map to its
    /// backslash); `map[sql.len()]` is the closing quote.
    pub(crate) map: Vec<usize>,
    /// The literal's bytes in the file, quotes included.
    pub(crate) literal: Range<usize>,
    /// The number of positional arguments after the literal.
    pub(crate) positional: usize,
    /// The sort choices after them, each with the SQL of its arms.
    pub(crate) choices: Vec<ChoiceSpec>,
}

/// Every `qail!` invocation of `source` that has a string literal, in order.
pub(crate) fn embedded(source: &str) -> Vec<Embedded> {
    invocations(source).into_iter().map(|(_, e)| e).collect()
}

/// [`embedded`], each with the offset of its `qail` (where `line!()` in its expansion
/// points).
pub(crate) fn invocations(source: &str) -> Vec<(usize, Embedded)> {
    let mut lexer = Lexer { s: source, i: 0 };
    let mut out = Vec::new();
    let mut prev: Vec<Tok> = Vec::new();
    while let Some(tok) = lexer.next() {
        if tok.kind == TokKind::Open
            && let [.., a, b] = prev.as_slice()
            && a.kind == TokKind::Ident
            && &source[a.range.clone()] == "qail"
            && b.kind == TokKind::Bang
            && let Some(e) = invocation(&mut lexer, source)
        {
            out.push((a.range.start, e));
        }
        prev.push(tok);
        if prev.len() > 2 {
            prev.remove(0);
        }
    }
    out
}

/// Reads an invocation's body after its opening delimiter: the first string literal at the top
/// level before any `,`, then the arguments after it: positional ones counted, sort choices
/// (`name = match value { Pattern => "SQL", … }`) read.
fn invocation(lexer: &mut Lexer<'_>, source: &str) -> Option<Embedded> {
    let mut depth = 0usize;
    let mut literal: Option<Embedded> = None;
    let mut argument: Vec<(Tok, usize)> = Vec::new();
    let mut arguments: Vec<Vec<(Tok, usize)>> = Vec::new();
    while let Some(tok) = lexer.next() {
        match tok.kind {
            TokKind::Open => depth += 1,
            TokKind::Close if depth == 0 => break,
            TokKind::Close => depth -= 1,
            TokKind::Comma if depth == 0 => {
                literal.as_ref()?;
                arguments.push(std::mem::take(&mut argument));
                continue;
            }
            TokKind::Str | TokKind::RawStr if depth == 0 && literal.is_none() => {
                literal = Some(decode(
                    source,
                    tok.range.clone(),
                    tok.kind == TokKind::RawStr,
                ));
                continue;
            }
            _ => {}
        }
        if literal.is_some() {
            let at = if tok.kind == TokKind::Open {
                depth - 1
            } else {
                depth
            };
            argument.push((tok, at));
        }
    }
    arguments.push(argument);
    let mut e = literal?;
    // `qail!("…", a, b,)`: a trailing comma adds no argument.
    for argument in arguments.iter().filter(|a| !a.is_empty()) {
        match choice(argument, source) {
            Some(spec) => e.choices.push(spec),
            None => e.positional += 1,
        }
    }
    Some(e)
}

/// The sort choice `name = match value { Pattern => "SQL", … }` that `argument` (its tokens,
/// each with its nesting depth) is, if it is one: its name and the SQL of each arm.
fn choice(argument: &[(Tok, usize)], source: &str) -> Option<ChoiceSpec> {
    let text = |t: &Tok| &source[t.range.clone()];
    let [(name, _), (eq, _), (matched, _), ..] = argument else {
        return None;
    };
    if name.kind != TokKind::Ident || text(eq) != "=" || text(matched) != "match" {
        return None;
    }
    let mut texts = Vec::new();
    for w in argument.windows(3) {
        let [(eq, _), (gt, _), (arm, 1)] = w else {
            continue;
        };
        if text(eq) == "=" && text(gt) == ">" && matches!(arm.kind, TokKind::Str | TokKind::RawStr)
        {
            texts.push(decode(source, arm.range.clone(), arm.kind == TokKind::RawStr).sql);
        }
    }
    Some(ChoiceSpec {
        name: text(name).to_owned(),
        texts,
    })
}

/// Decodes the literal at `range` (quotes included).
fn decode(source: &str, range: Range<usize>, raw: bool) -> Embedded {
    let text = &source[range.clone()];
    let mut sql = String::new();
    let mut map = Vec::new();
    if raw {
        let hashes = text[1..].bytes().take_while(|&b| b == b'#').count();
        let body_start = range.start + 2 + hashes;
        let body_end = range.end.saturating_sub(1 + hashes).max(body_start);
        let closed =
            text.ends_with(&format!("\"{}", "#".repeat(hashes))) && text.len() > 2 + hashes;
        let body_end = if closed { body_end } else { range.end };
        sql.push_str(&source[body_start..body_end]);
        map.extend(body_start..=body_end);
        return Embedded {
            sql,
            map,
            literal: range,
            positional: 0,
            choices: Vec::new(),
        };
    }
    let body_start = range.start + 1;
    let closed = text.len() > 1 && text.ends_with('"');
    let body_end = if closed { range.end - 1 } else { range.end };
    let body = &source[body_start..body_end];
    let mut chars = body.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let here = body_start + at;
        let decoded = match c {
            '\\' => match chars.next() {
                Some((_, 'n')) => Some('\n'),
                Some((_, 'r')) => Some('\r'),
                Some((_, 't')) => Some('\t'),
                Some((_, '0')) => Some('\0'),
                Some((_, '\\')) => Some('\\'),
                Some((_, '\'')) => Some('\''),
                Some((_, '"')) => Some('"'),
                Some((_, 'x')) => {
                    let hex: String = (0..2)
                        .filter_map(|_| chars.next().map(|(_, h)| h))
                        .collect();
                    u8::from_str_radix(&hex, 16).ok().map(char::from)
                }
                Some((_, 'u')) => {
                    let mut hex = String::new();
                    for (_, h) in chars.by_ref() {
                        if h == '}' {
                            break;
                        }
                        if h != '{' {
                            hex.push(h);
                        }
                    }
                    u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32)
                }
                Some((_, '\n' | '\r')) => {
                    // A line continuation: the newline and the next line's leading white space
                    // are not part of the value.
                    while chars.peek().is_some_and(|(_, w)| w.is_whitespace()) {
                        chars.next();
                    }
                    None
                }
                Some((_, other)) => Some(other),
                None => None,
            },
            '\r' if chars.peek().is_some_and(|(_, n)| *n == '\n') => None,
            other => Some(other),
        };
        if let Some(d) = decoded {
            let len = d.len_utf8();
            sql.push(d);
            if c == '\\' {
                map.extend(std::iter::repeat_n(here, len));
            } else {
                map.extend(here..here + len);
            }
        }
    }
    map.push(body_end);
    Embedded {
        sql,
        map,
        literal: range,
        positional: 0,
        choices: Vec::new(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokKind {
    Ident,
    Bang,
    Open,
    Close,
    Comma,
    Str,
    RawStr,
    Other,
}

#[derive(Debug)]
struct Tok {
    kind: TokKind,
    range: Range<usize>,
}

/// Just enough of Rust's lexer to find macro invocations and string literals.
struct Lexer<'s> {
    s: &'s str,
    i: usize,
}

impl Lexer<'_> {
    fn next(&mut self) -> Option<Tok> {
        let b = self.s.as_bytes();
        loop {
            while self.i < b.len() && b[self.i].is_ascii_whitespace() {
                self.i += 1;
            }
            if self.s[self.i..].starts_with("//") {
                self.i = self.s[self.i..].find('\n').map_or(b.len(), |n| self.i + n);
            } else if self.s[self.i..].starts_with("/*") {
                self.skip_block_comment();
            } else {
                break;
            }
        }
        let start = self.i;
        let c = *b.get(self.i)?;
        let kind = match c {
            b'"' => {
                self.i = string_end(b, self.i);
                TokKind::Str
            }
            b'r' if raw_start(b, self.i).is_some() => {
                self.i = raw_end(self.s, self.i);
                TokKind::RawStr
            }
            b'b' | b'c' if b.get(self.i + 1) == Some(&b'"') => {
                self.i = string_end(b, self.i + 1);
                TokKind::Other
            }
            b'b' | b'c'
                if raw_start(b, self.i + 1).is_some() && b.get(self.i + 1) == Some(&b'r') =>
            {
                self.i = raw_end(self.s, self.i + 1);
                TokKind::Other
            }
            b'\'' => {
                self.char_or_lifetime();
                TokKind::Other
            }
            b'(' | b'[' | b'{' => {
                self.i += 1;
                TokKind::Open
            }
            b')' | b']' | b'}' => {
                self.i += 1;
                TokKind::Close
            }
            b',' => {
                self.i += 1;
                TokKind::Comma
            }
            b'!' => {
                self.i += 1;
                TokKind::Bang
            }
            _ if c == b'_' || c.is_ascii_alphabetic() || c >= 0x80 => {
                self.i = self.s[self.i..]
                    .char_indices()
                    .find(|&(_, ch)| !(ch.is_alphanumeric() || ch == '_'))
                    .map_or(b.len(), |(n, _)| self.i + n);
                if self.i == start {
                    self.i += self.s[start..].chars().next().map_or(1, char::len_utf8);
                }
                TokKind::Ident
            }
            _ => {
                self.i += 1;
                TokKind::Other
            }
        };
        Some(Tok {
            kind,
            range: start..self.i,
        })
    }

    fn skip_block_comment(&mut self) {
        let b = self.s.as_bytes();
        let mut depth = 0usize;
        while self.i < b.len() {
            if b[self.i..].starts_with(b"/*") {
                depth += 1;
                self.i += 2;
            } else if b[self.i..].starts_with(b"*/") {
                depth -= 1;
                self.i += 2;
                if depth == 0 {
                    return;
                }
            } else {
                self.i += 1;
            }
        }
    }

    /// `'a'`, `'\n'`, `'\u{1F600}'` or a lifetime `'a`.
    fn char_or_lifetime(&mut self) {
        let rest = &self.s[self.i + 1..];
        if let Some(after) = rest.strip_prefix('\\') {
            let close = after.find('\'').map_or(rest.len(), |n| n + 2);
            self.i += 1 + close;
            return;
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next()
            && chars.next() == Some('\'')
        {
            self.i += 1 + c.len_utf8() + 1;
            return;
        }
        self.i += 1;
    }
}

/// The end of the `"…"` starting at `start` (after the closing quote).
fn string_end(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The number of `#` of the raw string `r#…"` starting at `i`, if one starts there.
fn raw_start(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'r') || i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
    (b.get(i + 1 + hashes) == Some(&b'"')).then_some(hashes)
}

fn raw_end(s: &str, start: usize) -> usize {
    let hashes = raw_start(s.as_bytes(), start).unwrap_or(0);
    let body = start + 2 + hashes;
    let close = format!("\"{}", "#".repeat(hashes));
    s[body..]
        .find(&close)
        .map_or(s.len(), |n| body + n + close.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_literals_and_maps_escapes_back() {
        let src = "// qail!(\"no\")\nfn f() {\n    let a = 'x'; let s: &'static str = \"qail!(\\\"no\\\")\";\n    qail!(Row => \"SELECT \\\"id\\\"\\n FROM t WHERE a = {x}\", y,).fetch();\n    qail::qail![r#\"SELECT \"n\" FROM t\"#];\n}";
        let found = embedded(src);
        assert_eq!(found.len(), 2, "{found:?}");
        let e = &found[0];
        assert_eq!(e.sql, "SELECT \"id\"\n FROM t WHERE a = {x}");
        assert_eq!(e.positional, 1);
        assert_eq!(e.map.len(), e.sql.len() + 1);
        let x = e.sql.find("{x}").unwrap();
        assert_eq!(&src[e.map[x]..e.map[x] + 3], "{x}");
        let quote = e.sql.find('"').unwrap();
        assert_eq!(&src[e.map[quote]..e.map[quote] + 2], "\\\"");
        let r = &found[1];
        assert_eq!(r.sql, "SELECT \"n\" FROM t");
        assert_eq!(r.positional, 0);
        assert_eq!(&src[r.map[7]..r.map[10]], "\"n\"");
        assert_eq!(src.as_bytes()[r.map[r.sql.len()]], b'"');
    }

    #[test]
    fn continuations_and_unterminated_literals() {
        let src = "qail!(\"SELECT a, \\\n     b FROM t\", p, q)";
        let e = &embedded(src)[0];
        assert_eq!(e.sql, "SELECT a, b FROM t");
        assert_eq!(e.positional, 2);
        assert_eq!(&src[e.map[10]..e.map[10] + 1], "b");
        let src = "qail!(\"SELECT o. FROM";
        assert_eq!(embedded(src)[0].sql, "SELECT o. FROM");
    }

    #[test]
    fn sort_choices_are_read_not_counted() {
        let src = "qail!(\"SELECT 1 ORDER BY {sort}\", a, f(b, c), sort = match o { O::A => \"x\", O::B => r#\"y DESC\"#, })";
        let e = &embedded(src)[0];
        assert_eq!(e.positional, 2);
        assert_eq!(
            e.choices,
            [ChoiceSpec {
                name: "sort".to_owned(),
                texts: vec!["x".to_owned(), "y DESC".to_owned()],
            }]
        );
        // `a == b` and closures are positional arguments.
        let e = &embedded("qail!(\"SELECT $1, $2\", a == b, |x| x)")[0];
        assert_eq!((e.positional, e.choices.len()), (2, 0));
    }
}
