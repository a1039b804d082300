//! Clauses of PostgreSQL 16–18 that the SQL parser lacks, blanked before parsing (every byte
//! keeps its offset) and kept aside so the analyzer reads them itself from the user's SQL:
//! - the clauses of the SQL/JSON query functions after their path (`JSON_VALUE(doc, path
//!   PASSING … RETURNING … WRAPPER … QUOTES … ON EMPTY … ON ERROR)`, also `JSON_QUERY` and
//!   `JSON_EXISTS`), read by `call::sqljson`;
//! - `RETURNING type [FORMAT JSON …]` of the SQL/JSON constructors (`JSON_OBJECT`,
//!   `JSON_ARRAY`, their aggregates, `JSON_SERIALIZE`), and their input's `FORMAT JSON` and
//!   `WITH | WITHOUT UNIQUE [KEYS]` (neither changes a type), also of `JSON(…)`;
//! - `RETURNING WITH (OLD AS o, NEW AS n)` (PostgreSQL 18): the names `old` and `new` take;
//! - a MERGE's `WHEN … THEN DO NOTHING` clause, whose condition `query::merge` types.
//!
//! It runs on the SQL the keyword pre-pass (`rewrite`) produced, which has the same offsets.

use std::ops::Range;

use qail_schema::script::lex::{block_comment_end, dollar_quote_end, is_ident_start, quoted_end};

/// What was blanked, by where it is in the SQL.
#[derive(Debug, Default)]
pub(crate) struct SetAside {
    /// SQL/JSON calls with clauses set aside.
    pub(crate) json_calls: Vec<JsonCall>,
    /// `RETURNING WITH (…)` lists.
    pub(crate) returning_names: Vec<ReturningNames>,
    /// Each `WHEN … THEN DO NOTHING` of a MERGE, `WHEN` to `NOTHING`.
    pub(crate) do_nothing: Vec<Range<usize>>,
    /// What the parse took out of JSON_TABLEs ([`crate::parse`]).
    pub(crate) json_table: crate::parse::JsonTableAside,
}

/// The clauses set aside from one SQL/JSON call.
#[derive(Debug, Clone)]
pub(crate) struct JsonCall {
    /// Where the function's name starts.
    pub(crate) name_at: usize,
    /// The clauses after a query function's path, up to its `)` (empty when there are none).
    pub(crate) clauses: Range<usize>,
    /// A constructor's `RETURNING …` clause, up to its `)`.
    pub(crate) returning: Option<Range<usize>>,
    /// A constructor's input clauses (`FORMAT JSON [ENCODING e]`, `WITH | WITHOUT UNIQUE
    /// [KEYS]`).
    pub(crate) input: Vec<Range<usize>>,
}

/// The names `RETURNING WITH (OLD AS o, NEW AS n)` gives to the row before and after.
#[derive(Debug, Clone)]
pub(crate) struct ReturningNames {
    /// `WITH` to `)`.
    pub(crate) range: Range<usize>,
    /// The name of the row before, when renamed.
    pub(crate) old: Option<String>,
    /// The name of the row after, when renamed.
    pub(crate) new: Option<String>,
}

impl SetAside {
    /// The clauses of the SQL/JSON call whose name starts at `at`.
    pub(crate) fn json_call(&self, at: usize) -> Option<&JsonCall> {
        self.json_calls.iter().find(|c| c.name_at == at)
    }

    /// The `RETURNING WITH (…)` list right before the RETURNING item starting at `at`.
    pub(crate) fn returning_names(&self, sql: &str, at: usize) -> Option<&ReturningNames> {
        self.returning_names.iter().find(|r| {
            sql.get(r.range.end..at)
                .is_some_and(|between| between.trim().is_empty())
        })
    }
}

