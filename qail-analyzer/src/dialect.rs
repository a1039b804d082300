//! The parser's dialect: sqlparser's PostgreSQL dialect with PostgreSQL's own rule for
//! keywords written as names. sqlparser keeps one keyword list for every dialect, so alone
//! it reads `SELECT interval FROM t` as an interval literal (PostgreSQL reads the column
//! `interval`), refuses `SELECT exists FROM t`, and takes reserved words such as `select` as
//! column names. Here a word is a name exactly where PostgreSQL's grammar makes it one
//! (`ColId`, `ColLabel`, `BareColLabel` over the categories of [`crate::keywords`]).

use std::any::TypeId;
use std::borrow::Cow;

use sqlparser::ast::{Expr, Function, FunctionArguments, ObjectName};
use sqlparser::dialect::{Dialect, PostgreSqlDialect};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use crate::keywords::KEYWORDS;

/// PostgreSQL's category of a word: `U`, `C`, `T` or `R`, or `None` when it is no keyword.
pub(crate) fn category(word: &str) -> Option<u8> {
    let lower = word.to_ascii_lowercase();
    KEYWORDS
        .binary_search_by(|(w, _, _)| (*w).cmp(lower.as_str()))
        .ok()
        .map(|i| KEYWORDS[i].1)
}

/// Whether PostgreSQL takes the unquoted word as a column, table or alias name (`ColId`).
pub(crate) fn is_col_id(word: &str) -> bool {
    matches!(category(word), None | Some(b'U' | b'C'))
}

/// An identifier as PostgreSQL's `quote_ident` writes it: bare when it is lower-case letters,
/// digits and `_` (not starting with a digit) and no keyword other than an unreserved one;
/// otherwise in double quotes with `"` doubled.
pub fn quote_ident(ident: &str) -> Cow<'_, str> {
    let bare = ident
        .bytes()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == b'_')
        && ident
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
        && matches!(category(ident), None | Some(b'U'));
    if bare {
        Cow::Borrowed(ident)
    } else {
        Cow::Owned(format!("\"{}\"", ident.replace('"', "\"\"")))
    }
}

/// Whether the word may follow a select-list item as its alias without `AS` (`BareColLabel`).
fn is_bare_label(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    KEYWORDS
        .binary_search_by(|(w, _, _)| (*w).cmp(lower.as_str()))
        .map_or(true, |i| KEYWORDS[i].2)
}

/// Reserved and type-or-function keywords that begin an expression without parentheses.
const EXPRESSION_KEYWORDS: &[&str] = &[
    "array",
    "case",
    "current_catalog",
    "current_date",
    "current_role",
    "current_schema",
    "current_time",
    "current_timestamp",
    "current_user",
    "default",
    "false",
    "localtime",
    "localtimestamp",
    "not",
    "null",
    "session_user",
    "true",
    "user",
];

/// Words that continue a type name written before a literal (`timestamp with time zone '…'`,
/// `character varying '…'`, `double precision '…'`).
const TYPE_CONTINUATIONS: &[Keyword] = &[
    Keyword::WITH,
    Keyword::WITHOUT,
    Keyword::VARYING,
    Keyword::PRECISION,
    Keyword::CHARACTER,
    Keyword::CHAR,
];

/// sqlparser's PostgreSQL dialect, reading keywords as names where PostgreSQL does.
#[derive(Debug)]
pub(crate) struct Postgres(PostgreSqlDialect);

/// The dialect, for parsers that outlive the function making them.
pub(crate) static POSTGRES: Postgres = Postgres(PostgreSqlDialect {});

impl Default for Postgres {
    fn default() -> Self {
        Self(PostgreSqlDialect {})
    }
}

impl Postgres {
    /// The start of an expression at a keyword: a name, an error for a reserved word used as
    /// one, or `None` to let sqlparser read the keyword's own syntax.
    fn keyword_prefix(parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        let next = parser.peek_token();
        let Token::Word(word) = &next.token else {
            return None;
        };
        if word.quote_style.is_some()
            || (word.keyword == Keyword::NoKeyword && category(&word.value).is_none())
        {
            return None;
        }
        let after = parser.peek_nth_token(1).token;
        let lower = word.value.to_ascii_lowercase();
        // Note: after a dot any keyword is a field or column name (`ColLabel`).
        let after_dot = parser.get_current_token().token == Token::Period;
        let literal_follows = matches!(
            after,
            Token::SingleQuotedString(_)
                | Token::EscapedStringLiteral(_)
                | Token::UnicodeStringLiteral(_)
                | Token::DollarQuotedString(_)
                | Token::NationalStringLiteral(_)
                | Token::HexStringLiteral(_)
        );
        let special = after == Token::LParen
            || literal_follows
            || matches!(&after, Token::Word(w) if w.quote_style.is_none()
                && TYPE_CONTINUATIONS.contains(&w.keyword));
        if after_dot && after != Token::LParen {
            parser.advance_token();
            return Some(Ok(Expr::Identifier(word.clone().into_ident(next.span))));
        }
        if special {
            return None;
        }
        if is_col_id(&lower) {
            parser.advance_token();
            let root = Expr::Identifier(word.clone().into_ident(next.span));
            return Some(parser.parse_compound_expr(root, Vec::new()));
        }
        if matches!(lower.as_str(), "current_role" | "current_schema") {
            // Note: sqlparser reads these two as column names; PostgreSQL calls the function.
            parser.advance_token();
            return Some(Ok(Expr::Function(Function {
                name: ObjectName::from(vec![word.clone().into_ident(next.span)]),
                uses_odbc_syntax: false,
                parameters: FunctionArguments::None,
                args: FunctionArguments::None,
                null_treatment: None,
                filter: None,
                over: None,
                within_group: vec![],
            })));
        }
        if EXPRESSION_KEYWORDS.contains(&lower.as_str())
            && (lower != "array" || after == Token::LBracket)
        {
            return None;
        }
        // Note: sqlparser's own wording and location, which the diagnostics point with; a
        // reserved word is never read as a name here (PostgreSQL needs it in double quotes).
        Some(Err(ParserError::ParserError(format!(
            "Expected an expression, found: {} at Line: {}, Column: {}",
            word.value, next.span.start.line, next.span.start.column
        ))))
    }
}

