//! Cutting a SQL file into statements.
//!
//! Statements end at a `;` outside quotes, comments and parentheses, and outside the body of
//! a `CREATE FUNCTION … BEGIN ATOMIC … END` (counted as psql counts it: after `CREATE
//! [OR REPLACE] FUNCTION|PROCEDURE`, each `BEGIN` or `CASE` opens a level and each `END`
//! closes one). The lexer knows single-quoted strings
//! (`''` escapes), `E'…'` strings (backslash escapes too), double-quoted identifiers (`""`
//! escapes), dollar quotes (`$$…$$`, `$tag$…$tag$`), `--` line comments and nested `/* */`
//! block comments, like PostgreSQL's own scanner (psql splits the same way).
//!
//! A comment line `-- name: Foo` names the statement after it; a named comment line also
//! ends the statement before it, so a file of named queries needs no `;` between them.

use super::lex::{block_comment_end, dollar_quote_end, is_ident_start, quoted_end};
use std::ops::Range;

/// One statement cut out of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// The name given by a `-- name: Foo` comment line before the statement (the first word
    /// after `name:`, so sqlc's `-- name: Foo :one` gives `Foo`).
    pub name: Option<String>,
    /// Byte range of the statement in the file: from its first token to the end of its last
    /// token, without leading or trailing comments and without the `;`.
    pub range: Range<usize>,
}

/// Splits `text` into its statements, in order. Empty statements (`;;`, only comments) are
/// left out. Unterminated quotes or comments run to the end of the text (the analyzer then
/// reports the syntax error).
pub fn split(text: &str) -> Vec<Piece> {
    let mut s = Splitter {
        text,
        bytes: text.as_bytes(),
        pieces: Vec::new(),
        start: None,
        end: 0,
        name: None,
        parens: 0,
        begins: 0,
        words: [0; 4],
        word_count: 0,
    };
    s.run();
    s.pieces
}

struct Splitter<'t> {
    text: &'t str,
    bytes: &'t [u8],
    pieces: Vec<Piece>,
    /// Start of the current statement's first token.
    start: Option<usize>,
    /// End of the current statement's last token so far.
    end: usize,
    /// The pending `-- name:`.
    name: Option<String>,
    /// Open parentheses in the current statement.
    parens: usize,
    /// Open `BEGIN`/`CASE` levels in a routine body of the current statement.
    begins: usize,
    /// First letters (lowercased) of the statement's first four words.
    words: [u8; 4],
    /// Words seen in the current statement.
    word_count: usize,
}

impl Splitter<'_> {
    fn run(&mut self) {
        let mut i = 0;
        while let Some(&b) = self.bytes.get(i) {
            i = match b {
                b';' if self.parens == 0 && self.begins == 0 => {
                    self.finish();
                    i + 1
                }
                b'-' if self.bytes.get(i + 1) == Some(&b'-') => self.line_comment(i),
                b'/' if self.bytes.get(i + 1) == Some(&b'*') => block_comment_end(self.bytes, i),
                _ if b.is_ascii_whitespace() => i + 1,
                _ => {
                    let end = self.token_end(i);
                    self.start.get_or_insert(i);
                    self.end = end;
                    match b {
                        b'(' => self.parens += 1,
                        b')' => self.parens = self.parens.saturating_sub(1),
                        _ if is_ident_start(b) => {
                            self.word(&self.text[i..end]);
                        }
                        _ => {}
                    }
                    end
                }
            };
        }
        self.finish();
    }

    /// Counts a word (keyword or identifier) for the routine-body rule.
    fn word(&mut self, word: &str) {
        if word.contains('\'') {
            // An `E'…'` string, not a word.
            return;
        }
        if self.word_count < 4 {
            self.words[self.word_count] = word.as_bytes()[0].to_ascii_lowercase();
        }
        self.word_count += 1;
        let in_routine = matches!(
            self.words,
            [b'c', b'f' | b'p', ..] | [b'c', b'o', b'r', b'f' | b'p']
        );
        if word.eq_ignore_ascii_case("begin") || word.eq_ignore_ascii_case("case") {
            if in_routine {
                self.begins += 1;
            }
        } else if word.eq_ignore_ascii_case("end") {
            self.begins = self.begins.saturating_sub(1);
        }
    }

    /// Ends the current statement, if it has any token.
    fn finish(&mut self) {
        self.parens = 0;
        self.begins = 0;
        self.words = [0; 4];
        self.word_count = 0;
        if let Some(start) = self.start.take() {
            self.pieces.push(Piece {
                name: self.name.take(),
                range: start..self.end,
            });
        }
    }

    /// Skips a `--` comment starting at `i`; a `-- name:` comment line names what follows.
    fn line_comment(&mut self, i: usize) -> usize {
        let end = self.bytes[i..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(self.bytes.len(), |n| i + n);
        let body = self.text[i + 2..end].trim();
        if let Some(rest) = body.strip_prefix("name:") {
            let line_start = self.text[..i].rfind('\n').map_or(0, |n| n + 1);
            let alone = self.text[line_start..i].trim().is_empty();
            if let Some(word) = rest.split_whitespace().next()
                && (alone || self.start.is_none())
            {
                self.finish();
                self.name = Some(word.to_owned());
            }
        }
        end
    }

    /// The end of the token (string, identifier, dollar quote, other character) at `i`.
    fn token_end(&self, i: usize) -> usize {
        let b = self.bytes;
        match b[i] {
            b'\'' => quoted_end(b, i, b'\'', false),
            b'"' => quoted_end(b, i, b'"', false),
            b'$' => dollar_quote_end(self.text, i).unwrap_or(i + 1),
            c if is_ident_start(c) => {
                let end = i + b[i..].iter().take_while(|&&c| is_ident_char(c)).count();
                if end == i + 1 && matches!(c, b'e' | b'E') && b.get(end) == Some(&b'\'') {
                    quoted_end(b, end, b'\'', true)
                } else {
                    end
                }
            }
            // Digits, operators, punctuation: one byte at a time is enough for splitting.
            _ => i + 1,
        }
    }
}

