//! Splitting a script into statements and parsing each one on its own, so that one statement
//! sqlparser cannot read does not stop the import.
//!
//! A few PostgreSQL forms sqlparser 0.59 does not parse are recognized here from the tokens:
//! `CREATE TABLE … PARTITION OF …`, `CREATE TYPE … AS RANGE (…)` and `RETURNS SETOF …`;
//! PostgreSQL 18's column and constraint forms are rewritten by [`super::pg18`].

use sqlparser::ast::{DataType, ObjectName, Statement};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

/// One statement of a script.
pub(crate) struct Stmt {
    /// 1-based line of its first token.
    pub(crate) line: u64,
    pub(crate) parsed: Result<Parsed, String>,
}

/// A parsed statement.
pub(crate) enum Parsed {
    /// Anything sqlparser parses, with what was taken out of the tokens before.
    Sql(Box<Statement>, Flags),
    /// `CREATE TABLE name PARTITION OF parent …`.
    PartitionOf {
        name: ObjectName,
        parent: ObjectName,
        if_not_exists: bool,
    },
    /// `CREATE TYPE name AS RANGE (SUBTYPE = …)`.
    Range { name: ObjectName, subtype: DataType },
    /// `RESET search_path` or `RESET ALL`: back to the snapshot's search_path.
    ResetSearchPath,
    /// `ALTER TABLE name ALTER [COLUMN] column SET GENERATED { ALWAYS | BY DEFAULT }`.
    SetIdentity {
        table: ObjectName,
        column: sqlparser::ast::Ident,
        always: bool,
    },
    /// A statement that changes nothing a snapshot holds, which sqlparser does not parse
    /// (`ALTER TABLE … ATTACH/DETACH PARTITION`, `RESET` of other settings).
    NoEffect,
}

/// Clauses removed from the tokens because sqlparser does not parse them.
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct Flags {
    /// `RETURNS SETOF …`.
    pub(crate) setof: bool,
    /// `NOT NULL` in `CREATE DOMAIN`.
    pub(crate) not_null: bool,
    /// `VARIADIC` before a function argument.
    pub(crate) variadic: bool,
    /// A virtual generated column (PostgreSQL 18).
    pub(crate) virtual_column: bool,
}

/// Cuts `text` into statements ([`crate::script::split`], the one statement splitter: `;`
/// outside quotes, comments, parentheses and `BEGIN ATOMIC … END` bodies) and parses each.
/// A statement the tokenizer cannot read is reported on its own; the rest of the file is
/// still imported.
pub(crate) fn statements(text: &str) -> Vec<Stmt> {
    let dialect = PostgreSqlDialect {};
    let mut out = Vec::new();
    for piece in crate::script::split(text) {
        let before = &text[..piece.range.start];
        let lines_before = u64::try_from(before.matches('\n').count()).unwrap_or(u64::MAX);
        if let Some(block) = do_block(&text[piece.range.clone()]) {
            let line = lines_before + 1;
            match block {
                Ok(body) => {
                    // The body's statements, numbered by the lines of the whole file.
                    let offset = piece.range.start + body.start;
                    let newlines = text[..offset].matches('\n').count();
                    let body = &text[offset..piece.range.start + body.end];
                    let padded = format!("{}{body}", "\n".repeat(newlines));
                    out.extend(statements(&padded));
                }
                Err(why) => out.push(Stmt {
                    line,
                    parsed: Err(format!(
                        "DO block skipped: {why}; the snapshot will lack its effect: write its \
                         statements outside the DO block, or pull from a database with `cargo \
                         qail schema pull`"
                    )),
                }),
            }
            continue;
        }
        // Note: the first token's column is off on a statement's first line (the tokenizer
        // starts at column 1 there); only lines are reported.
        match Tokenizer::new(&dialect, &text[piece.range]).tokenize_with_location() {
            Ok(tokens) => {
                // Note: a `;` inside one piece is either in a body the splitter kept whole
                // (`BEGIN ATOMIC … END`) or follows an unbalanced `(` that swallowed the rest
                // of the file; when the whole does not parse, cut at every `;` so the
                // statements after a broken one are still imported.
                let semicolon = |t: &TokenWithSpan| t.token == Token::SemiColon;
                if tokens.iter().any(semicolon) && parse(tokens.clone()).is_err() {
                    for part in tokens.split(semicolon) {
                        push(&mut out, part.to_vec(), lines_before);
                    }
                } else {
                    push(&mut out, tokens, lines_before);
                }
            }
            Err(e) => out.push(Stmt {
                line: lines_before + e.location.line,
                parsed: Err(format!(
                    "statement skipped: cannot read it past here: {}; fix the SQL",
                    e.message
                )),
            }),
        }
    }
    out
}