/// A parser over the SQL at `range` alone (everything else blanked, so the ranges of what it
/// parses are ranges of `sql`).
pub(crate) fn parser_over(
    sql: &str,
    range: Range<usize>,
) -> Result<sqlparser::parser::Parser<'static>, sqlparser::parser::ParserError> {
    let padded: String = sql
        .char_indices()
        .map(|(i, c)| {
            if range.contains(&i) || c == '\n' {
                c
            } else {
                ' '
            }
        })
        .collect();
    sqlparser::parser::Parser::new(&crate::dialect::POSTGRES).try_with_sql(&padded)
}

/// Consumes the unquoted word `word` (any case) if it comes next.
pub(crate) fn take_word(p: &mut sqlparser::parser::Parser, word: &str) -> bool {
    let next = p.peek_token();
    let is = matches!(&next.token, sqlparser::tokenizer::Token::Word(w)
        if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word));
    if is {
        p.next_token();
    }
    is
}

/// Consumes the words `words` if they all come next; consumes nothing otherwise.
pub(crate) fn take_words(p: &mut sqlparser::parser::Parser, words: &[&str]) -> bool {
    let ahead = words.iter().enumerate().all(|(n, word)| {
        matches!(&p.peek_nth_token(n).token, sqlparser::tokenizer::Token::Word(w)
            if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
    });
    if ahead {
        words.iter().for_each(|_| {
            p.next_token();
        });
    }
    ahead
}

/// A token outside strings and comments.
#[derive(Debug)]
struct Tok {
    /// An unquoted word in upper case, or a quoted identifier's name; empty for punctuation,
    /// literals and parameters.
    word: String,
    quoted: bool,
    /// The punctuation character; `0` for words, `'` for strings, `9` for numbers, `$` for
    /// parameters.
    punct: u8,
    range: Range<usize>,
}

impl Tok {
    fn is(&self, word: &str) -> bool {
        !self.quoted && self.word == word
    }
}

fn tokens(sql: &str) -> Vec<Tok> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        let (word, quoted, punct) = match c {
            b'\'' => {
                let escapes = i > 0 && matches!(b[i - 1], b'e' | b'E');
                i = quoted_end(b, i, b'\'', escapes);
                (String::new(), false, b'\'')
            }
            b'"' => {
                i = quoted_end(b, i, b'"', false);
                let inner = sql.get(start + 1..i.saturating_sub(1)).unwrap_or("");
                (inner.replace("\"\"", "\""), true, 0)
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = block_comment_end(b, i);
                continue;
            }
            b'$' => match dollar_quote_end(sql, i) {
                Some(end) => {
                    i = end;
                    (String::new(), false, b'\'')
                }
                None => {
                    i += 1;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                    (String::new(), false, b'$')
                }
            },
            c if is_ident_start(c) => {
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || b[i] == b'_'
                        || b[i] == b'$'
                        || b[i] >= 0x80)
                {
                    i += 1;
                }
                (sql[start..i].to_ascii_uppercase(), false, 0)
            }
            c if c.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            c if c.is_ascii_digit() => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                    i += 1;
                }
                (String::new(), false, b'9')
            }
            c => {
                i += 1;
                (String::new(), false, c)
            }
        };
        out.push(Tok {
            word,
            quoted,
            punct,
            range: start..i.min(b.len()),
        });
    }
    out
}

