//! The reasons behind a result column's type and nullability, built from the analyzer's
//! `OutputColumn::why`, the column's source in the snapshot and the statement's text.

use super::Statement;
use super::joins::{Join, joins, qualifier};
use super::names::format_type;
use qail_analyzer::OutputColumn;
use qail_schema::Snapshot;
use qail_schema::snapshot::{Column, Relation, RelationKind};

/// Why a column has its type and nullability.
pub(crate) struct Explanation {
    /// One line: the analyzer's reasons for NULL, or why the column is never NULL.
    pub(crate) summary: String,
    /// The whole chain, one reason per entry.
    pub(crate) reasons: Vec<String>,
}

/// Explains `col`, result column `index` of `st`.
pub(crate) fn explain(
    col: &OutputColumn,
    index: usize,
    st: &Statement,
    snapshot: &Snapshot,
) -> Explanation {
    let source = col.source.as_ref().and_then(|s| {
        let rel = snapshot.relation(Some(&s.schema), &s.table)?;
        Some((rel, rel.column(&s.column)?))
    });
    let mut reasons = Vec::new();
    if let Some((rel, c)) = source {
        reasons.push(source_reason(rel, c, snapshot));
    }
    if col.nullable {
        let mut joined = false;
        for why in &col.why {
            // The analyzer's "column o.code is nullable" repeats the source line above.
            let own = source.is_some_and(|(_, c)| {
                why.starts_with("column ") && why.ends_with(&format!(".{} is nullable", c.name))
            });
            if !own {
                let (text, join) = rephrase(why, st);
                joined |= join;
                reasons.push(text);
            }
        }
        if joined {
            reasons.push(format!("no WHERE predicate rejects NULL for {}", col.name));
        }
        return Explanation {
            summary: col.why.join("; "),
            reasons,
        };
    }
    let summary = not_null(col, index, st, source, &mut reasons);
    Explanation { summary, reasons }
}

/// Why a non-null column is never NULL: the one-line summary; adds to `reasons`.
fn not_null(
    col: &OutputColumn,
    index: usize,
    st: &Statement,
    source: Option<(&Relation, &Column)>,
    reasons: &mut Vec<String>,
) -> String {
    let summary = if st.sql.contains(&format!("\"{}!", col.name)) {
        "declared NOT NULL by the alias".to_owned()
    } else if let Some((rel, _)) = source
        && let Some((label, join)) = rescued(index, st, rel)
    {
        reasons.push(format!(
            "{label} is the right side of a {} JOIN (line {}), but a predicate (in WHERE or an \
             inner join's ON) rejects NULL for its columns",
            join.kind,
            st.line + join.line - 1
        ));
        format!(
            "right side of {} JOIN {label}, but a predicate rejects NULL",
            join.kind
        )
    } else {
        match source {
            Some((rel, c)) if rel.primary_key.contains(&c.name) => "primary key".to_owned(),
            Some((_, c)) if c.not_null => "NOT NULL column".to_owned(),
            Some(_) => format!("a predicate rejects NULL for {}", col.name),
            None => "the expression cannot be NULL".to_owned(),
        }
    };
    // The source line already says "primary key" or "NOT NULL", and a rescued join has its
    // sentence; the other summaries are reasons of their own.
    let said = matches!(summary.as_str(), "primary key" | "NOT NULL column")
        || summary.starts_with("right side of ");
    if !said {
        reasons.push(summary.clone());
    }
    summary
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
    if rel.primary_key.contains(&c.name) {
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

/// The outer join whose nullable side holds the relation result column `index` reads, when
/// the column is still non-null (a predicate rejected NULL): `(label, join)`.
fn rescued(index: usize, st: &Statement, rel: &Relation) -> Option<(String, Join)> {
    let lower = st.sql.to_ascii_lowercase();
    if !(lower.contains("left") || lower.contains("full")) {
        return None;
    }
    let q = qualifier(&st.sql, index)?;
    let join = joins(&st.sql)
        .into_iter()
        .find(|j| matches!(j.kind, "LEFT" | "FULL") && j.brings(&rel.name, Some(&q)))?;
    let label = if q == rel.name {
        q
    } else {
        format!("{} AS {q}", rel.name)
    };
    Some((label, join))
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
    joins(&st.sql)
        .iter()
        .find(|j| j.brings(table, alias))
        .map(|j| st.line + j.line - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::analyze_file;

    fn fixture() -> Snapshot {
        serde_json::from_str(include_str!(
            "../../../qail-analyzer/tests/fixtures/app.schema.json"
        ))
        .expect("the fixture snapshot parses")
    }

    fn reasons(sql: &str, column: &str) -> (String, Vec<String>) {
        let snap = fixture();
        let st = analyze_file("q.sql", sql, &snap).remove(0);
        let a = st.result.as_ref().expect("the statement checks");
        let i = a
            .columns
            .iter()
            .position(|c| c.name == column)
            .expect("column");
        let e = explain(&a.columns[i], i, &st, &snap);
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
    fn a_left_join_side_rescued_by_where_says_so() {
        let sql = "SELECT d.name AS destination\nFROM odyssey_connections c\n\
                   LEFT JOIN harbors d ON d.id = c.destination_harbor_id\nWHERE d.country = $1";
        let (summary, chain) = reasons(sql, "destination");
        assert_eq!(
            summary,
            "right side of LEFT JOIN harbors AS d, but a predicate rejects NULL"
        );
        assert_eq!(
            chain,
            [
                "column public.harbors.name is text NOT NULL",
                "harbors AS d is the right side of a LEFT JOIN (line 3), but a predicate (in \
                 WHERE or an inner join's ON) rejects NULL for its columns",
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
        assert_eq!(summary, "a predicate rejects NULL for code");
        assert_eq!(chain.len(), 2, "{chain:?}");
        let (summary, _) = reasons("SELECT count(*) AS n FROM harbors", "n");
        assert_eq!(summary, "the expression cannot be NULL");
        let (summary, _) = reasons("SELECT max(name) AS m FROM harbors", "m");
        assert_eq!(summary, "max() is NULL when there are no input rows");
        let (summary, _) = reasons("SELECT code AS \"code!\" FROM harbors", "code");
        assert_eq!(summary, "declared NOT NULL by the alias");
    }
}
