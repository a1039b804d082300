//! Finding a statement's joins in its text, to say on which line a join makes columns
//! nullable, and which relation a plain `alias.column` select item reads.

use sqlparser::ast::{Expr, SelectItem, SetExpr, Statement as Ast};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer, Word};

/// A `JOIN` of the statement.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Join {
    /// `LEFT`, `RIGHT`, `FULL`, or empty for an inner or cross join.
    pub(crate) kind: &'static str,
    /// 1-based line of the `JOIN` keyword in the statement.
    pub(crate) line: usize,
    /// The identifiers after `JOIN` up to `ON`/`USING` (table, schema, alias), normalized
    /// like PostgreSQL does (unquoted ones lower-cased).
    pub(crate) names: Vec<String>,
}

impl Join {
    /// Whether this join brings in `table` (with `alias`, if given).
    pub(crate) fn brings(&self, table: &str, alias: Option<&str>) -> bool {
        let has = |n: &str| self.names.iter().any(|a| a == n);
        has(table) && alias.is_none_or(has)
    }
}

/// The statement's joins, in order; empty when it does not tokenize.
pub(crate) fn joins(sql: &str) -> Vec<Join> {
    let Ok(tokens) = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize_with_location() else {
        return Vec::new();
    };
    let tokens: Vec<_> = tokens
        .into_iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let keyword = |i: usize| match tokens.get(i).map(|t| &t.token) {
        Some(Token::Word(w)) => w.keyword,
        _ => Keyword::NoKeyword,
    };
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if keyword(i) != Keyword::JOIN {
            continue;
        }
        let before = match i.checked_sub(1).map(keyword) {
            Some(Keyword::OUTER) => i.checked_sub(2).map(keyword),
            other => other,
        };
        let kind = match before {
            Some(Keyword::LEFT) => "LEFT",
            Some(Keyword::RIGHT) => "RIGHT",
            Some(Keyword::FULL) => "FULL",
            _ => "",
        };
        let names = tokens[i + 1..]
            .iter()
            .take(8)
            .map_while(|t| match &t.token {
                Token::Word(w) if !matches!(w.keyword, Keyword::ON | Keyword::USING) => {
                    Some(norm(w))
                }
                Token::Period => Some(".".to_owned()),
                _ => None,
            })
            .collect();
        out.push(Join {
            kind,
            line: usize::try_from(t.span.start.line).unwrap_or(1).max(1),
            names,
        });
    }
    out
}

fn norm(w: &Word) -> String {
    match w.quote_style {
        Some(_) => w.value.clone(),
        None => w.value.to_lowercase(),
    }
}

/// The qualifier of result column `index` when the statement is a plain SELECT whose select
/// list has no `*` and that item is `qualifier.column` (`o.name AS origin` gives `o`).
pub(crate) fn qualifier(sql: &str, index: usize) -> Option<String> {
    let statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).ok()?;
    let [Ast::Query(query)] = statements.as_slice() else {
        return None;
    };
    let SetExpr::Select(select) = query.body.as_ref() else {
        return None;
    };
    let items = &select.projection;
    if items.iter().any(|i| {
        matches!(
            i,
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
        )
    }) {
        return None;
    }
    let expr = match items.get(index)? {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => e,
        _ => return None,
    };
    match expr {
        Expr::CompoundIdentifier(parts) if parts.len() == 2 => {
            let q = &parts[0];
            Some(match q.quote_style {
                Some(_) => q.value.clone(),
                None => q.value.to_lowercase(),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_joins_with_kind_line_and_names() {
        let sql = "SELECT 1 FROM a\nJOIN b ON true\nLEFT OUTER JOIN s.\"Tbl\" AS x USING (id)\n\
                   full join c ON true";
        let js = joins(sql);
        let kinds: Vec<(&str, usize)> = js.iter().map(|j| (j.kind, j.line)).collect();
        assert_eq!(kinds, [("", 2), ("LEFT", 3), ("FULL", 4)]);
        assert_eq!(js[1].names, ["s", ".", "Tbl", "as", "x"]);
        assert!(js[1].brings("Tbl", Some("x")));
        assert!(!js[1].brings("tbl", None));
        assert!(js[2].brings("c", None));
    }

    #[test]
    fn qualifier_of_plain_items_only() {
        let sql = "SELECT o.name AS origin, \"D\".id, count(*), name FROM t";
        assert_eq!(qualifier(sql, 0).as_deref(), Some("o"));
        assert_eq!(qualifier(sql, 1).as_deref(), Some("D"));
        assert_eq!(qualifier(sql, 2), None);
        assert_eq!(qualifier(sql, 3), None);
        assert_eq!(qualifier("SELECT o.*, o.id FROM t o", 1), None);
        assert_eq!(qualifier("DELETE FROM t", 0), None);
    }
}