/// The index of the `)` closing the `(` at `open`.
fn close_of(toks: &[Tok], open: usize) -> Option<usize> {
    let mut depth = 0_usize;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t.punct {
            b'(' | b'[' => depth += 1,
            b')' | b']' => {
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

/// The indexes of the tokens directly inside the parentheses `open..close` (not nested).
fn top_level(toks: &[Tok], open: usize, close: usize) -> Vec<usize> {
    let mut depth = 0_usize;
    let mut out = Vec::new();
    for (k, t) in toks.iter().enumerate().take(close).skip(open + 1) {
        match t.punct {
            b'(' | b'[' => {
                if depth == 0 {
                    out.push(k);
                }
                depth += 1;
            }
            b')' | b']' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(k),
            _ => {}
        }
    }
    out
}

const QUERY_FUNCTIONS: &[&str] = &["JSON_VALUE", "JSON_QUERY", "JSON_EXISTS"];
const CONSTRUCTORS: &[&str] = &[
    "JSON_OBJECT",
    "JSON_ARRAY",
    "JSON_OBJECTAGG",
    "JSON_ARRAYAGG",
    "JSON_SERIALIZE",
];

/// Blanks the clauses above in `sql` (in place: ASCII bytes become spaces) and returns them.
pub(crate) fn set_aside(sql: &mut String) -> SetAside {
    let toks = tokens(sql);
    let mut blank: Vec<Range<usize>> = Vec::new();
    let mut out = SetAside::default();
    for (i, t) in toks.iter().enumerate() {
        let call_open = toks.get(i + 1).is_some_and(|n| n.punct == b'(');
        if call_open && QUERY_FUNCTIONS.iter().any(|f| t.is(f)) {
            if let Some(call) = query_clauses(&toks, i) {
                if !call.clauses.is_empty() {
                    blank.push(call.clauses.clone());
                }
                out.json_calls.push(call);
            }
        } else if call_open && t.is("JSON") && toks[..i].last().is_none_or(|p| p.punct != b'.') {
            // Note: `JSON(x FORMAT JSON … WITH UNIQUE KEYS)` (PostgreSQL 17) has no RETURNING;
            // without input clauses, `json(x)` is the cast to json of every version.
            if let Some((call, input)) = constructor_clauses(&toks, i)
                && call.returning.is_none()
                && !input.is_empty()
            {
                blank.extend(input);
                out.json_calls.push(call);
            }
        } else if call_open && CONSTRUCTORS.iter().any(|f| t.is(f)) {
            if let Some((call, input)) = constructor_clauses(&toks, i) {
                blank.extend(input);
                blank.extend(call.returning.clone());
                out.json_calls.push(call);
            }
        } else if t.is("RETURNING")
            && toks.get(i + 1).is_some_and(|n| n.is("WITH"))
            && toks.get(i + 2).is_some_and(|n| n.punct == b'(')
        {
            if let Some(names) = returning_names(&toks, i + 1) {
                blank.push(names.range.clone());
                out.returning_names.push(names);
            }
        } else if t.is("THEN")
            && toks.get(i + 1).is_some_and(|n| n.is("DO"))
            && toks.get(i + 2).is_some_and(|n| n.is("NOTHING"))
            && let Some(when) = (0..i).rev().find(|&k| toks[k].is("WHEN"))
        {
            let range = toks[when].range.start..toks[i + 2].range.end;
            blank.push(range.clone());
            out.do_nothing.push(range);
        }
    }
    if !blank.is_empty() {
        // Note: only whole tokens are blanked, so the SQL stays valid UTF-8 with every
        // multi-byte character inside a range replaced by as many spaces as it had bytes.
        let mut bytes = std::mem::take(sql).into_bytes();
        for r in &blank {
            bytes[r.clone()].iter_mut().for_each(|c| {
                if *c != b'\n' {
                    *c = b' ';
                }
            });
        }
        *sql = String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    }
    out
}

/// Whether the top-level token at `k` of a query function's arguments starts one of its
/// clauses (`PASSING`, `RETURNING`, a wrapper, quotes, or a behaviour `… ON EMPTY | ERROR`).
fn starts_clause(toks: &[Tok], k: usize) -> bool {
    let t = &toks[k];
    let next = |n: usize| toks.get(k + n);
    let then_on = |n: usize| next(n).is_some_and(|x| x.is("ON"));
    if t.quoted {
        return false;
    }
    match t.word.as_str() {
        "PASSING" | "RETURNING" => true,
        "WITH" | "WITHOUT" => next(1).is_some_and(|x| {
            ["WRAPPER", "CONDITIONAL", "UNCONDITIONAL", "ARRAY"]
                .iter()
                .any(|w| x.is(w))
        }),
        "KEEP" | "OMIT" => next(1).is_some_and(|x| x.is("QUOTES")),
        "NULL" | "ERROR" | "TRUE" | "FALSE" | "UNKNOWN" => then_on(1),
        "EMPTY" => {
            then_on(1) || (next(1).is_some_and(|x| x.is("ARRAY") || x.is("OBJECT")) && then_on(2))
        }
        "DEFAULT" => true,
        _ => false,
    }
}

/// The clauses of the query function whose name is token `name`.
fn query_clauses(toks: &[Tok], name: usize) -> Option<JsonCall> {
    let close = close_of(toks, name + 1)?;
    let top = top_level(toks, name + 1, close);
    let comma = top.iter().position(|&k| toks[k].punct == b',')?;
    let first = top[comma + 1..]
        .iter()
        .skip(1)
        .find(|&&k| starts_clause(toks, k))
        .copied();
    let end = toks[close].range.start;
    Some(JsonCall {
        name_at: toks[name].range.start,
        clauses: first.map_or(end..end, |k| toks[k].range.start..end),
        returning: None,
        input: Vec::new(),
    })
}

/// A constructor's `RETURNING …` clause, and the input clauses to blank (`FORMAT JSON
/// [ENCODING e]`, `WITH | WITHOUT UNIQUE [KEYS]`) outside it.
fn constructor_clauses(toks: &[Tok], name: usize) -> Option<(JsonCall, Vec<Range<usize>>)> {
    let close = close_of(toks, name + 1)?;
    let top = top_level(toks, name + 1, close);
    let returning = top.iter().copied().find(|&k| toks[k].is("RETURNING"));
    let inputs_end = returning.unwrap_or(close);
    let mut input = Vec::new();
    for (n, &k) in top.iter().enumerate() {
        if k >= inputs_end {
            break;
        }
        let at = |m: usize| top.get(n + m).map(|&x| &toks[x]);
        let end = if toks[k].is("FORMAT") && at(1).is_some_and(|x| x.is("JSON")) {
            Some(
                if at(2).is_some_and(|x| x.is("ENCODING")) && at(3).is_some() {
                    3
                } else {
                    1
                },
            )
        } else if (toks[k].is("WITH") || toks[k].is("WITHOUT"))
            && at(1).is_some_and(|x| x.is("UNIQUE"))
        {
            Some(if at(2).is_some_and(|x| x.is("KEYS")) {
                2
            } else {
                1
            })
        } else {
            None
        };
        if let Some(m) = end {
            input.push(toks[k].range.start..toks[top[n + m]].range.end);
        }
    }
    let call = JsonCall {
        name_at: toks[name].range.start,
        clauses: 0..0,
        returning: returning.map(|k| toks[k].range.start..toks[close].range.start),
        input: input.clone(),
    };
    Some((call, input))
}

/// `WITH (OLD AS o, NEW AS n)` at token `with`; `None` when it is not that list (the parser
/// then reports it).
fn returning_names(toks: &[Tok], with: usize) -> Option<ReturningNames> {
    let close = close_of(toks, with + 1)?;
    let inside = &toks[with + 2..close];
    let mut names = ReturningNames {
        range: toks[with].range.start..toks[close].range.end,
        old: None,
        new: None,
    };
    for item in inside.split(|t| t.punct == b',') {
        let [which, as_, name] = item else {
            return None;
        };
        if !as_.is("AS") || name.word.is_empty() {
            return None;
        }
        let name = if name.quoted {
            name.word.clone()
        } else {
            name.word.to_ascii_lowercase()
        };
        let slot = if which.is("OLD") {
            &mut names.old
        } else if which.is("NEW") {
            &mut names.new
        } else {
            return None;
        };
        if slot.replace(name).is_some() {
            return None;
        }
    }
    Some(names)
}

#[cfg(test)]
mod tests {
    use super::set_aside;

    /// `sql` with each of `parts` (found in it) replaced by spaces.
    fn blanked(sql: &str, parts: &[&str]) -> String {
        let mut out = sql.to_owned();
        for part in parts {
            let at = out.find(part).expect("the part is in the SQL");
            out.replace_range(at..at + part.len(), &" ".repeat(part.len()));
        }
        out
    }

    #[test]
    fn query_function_clauses_are_blanked_after_the_path() {
        let sql = "SELECT JSON_VALUE(j, '$.a' PASSING $1 AS x RETURNING int DEFAULT 0 ON EMPTY), \
                   JSON_QUERY(f(a, b), '$') , JSON_EXISTS(j, '$' || p ERROR ON ERROR), \
                   JSON_QUERY(j, '$' WITH WRAPPER OMIT QUOTES)";
        let mut out = sql.to_owned();
        let aside = set_aside(&mut out);
        let clauses = [
            "PASSING $1 AS x RETURNING int DEFAULT 0 ON EMPTY",
            "ERROR ON ERROR",
            "WITH WRAPPER OMIT QUOTES",
        ];
        assert_eq!(out, blanked(sql, &clauses));
        let kept: Vec<&str> = aside
            .json_calls
            .iter()
            .map(|c| sql[c.clauses.clone()].trim_end())
            .collect();
        assert_eq!(kept, [clauses[0], "", clauses[1], clauses[2]]);
    }

    #[test]
    fn constructor_returning_and_input_format_are_blanked() {
        let sql = "SELECT JSON_OBJECT('a': x FORMAT JSON WITH UNIQUE KEYS RETURNING jsonb), \
                   JSON_ARRAY(format, 2 ABSENT ON NULL)";
        let mut out = sql.to_owned();
        let aside = set_aside(&mut out);
        assert_eq!(
            out,
            blanked(sql, &["FORMAT JSON", "WITH UNIQUE KEYS", "RETURNING jsonb"])
        );
        let returning = aside.json_calls[0].returning.clone().expect("RETURNING");
        assert_eq!(&sql[returning], "RETURNING jsonb");
        assert!(aside.json_calls[1].returning.is_none());
    }

    #[test]
    fn returning_names_and_merge_do_nothing() {
        let sql = "MERGE INTO t USING s ON t.a = s.a WHEN MATCHED AND t.b > $1 THEN DO NOTHING \
                   WHEN NOT MATCHED THEN INSERT VALUES (s.a) \
                   RETURNING WITH (OLD AS o, new as \"N\") o.a";
        let mut out = sql.to_owned();
        let aside = set_aside(&mut out);
        let nothing = "WHEN MATCHED AND t.b > $1 THEN DO NOTHING";
        let with = "WITH (OLD AS o, new as \"N\")";
        assert_eq!(out, blanked(sql, &[nothing, with]));
        assert_eq!(&sql[aside.do_nothing[0].clone()], nothing);
        let names = &aside.returning_names[0];
        assert_eq!(
            (names.old.as_deref(), names.new.as_deref()),
            (Some("o"), Some("N"))
        );
        let item = sql.rfind("o.a").expect("the item");
        assert!(aside.returning_names(sql, item).is_some());
        assert!(aside.returning_names(sql, item + 2).is_none());
    }

    /// Forms that are not these clauses are left for the parser to read or refuse.
    #[test]
    fn other_forms_are_left_alone() {
        for sql in [
            "INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING",
            "SELECT CASE WHEN a THEN b END, json_value FROM t",
            "SELECT JSON_VALUE(j, '$ PASSING') FROM t",
            "UPDATE t SET a = 1 RETURNING WITH (OLD o) o.a",
            "SELECT 'JSON_QUERY(j, ''$'' RETURNING int)'",
        ] {
            let mut out = sql.to_owned();
            set_aside(&mut out);
            assert_eq!(out, sql);
        }
    }
}
