//! The reasons behind a result column's type and nullability, built from the analyzer's
//! `OutputColumn::why`, the column's source in the snapshot and the statement's text.

use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer};

use super::Statement;
use super::names::format_type;
use crate::Snapshot;
use crate::check::OutputColumn;
use crate::snapshot::{Column, Relation, RelationKind};

/// Why a column has its type and nullability.
pub(crate) struct Explanation {
    /// One line: the analyzer's reasons for NULL, or why the column is never NULL.
    pub(crate) summary: String,
    /// The whole chain, one reason per entry.
    pub(crate) reasons: Vec<String>,
}

/// Explains `col`, a result column of `st`.
pub(crate) fn explain(col: &OutputColumn, st: &Statement, snapshot: &Snapshot) -> Explanation {
    let source = col.source.as_ref().and_then(|s| {
        let rel = snapshot.relation(Some(&s.schema), &s.table)?;
        Some((rel, rel.column(&s.column)?))
    });
    let mut reasons = Vec::new();
    if let Some((rel, c)) = source {
        reasons.push(source_reason(rel, c, snapshot));
    }
    let mut joined = false;
    for why in &col.why {
        if source
            .is_some_and(|(rel, c)| *why == format!("column {}.{} is nullable", rel.name, c.name))
        {
            continue;
        }
        let (text, join) = rephrase(why, st);
        joined |= join;
        reasons.push(text);
    }
    if joined {
        reasons.push(format!("no WHERE predicate rejects NULL for {}", col.name));
    }
    let summary = if col.nullable {
        col.why.join("; ")
    } else {
        not_null_summary(col, st, source)
    };
    if !col.nullable && (source.is_none() || summary.starts_with("declared")) {
        reasons.push(summary.clone());
    } else if !col.nullable && source.is_some_and(|(_, c)| !c.not_null) {
        reasons.push(format!("{summary} for {}", col.name));
    }
    Explanation { summary, reasons }
}

/// `column public.harbors.name is text NOT NULL`, and the like.
fn source_reason(rel: &Relation, c: &Column, snapshot: &Snapshot) -> String {
    let what = format!(
        "column {}.{}.{} is {}",
        rel.schema,
        rel.name,
        c.name,
        format_type(&c.ty, snapshot)
    );
    if rel.primary_key.iter().any(|k| *k == c.name) {
        format!(
            "{what}, part of the primary key of {}.{}",
            rel.schema, rel.name
        )
    } else if c.not_null {
        format!("{what} NOT NULL")
    } else if rel.kind != RelationKind::Table {
        format!("{what}; PostgreSQL records no NOT NULL for the columns of a view")
    } else {
        format!("{what} and nullable")
    }
}

/// Why a non-null column is never NULL, in a few words.
fn not_null_summary(
    col: &OutputColumn,
    st: &Statement,
    source: Option<(&Relation, &Column)>,
) -> String {
    if st.sql.contains(&format!("\"{}!", col.name)) {
        return "declared NOT NULL by the alias".to_owned();
    }
    match source {
        Some((rel, c)) if rel.primary_key.contains(&c.name) => "primary key".to_owned(),
        Some((_, c)) if c.not_null => "NOT NULL column".to_owned(),
        Some(_) => "a predicate rejects NULL".to_owned(),
        None => "the expression cannot be NULL".to_owned(),
    }
}

/// Rewords an analyzer reason as a sentence; `true` when it is an outer join's.
fn rephrase(why: &str, st: &Statement) -> (String, bool) {
    let join = |rest: &str| -> Option<(String, String)> {
        let (word, label) = rest.split_once(" JOIN ")?;
        let line = join_line(st, label)
            .map(|l| format!(" (line {l})"))
            .unwrap_or_default();
        Some((format!("a {word} JOIN{line}"), label.to_owned()))
    };
    if let Some((join, label)) = why.strip_prefix("right side of ").and_then(join) {
        let text = format!("{label} is the right side of {join}, so its columns may be NULL");
        return (text, true);
    }
    if let Some((join, label)) = why.strip_prefix("left side of ").and_then(join) {
        let text = format!(
            "the tables before {label} are the left side of {join}, so their columns may be NULL"
        );
        return (text, true);
    }
    (why.to_owned(), false)
}