impl Dialect for Postgres {
    // Note: sqlparser's `dialect_of!` checks see the PostgreSQL dialect.
    fn dialect(&self) -> TypeId {
        TypeId::of::<PostgreSqlDialect>()
    }

    fn is_reserved_for_identifier(&self, kw: Keyword) -> bool {
        // Note: a reserved word whose own syntax failed to parse is an error, not a name.
        let name = format!("{kw:?}");
        !is_col_id(&name) || self.0.is_reserved_for_identifier(kw)
    }

    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        Self::keyword_prefix(parser).or_else(|| self.0.parse_prefix(parser))
    }

    fn is_select_item_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser) -> bool {
        if explicit {
            return true;
        }
        // Note: the candidate word has just been read.
        match &parser.get_current_token().token {
            Token::Word(w) if w.quote_style.is_none() => is_bare_label(&w.value),
            _ => self.0.is_select_item_alias(explicit, kw, parser),
        }
    }

    fn is_table_factor_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser) -> bool {
        match &parser.get_current_token().token {
            Token::Word(w) if w.quote_style.is_none() => {
                // Note: `UPDATE t SET col = …` — SET followed by a name or `(` starts the
                // SET list; elsewhere it is an alias like any unreserved word.
                let set_list = *kw == Keyword::SET
                    && match parser.peek_token().token {
                        Token::LParen => true,
                        Token::Word(next) => next.quote_style.is_some() || is_col_id(&next.value),
                        _ => false,
                    };
                is_col_id(&w.value) && (explicit || !set_list)
            }
            _ => self.0.is_table_factor_alias(explicit, kw, parser),
        }
    }

    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        self.0.identifier_quote_style(identifier)
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.0.is_delimited_identifier_start(ch)
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        self.0.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        self.0.is_identifier_part(ch)
    }

    fn supports_unicode_string_literal(&self) -> bool {
        self.0.supports_unicode_string_literal()
    }

    fn is_custom_operator_part(&self, ch: char) -> bool {
        self.0.is_custom_operator_part(ch)
    }

    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        self.0.get_next_precedence(parser)
    }

    fn supports_filter_during_aggregation(&self) -> bool {
        self.0.supports_filter_during_aggregation()
    }

    fn supports_group_by_expr(&self) -> bool {
        self.0.supports_group_by_expr()
    }

    fn prec_value(&self, prec: sqlparser::dialect::Precedence) -> u8 {
        self.0.prec_value(prec)
    }

    fn allow_extract_custom(&self) -> bool {
        self.0.allow_extract_custom()
    }

    fn allow_extract_single_quotes(&self) -> bool {
        self.0.allow_extract_single_quotes()
    }

    fn supports_create_index_with_clause(&self) -> bool {
        self.0.supports_create_index_with_clause()
    }

    fn supports_explain_with_utility_options(&self) -> bool {
        self.0.supports_explain_with_utility_options()
    }

    fn supports_listen_notify(&self) -> bool {
        self.0.supports_listen_notify()
    }

    fn supports_factorial_operator(&self) -> bool {
        self.0.supports_factorial_operator()
    }

    fn supports_comment_on(&self) -> bool {
        self.0.supports_comment_on()
    }

    fn supports_load_extension(&self) -> bool {
        self.0.supports_load_extension()
    }

    fn supports_named_fn_args_with_colon_operator(&self) -> bool {
        self.0.supports_named_fn_args_with_colon_operator()
    }

    fn supports_named_fn_args_with_expr_name(&self) -> bool {
        self.0.supports_named_fn_args_with_expr_name()
    }

    fn supports_empty_projections(&self) -> bool {
        self.0.supports_empty_projections()
    }

    fn supports_nested_comments(&self) -> bool {
        self.0.supports_nested_comments()
    }

    fn supports_string_escape_constant(&self) -> bool {
        self.0.supports_string_escape_constant()
    }

    fn supports_numeric_literal_underscores(&self) -> bool {
        self.0.supports_numeric_literal_underscores()
    }

    fn supports_array_typedef_with_brackets(&self) -> bool {
        self.0.supports_array_typedef_with_brackets()
    }

    fn supports_geometric_types(&self) -> bool {
        self.0.supports_geometric_types()
    }

    fn supports_set_names(&self) -> bool {
        self.0.supports_set_names()
    }

    fn supports_alter_column_type_using(&self) -> bool {
        self.0.supports_alter_column_type_using()
    }

    fn supports_notnull_operator(&self) -> bool {
        self.0.supports_notnull_operator()
    }

    fn supports_interval_options(&self) -> bool {
        self.0.supports_interval_options()
    }
}