fn is_ident_char(c: u8) -> bool {
    is_ident_start(c) || c.is_ascii_digit() || c == b'$'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqls(text: &str) -> Vec<&str> {
        split(text).into_iter().map(|p| &text[p.range]).collect()
    }

    #[test]
    fn splits_at_semicolons_and_trims_comments() {
        let text = "-- header\nSELECT 1;\n\n  SELECT 2 -- two\n;;\n/* only a comment */;\nSELECT 3";
        assert_eq!(sqls(text), ["SELECT 1", "SELECT 2", "SELECT 3"]);
        assert_eq!(split(text)[1].range.start, text.find("SELECT 2").unwrap());
    }

    #[test]
    fn semicolons_inside_quotes_and_comments_do_not_split() {
        let text = "SELECT ';', \"a;b\", 'it''s;' /* x; /* nested; */ y; */ FROM t; SELECT 2";
        assert_eq!(
            sqls(text),
            [
                "SELECT ';', \"a;b\", 'it''s;' /* x; /* nested; */ y; */ FROM t",
                "SELECT 2"
            ]
        );
    }

    #[test]
    fn dollar_quotes_and_parameters() {
        let text = "SELECT $$a;b$$, $fn$ x; $$ y $fn$, $1; SELECT a$b FROM t WHERE x = $2;";
        assert_eq!(
            sqls(text),
            [
                "SELECT $$a;b$$, $fn$ x; $$ y $fn$, $1",
                "SELECT a$b FROM t WHERE x = $2"
            ]
        );
    }

    #[test]
    fn escape_strings_honour_backslashes() {
        let text = r"SELECT E'a\';b', e'\\'; SELECT 'a\'; SELECT 3";
        assert_eq!(
            sqls(text),
            [r"SELECT E'a\';b', e'\\'", r"SELECT 'a\'", "SELECT 3"]
        );
        // An identifier ending in e is not an escape-string prefix.
        assert_eq!(
            sqls(r"SELECT type'\'; SELECT 2"),
            [r"SELECT type'\'", "SELECT 2"]
        );
    }

    #[test]
    fn name_comments_name_and_separate_statements() {
        let text = "-- name: First :one\nSELECT 1;\n\n-- a note\n-- name: Second\nSELECT 2\n\
                    -- name: Third\nSELECT 3\n  -- name: not alone on its line? it is\nSELECT 4;\nSELECT 5 -- name: Inline\n";
        let pieces = split(text);
        let names: Vec<Option<&str>> = pieces.iter().map(|p| p.name.as_deref()).collect();
        assert_eq!(
            names,
            [
                Some("First"),
                Some("Second"),
                Some("Third"),
                Some("not"),
                None
            ]
        );
        assert_eq!(&text[pieces[2].range.clone()], "SELECT 3");
        assert_eq!(&text[pieces[4].range.clone()], "SELECT 5");
    }

    #[test]
    fn unterminated_tokens_run_to_the_end() {
        assert_eq!(sqls("SELECT 'abc; SELECT 2"), ["SELECT 'abc; SELECT 2"]);
        assert_eq!(sqls("SELECT $x$ abc; "), ["SELECT $x$ abc; "]);
        assert_eq!(sqls("SELECT 1 /* abc; "), ["SELECT 1"]);
        assert_eq!(sqls("SELECT \"abc; "), ["SELECT \"abc; "]);
        assert!(split("").is_empty());
        assert!(split("  -- nothing\n").is_empty());
    }

    #[test]
    fn semicolons_inside_parentheses_and_atomic_bodies_do_not_split() {
        let text = "CREATE RULE r AS ON INSERT TO t DO ALSO (INSERT INTO a VALUES (1); \
                    INSERT INTO b VALUES (2)); SELECT 1;\n\
                    CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC \
                    SELECT CASE WHEN true THEN 1 END; SELECT 2; END; SELECT 3; BEGIN; END;";
        assert_eq!(
            sqls(text),
            [
                "CREATE RULE r AS ON INSERT TO t DO ALSO (INSERT INTO a VALUES (1); \
                 INSERT INTO b VALUES (2))",
                "SELECT 1",
                "CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC \
                 SELECT CASE WHEN true THEN 1 END; SELECT 2; END",
                "SELECT 3",
                "BEGIN",
                "END"
            ]
        );
    }

    #[test]
    fn multibyte_text_keeps_char_boundaries() {
        let text = "SELECT 'é;' AS «x»; SELECT ñ";
        assert_eq!(sqls(text), ["SELECT 'é;' AS «x»", "SELECT ñ"]);
    }
}