/// A `DO` statement's body: `Some(Ok(range))` of the plain statements it holds (within
/// `stmt`) when it is a straight list `BEGIN …; …; END`, optionally ending with `EXCEPTION WHEN
/// … THEN NULL` (the idiom that makes a migration re-runnable); `Some(Err(why))` for any other
/// body; `None` when `stmt` is not a `DO`.
fn do_block(stmt: &str) -> Option<Result<std::ops::Range<usize>, String>> {
    let rest = stmt
        .get(2..)
        .filter(|_| stmt[..2].eq_ignore_ascii_case("do"))?;
    if !rest.starts_with(|c: char| c.is_whitespace() || c == '$') {
        return None;
    }
    let open = stmt.find('$')?;
    let Some(close) = crate::script::lex::dollar_quote_end(stmt, open) else {
        return Some(Err("its body is not a dollar-quoted string".to_owned()));
    };
    let tag_len = stmt[open + 1..].find('$').map_or(1, |n| n + 2);
    let (start, end) = (
        open + tag_len,
        close.saturating_sub(tag_len).max(open + tag_len),
    );
    let body = &stmt[start..end];
    let language = stmt[close..].trim().to_lowercase();
    if !(language.is_empty() || language == "language plpgsql" || language == "language 'plpgsql'")
    {
        return Some(Err(format!("its language is not plpgsql ({language})")));
    }
    let words = |t: &str| -> Vec<String> { t.split_whitespace().map(str::to_lowercase).collect() };
    let trimmed = body.trim_start();
    let lead = body.len() - trimmed.len();
    let first = trimmed
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_lowercase();
    if first != "begin" {
        return Some(Err(format!(
            "its body starts with {first} (variables or a label), not a straight list BEGIN …; END"
        )));
    }
    let inner_start = start + lead + "begin".len();
    let pieces = crate::script::split(&stmt[inner_start..end]);
    let mut plain_end = inner_start;
    let mut iter = pieces.iter().peekable();
    while let Some(p) = iter.next() {
        let text = &stmt[inner_start + p.range.start..inner_start + p.range.end];
        let w = words(text);
        let head = w.first().map_or("", String::as_str);
        let is_last = iter.peek().is_none();
        match head {
            "create" | "alter" | "drop" | "comment" | "grant" | "revoke" => {
                plain_end = inner_start + p.range.end + 1;
            }
            "exception" => {
                // `EXCEPTION WHEN duplicate_object THEN NULL; END`: the statements before it
                // are what the block does on a database that lacks them.
                let end_word = iter
                    .peek()
                    .map(|q| words(&stmt[inner_start + q.range.start..inner_start + q.range.end]));
                let then_null = w.len() >= 4
                    && w[1] == "when"
                    && w[w.len() - 2] == "then"
                    && w[w.len() - 1] == "null";
                let ends = end_word.is_some_and(|e| e.first().is_some_and(|f| f == "end"));
                if then_null && ends {
                    return Some(Ok(inner_start..plain_end.min(end)));
                }
                return Some(Err(
                    "its EXCEPTION handler does more than `WHEN … THEN NULL`".to_owned(),
                ));
            }
            "end" if is_last => {}
            other => {
                return Some(Err(format!(
                    "it holds `{other}` (control flow, dynamic SQL or queries), not only plain \
                     statements"
                )));
            }
        }
    }
    Some(Ok(inner_start..plain_end.min(end)))
}

fn push(out: &mut Vec<Stmt>, tokens: Vec<TokenWithSpan>, lines_before: u64) {
    let tokens: Vec<TokenWithSpan> = tokens
        .into_iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let Some(first) = tokens.first() else { return };
    let line = lines_before + first.span.start.line;
    let parsed = parse(tokens).map_err(|e| {
        let msg = e.to_string();
        let msg = msg
            .strip_prefix("sql parser error: ")
            .unwrap_or(&msg)
            .to_owned();
        format!(
            "statement skipped: sqlparser cannot parse it ({msg}); the snapshot will lack its \
             effect: pull from a database with `cargo qail schema pull` instead"
        )
    });
    out.push(Stmt { line, parsed });
}

fn is_word(t: Option<&TokenWithSpan>, kw: Keyword) -> bool {
    matches!(t.map(|t| &t.token), Some(Token::Word(w)) if w.keyword == kw)
}