/// The file line of the JOIN that brings in `label` (`harbors` or `harbors AS origin`; for a
/// list, the first), if it can be found.
fn join_line(st: &Statement, label: &str) -> Option<usize> {
    let first = label.split(", ").next()?;
    let (table, alias) = match first.split_once(" AS ") {
        Some((t, a)) => (t, Some(a)),
        None => (first, None),
    };
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, &st.sql)
        .tokenize_with_location()
        .ok()?;
    let words: Vec<_> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let norm = |w: &sqlparser::tokenizer::Word| match w.quote_style {
        Some(_) => w.value.clone(),
        None => w.value.to_lowercase(),
    };
    words.iter().enumerate().find_map(|(i, t)| {
        let Token::Word(w) = &t.token else {
            return None;
        };
        if w.keyword != Keyword::JOIN {
            return None;
        }
        let after: Vec<String> = words[i + 1..]
            .iter()
            .take(6)
            .map_while(|t| match &t.token {
                Token::Word(w) if !matches!(w.keyword, Keyword::ON | Keyword::USING) => {
                    Some(norm(w))
                }
                Token::Period => Some(".".to_owned()),
                _ => None,
            })
            .collect();
        let has = |n: &str| after.iter().any(|a| a == n);
        (has(table) && alias.is_none_or(has)).then(|| {
            let line = usize::try_from(t.span.start.line).unwrap_or(1).max(1);
            st.line + line - 1
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::analyze_file;

    fn fixture() -> Snapshot {
        serde_json::from_str(include_str!("../../tests/fixtures/app.schema.json"))
            .expect("the fixture snapshot parses")
    }

    fn reasons(sql: &str, column: &str) -> (String, Vec<String>) {
        let snap = fixture();
        let st = analyze_file("q.sql", sql, &snap).remove(0);
        let a = st.result.as_ref().expect("the statement checks");
        let col = a.columns.iter().find(|c| c.name == column).expect("column");
        let e = explain(col, &st, &snap);
        (e.summary, e.reasons)
    }

    #[test]
    fn left_join_chain_names_the_join_line() {
        let sql = "\n\nSELECT c.id, origin.name AS origin\nFROM odyssey_connections c\n\
                   LEFT JOIN harbors AS origin ON origin.id = c.origin_harbor_id";
        let (summary, chain) = reasons(sql, "origin");
        assert_eq!(summary, "right side of LEFT JOIN harbors AS origin");
        assert_eq!(
            chain,
            [
                "column public.harbors.name is text NOT NULL",
                "harbors AS origin is the right side of a LEFT JOIN (line 5), so its columns \
                 may be NULL",
                "no WHERE predicate rejects NULL for origin",
            ]
        );
        let (summary, chain) = reasons(sql, "id");
        assert_eq!(summary, "primary key");
        assert_eq!(
            chain,
            [
                "column public.odyssey_connections.id is uuid, part of the primary key of \
              public.odyssey_connections"
            ]
        );
    }

    #[test]
    fn nullable_and_computed_columns() {
        let (summary, chain) = reasons("SELECT code FROM harbors", "code");
        assert_eq!(summary, "column harbors.code is nullable");
        assert_eq!(
            chain,
            ["column public.harbors.code is character varying and nullable"]
        );
        let (summary, chain) = reasons("SELECT code FROM harbors WHERE code IS NOT NULL", "code");
        assert_eq!(summary, "a predicate rejects NULL");
        assert_eq!(chain.len(), 2, "{chain:?}");
        let (summary, _) = reasons("SELECT count(*) AS n FROM harbors", "n");
        assert_eq!(summary, "the expression cannot be NULL");
        let (summary, _) = reasons("SELECT max(name) AS m FROM harbors", "m");
        assert_eq!(summary, "max() is NULL when there are no input rows");
        let (summary, _) = reasons("SELECT code AS \"code!\" FROM harbors", "code");
        assert_eq!(summary, "declared NOT NULL by the alias");
    }
}