fn parse(mut tokens: Vec<TokenWithSpan>) -> Result<Parsed, ParserError> {
    let dialect = PostgreSqlDialect {};
    if is_word(tokens.first(), Keyword::CREATE) {
        if is_word(tokens.get(1), Keyword::TABLE)
            && tokens
                .windows(2)
                .any(|w| is_word(w.first(), Keyword::PARTITION) && is_word(w.get(1), Keyword::OF))
        {
            return partition_of(Parser::new(&dialect).with_tokens_with_locations(tokens));
        }
        if is_word(tokens.get(1), Keyword::TYPE)
            && tokens
                .windows(2)
                .any(|w| is_word(w.first(), Keyword::AS) && is_word(w.get(1), Keyword::RANGE))
        {
            return range(Parser::new(&dialect).with_tokens_with_locations(tokens));
        }
    }
    if is_word(tokens.first(), Keyword::RESET) {
        let all_or_path = matches!(tokens.get(1).map(|t| &t.token), Some(Token::Word(w))
            if w.keyword == Keyword::ALL || w.value.eq_ignore_ascii_case("search_path"));
        return Ok(if all_or_path {
            Parsed::ResetSearchPath
        } else {
            Parsed::NoEffect
        });
    }
    if is_word(tokens.first(), Keyword::ALTER) && is_word(tokens.get(1), Keyword::TABLE) {
        // Note: a partition attached or detached stays a table of its own columns.
        let partition = tokens.windows(2).any(|w| {
            matches!(w.first().map(|t| &t.token), Some(Token::Word(x))
                if x.value.eq_ignore_ascii_case("attach") || x.value.eq_ignore_ascii_case("detach"))
                && is_word(w.get(1), Keyword::PARTITION)
        });
        if partition {
            return Ok(Parsed::NoEffect);
        }
        if let Some(parsed) = set_identity(&tokens) {
            return Ok(parsed);
        }
    }
    let virtual_column = super::pg18::rewrite(&mut tokens)?;
    take_materialized_data(&mut tokens);
    let flags = Flags {
        setof: take_setof(&mut tokens),
        not_null: take_domain_not_null(&mut tokens),
        variadic: take_variadic(&mut tokens),
        virtual_column,
    };
    take_function_estimates(&mut tokens);
    let mut parser = Parser::new(&dialect).with_tokens_with_locations(tokens);
    let stmt = parser.parse_statement()?;
    let rest = parser.peek_token();
    if rest.token != Token::EOF {
        return Err(ParserError::ParserError(format!(
            "unexpected {} after the statement",
            rest.token
        )));
    }
    Ok(Parsed::Sql(Box::new(stmt), flags))
}

/// Removes the `SETOF` of `RETURNS SETOF` (sqlparser does not know it) and says if it did.
fn take_setof(tokens: &mut Vec<TokenWithSpan>) -> bool {
    let at = tokens.windows(2).position(|w| {
        is_word(w.first(), Keyword::RETURNS)
            && matches!(w.get(1).map(|t| &t.token), Some(Token::Word(x)) if x.value.eq_ignore_ascii_case("setof"))
    });
    match at {
        Some(i) => {
            tokens.remove(i + 1);
            true
        }
        None => false,
    }
}

/// `ALTER TABLE [ONLY] t ALTER [COLUMN] c SET GENERATED { ALWAYS | BY DEFAULT }` alone.
fn set_identity(tokens: &[TokenWithSpan]) -> Option<Parsed> {
    let dialect = PostgreSqlDialect {};
    let mut p = Parser::new(&dialect).with_tokens_with_locations(tokens.to_vec());
    p.expect_keywords(&[Keyword::ALTER, Keyword::TABLE]).ok()?;
    let _ = p.parse_keyword(Keyword::IF) && p.parse_keyword(Keyword::EXISTS);
    let _ = p.parse_keyword(Keyword::ONLY);
    let table = p.parse_object_name(false).ok()?;
    p.expect_keyword(Keyword::ALTER).ok()?;
    let _ = p.parse_keyword(Keyword::COLUMN);
    let column = p.parse_identifier().ok()?;
    p.expect_keywords(&[Keyword::SET, Keyword::GENERATED])
        .ok()?;
    let always = if p.parse_keyword(Keyword::ALWAYS) {
        true
    } else {
        p.expect_keywords(&[Keyword::BY, Keyword::DEFAULT]).ok()?;
        false
    };
    (p.peek_token().token == Token::EOF).then_some(Parsed::SetIdentity {
        table,
        column,
        always,
    })
}

/// Removes the trailing `WITH [NO] DATA` of `CREATE MATERIALIZED VIEW … AS …` (whether it is
/// filled does not change its columns).
fn take_materialized_data(tokens: &mut Vec<TokenWithSpan>) {
    let matview = is_word(tokens.first(), Keyword::CREATE)
        && tokens
            .iter()
            .take(4)
            .any(|t| matches!(&t.token, Token::Word(w) if w.keyword == Keyword::MATERIALIZED));
    if !matview {
        return;
    }
    let n = tokens.len();
    let data = |t: Option<&TokenWithSpan>| matches!(t.map(|t| &t.token), Some(Token::Word(w)) if w.value.eq_ignore_ascii_case("data"));
    if n >= 3 && data(tokens.get(n - 1)) && is_word(tokens.get(n - 2), Keyword::WITH) {
        tokens.truncate(n - 2);
    } else if n >= 4
        && data(tokens.get(n - 1))
        && is_word(tokens.get(n - 2), Keyword::NO)
        && is_word(tokens.get(n - 3), Keyword::WITH)
    {
        tokens.truncate(n - 3);
    }
}

/// Removes `COST n` and `ROWS n` from a `CREATE FUNCTION` (the planner's estimates, which do not
/// change the snapshot; sqlparser reads neither when it follows `LANGUAGE`).
fn take_function_estimates(tokens: &mut Vec<TokenWithSpan>) {
    let is_function = is_word(tokens.first(), Keyword::CREATE)
        && tokens
            .iter()
            .take(5)
            .any(|t| matches!(&t.token, Token::Word(w) if w.keyword == Keyword::FUNCTION));
    if !is_function {
        return;
    }
    let mut i = 0;
    while i + 1 < tokens.len() {
        let estimate = matches!(&tokens[i].token, Token::Word(w) if w.quote_style.is_none()
            && (w.value.eq_ignore_ascii_case("cost") || w.value.eq_ignore_ascii_case("rows")));
        if estimate && matches!(tokens[i + 1].token, Token::Number(..)) {
            tokens.drain(i..i + 2);
        } else {
            i += 1;
        }
    }
}

/// Removes `VARIADIC` from a `CREATE FUNCTION`'s arguments and says if it did. PostgreSQL
/// allows it on the last input argument only.
fn take_variadic(tokens: &mut Vec<TokenWithSpan>) -> bool {
    let is_function = is_word(tokens.first(), Keyword::CREATE)
        && tokens
            .iter()
            .take(5)
            .any(|t| matches!(&t.token, Token::Word(w) if w.keyword == Keyword::FUNCTION));
    let at = tokens.iter().position(
        |t| matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("variadic")),
    );
    match at {
        Some(i) if is_function => {
            tokens.remove(i);
            true
        }
        _ => false,
    }
}

/// Removes `[CONSTRAINT name] NOT NULL` outside parentheses from `CREATE DOMAIN` and says
/// whether it was there.
fn take_domain_not_null(tokens: &mut Vec<TokenWithSpan>) -> bool {
    let is_domain =
        is_word(tokens.first(), Keyword::CREATE) && is_word(tokens.get(1), Keyword::DOMAIN);
    if !is_domain {
        return false;
    }
    let mut not_null = false;
    let mut depth = 0_usize;
    let mut i = 0;
    while i < tokens.len() {
        match tokens.get(i).map(|t| &t.token) {
            Some(Token::LParen) => depth += 1,
            Some(Token::RParen) => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0
            && is_word(tokens.get(i), Keyword::NOT)
            && is_word(tokens.get(i + 1), Keyword::NULL)
        {
            let start = match i.checked_sub(2) {
                Some(s) if is_word(tokens.get(s), Keyword::CONSTRAINT) => s,
                _ => i,
            };
            tokens.drain(start..i + 2);
            not_null = true;
            i = start;
        } else {
            i += 1;
        }
    }
    not_null
}

fn partition_of(mut p: Parser<'_>) -> Result<Parsed, ParserError> {
    p.expect_keywords(&[Keyword::CREATE, Keyword::TABLE])?;
    let if_not_exists = p.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
    let name = p.parse_object_name(false)?;
    p.expect_keywords(&[Keyword::PARTITION, Keyword::OF])?;
    let parent = p.parse_object_name(false)?;
    // Note: the bound (`FOR VALUES …`/`DEFAULT`) and per-partition column options that may
    // follow do not change the snapshot.
    Ok(Parsed::PartitionOf {
        name,
        parent,
        if_not_exists,
    })
}

fn range(mut p: Parser<'_>) -> Result<Parsed, ParserError> {
    p.expect_keywords(&[Keyword::CREATE, Keyword::TYPE])?;
    let name = p.parse_object_name(false)?;
    p.expect_keywords(&[Keyword::AS, Keyword::RANGE])?;
    p.expect_token(&Token::LParen)?;
    let mut subtype = None;
    loop {
        let option = p.parse_identifier()?;
        p.expect_token(&Token::Eq)?;
        if option.value.eq_ignore_ascii_case("subtype") {
            subtype = Some(p.parse_data_type()?);
        } else {
            // Other options (SUBTYPE_OPCLASS, COLLATION, CANONICAL …) name one object.
            p.parse_object_name(false)?;
        }
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    p.expect_token(&Token::RParen)?;
    let subtype = subtype.ok_or_else(|| {
        ParserError::ParserError("CREATE TYPE … AS RANGE needs SUBTYPE = <type>".to_owned())
    })?;
    Ok(Parsed::Range { name, subtype })
}
