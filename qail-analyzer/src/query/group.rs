//! Grouping: in a query with GROUP BY or aggregates, every column outside an aggregate must
//! be grouped (or functionally dependent on a grouped primary key), as PostgreSQL requires.

use sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, Select, SelectItem, Value,
};

use crate::call::builtins;
use crate::ctx::Ctx;
use crate::scope::{Scope, norm, parts};

/// The grouping expressions of GROUP BY with GROUPING SETS, ROLLUP and CUBE flattened, and
/// those among them that are absent from some grouping set (they are NULL in its rows).
pub(crate) fn flatten(group: &[Expr]) -> (Vec<&Expr>, Vec<&Expr>) {
    let mut all = Vec::new();
    let mut nullable = Vec::new();
    for g in group {
        match g {
            Expr::Rollup(sets) | Expr::Cube(sets) => {
                for e in sets.iter().flatten() {
                    all.push(e);
                    nullable.push(e);
                }
            }
            Expr::GroupingSets(sets) => {
                for e in sets.iter().flatten() {
                    all.push(e);
                    let text = e.to_string();
                    if !sets
                        .iter()
                        .all(|set| set.iter().any(|x| x.to_string() == text))
                    {
                        nullable.push(e);
                    }
                }
            }
            other => all.push(other),
        }
    }
    (all, nullable)
}

/// Reports ungrouped columns in the target list and HAVING of `s`.
pub(crate) fn check(cx: &mut Ctx, sc: &Scope, s: &Select) {
    let (flat, _) = match &s.group_by {
        GroupByExpr::Expressions(exprs, _) => flatten(exprs),
        GroupByExpr::All(_) => return,
    };
    let group: &[&Expr] = &flat;
    let items: Vec<&Expr> = s
        .projection
        .iter()
        .filter_map(|i| match i {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => Some(e),
            _ => None,
        })
        .collect();
    let aggregated =
        items.iter().any(|e| has_aggregate(e)) || s.having.as_ref().is_some_and(has_aggregate);
    if group.is_empty() && !aggregated {
        return;
    }
    // Note: `*` with GROUP BY is valid when grouped by primary keys; not checked here.
    if s.projection.iter().any(|i| {
        matches!(
            i,
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
        )
    }) {
        return;
    }
    let out_of_range = |g: &Expr| match g {
        Expr::Value(v) if matches!(v.value, Value::Number(..)) => v
            .value
            .to_string()
            .parse::<usize>()
            .map_or(true, |n| n == 0 || n > items.len()),
        _ => false,
    };
    if group.iter().copied().any(out_of_range) {
        return;
    }
    let grouped = Grouped::new(sc, s, group, &items);
    let mut bad = Vec::new();
    for e in items.iter().copied().chain(s.having.as_ref()) {
        grouped.ungrouped(sc, e, &mut bad);
    }
    for (e, shown) in bad {
        let msg = format!(
            "column \"{shown}\" must appear in the GROUP BY clause or be used in an aggregate function"
        );
        let hint = format!("add {shown} to GROUP BY, or aggregate it, e.g. max({shown})");
        cx.error(cx.range(e), msg, Some(hint));
    }
}

/// An expression's SQL text with unquoted words folded to lower case, as PostgreSQL folds
/// identifiers and keywords: `LOWER(Name)` and `lower(name)` are the same expression.
pub(crate) fn canonical(e: &Expr) -> String {
    let text = e.to_string();
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None => {
                out.extend(c.to_lowercase());
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// What GROUP BY makes available.
struct Grouped<'a> {
    /// Grouping expressions as written.
    exprs: Vec<&'a Expr>,
    /// Their [`canonical`] texts, which expressions are compared by.
    texts: Vec<String>,
    /// Grouped columns as (relation, column).
    cols: Vec<(usize, usize)>,
}

impl<'a> Grouped<'a> {
    fn new(sc: &Scope, s: &'a Select, group: &[&'a Expr], items: &[&'a Expr]) -> Self {
        let aliases: Vec<(String, &Expr)> = s
            .projection
            .iter()
            .filter_map(|i| match i {
                SelectItem::ExprWithAlias { expr, alias } => Some((norm(alias), expr)),
                _ => None,
            })
            .collect();
        let mut resolved: Vec<&Expr> = Vec::new();
        for g in group.iter().copied() {
            match g {
                Expr::Value(v) if matches!(v.value, Value::Number(..)) => {
                    let n = v.value.to_string().parse::<usize>().unwrap_or(0);
                    resolved.extend(n.checked_sub(1).and_then(|i| items.get(i)).copied());
                }
                Expr::Identifier(id) if sc.lookup(&[], &norm(id)).is_err() => {
                    resolved.extend(
                        aliases
                            .iter()
                            .filter(|(a, _)| *a == norm(id))
                            .map(|(_, e)| *e),
                    );
                }
                other => resolved.push(other),
            }
        }
        let cols = resolved.iter().filter_map(|e| column_at(sc, e)).collect();
        let texts = resolved.iter().map(|e| canonical(e)).collect();
        Grouped {
            exprs: resolved,
            texts,
            cols,
        }
    }

    /// Whether every primary-key column of relation `r` is grouped.
    fn key_grouped(&self, sc: &Scope, r: usize) -> bool {
        let pk = &sc.rels[r].primary_key;
        !pk.is_empty() && pk.iter().all(|c| self.cols.contains(&(r, *c)))
    }

    /// Collects column references of `e` that are neither grouped nor inside an aggregate.
    fn ungrouped<'e>(&self, sc: &Scope, e: &'e Expr, bad: &mut Vec<(&'e Expr, String)>) {
        if self.exprs.contains(&e) || self.texts.contains(&canonical(e)) {
            return;
        }
        match e {
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
                let Some((r, c)) = column_at(sc, e) else {
                    return;
                };
                if !self.cols.contains(&(r, c)) && !self.key_grouped(sc, r) {
                    bad.push((
                        e,
                        format!("{}.{}", sc.rels[r].name, sc.rels[r].cols[c].name),
                    ));
                }
            }
            // Note: an ordered-set aggregate's direct arguments (`rank(x) WITHIN GROUP (…)`)
            // are read once per group, like the select list.
            Expr::Function(f) if f.over.is_none() && is_aggregate(f) => {
                if !f.within_group.is_empty() {
                    children(e)
                        .into_iter()
                        .for_each(|c| self.ungrouped(sc, c, bad));
                }
            }
            other => children(other)
                .into_iter()
                .for_each(|c| self.ungrouped(sc, c, bad)),
        }
    }
}

/// (relation, column) of a plain column reference in this query level.
fn column_at(sc: &Scope, e: &Expr) -> Option<(usize, usize)> {
    let (qual, name) = match e {
        // Note: `GROUP BY (x)` groups by x.
        Expr::Nested(inner) => return column_at(sc, inner),
        Expr::Identifier(id) => (Vec::new(), norm(id)),
        Expr::CompoundIdentifier(ids) => {
            let (last, q) = ids.split_last()?;
            (q.iter().map(norm).collect(), norm(last))
        }
        _ => return None,
    };
    let f = sc.lookup(&qual, &name).ok()?;
    if f.depth > 0 { None } else { f.at }
}

fn is_aggregate(f: &sqlparser::ast::Function) -> bool {
    let name = parts(&f.name).last().map(|i| norm(i)).unwrap_or_default();
    builtins::is_aggregate(&name)
}

/// Whether `e` calls an aggregate outside any subquery.
pub(crate) fn has_aggregate(e: &Expr) -> bool {
    match e {
        Expr::Function(f) if f.over.is_none() && is_aggregate(f) => true,
        Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } => false,
        other => children(other).into_iter().any(has_aggregate),
    }
}

/// Whether `e` calls an aggregate of this query level outside any subquery: one whose
/// arguments read a column of this level, or no column at all (`count(*)`). An aggregate
/// over columns of enclosing queries only belongs to the enclosing query whose columns it reads.
pub(crate) fn has_local_aggregate(sc: &Scope, e: &Expr) -> bool {
    match e {
        Expr::Function(f) if f.over.is_none() && is_aggregate(f) => {
            let mut depths = Vec::new();
            column_depths(sc, e, &mut depths);
            depths.is_empty() || depths.contains(&0)
        }
        Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } => false,
        other => children(other)
            .into_iter()
            .any(|c| has_local_aggregate(sc, c)),
    }
}

/// The query levels (0 = this one) of the columns `e` reads outside any subquery.
fn column_depths(sc: &Scope, e: &Expr, out: &mut Vec<usize>) {
    let (qual, name) = match e {
        Expr::Identifier(id) => (Vec::new(), norm(id)),
        Expr::CompoundIdentifier(ids) => match ids.split_last() {
            Some((last, q)) => (q.iter().map(norm).collect(), norm(last)),
            None => return,
        },
        other => {
            for c in children(other) {
                column_depths(sc, c, out);
            }
            return;
        }
    };
    if let Ok(found) = sc.lookup(&qual, &name) {
        out.push(found.depth);
    }
}

/// Whether `e` calls a window function (`… OVER …`) outside any subquery.
pub(crate) fn has_window(e: &Expr) -> bool {
    match e {
        Expr::Function(f) if f.over.is_some() => true,
        Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } => false,
        other => children(other).into_iter().any(has_window),
    }
}

/// The direct subexpressions of the forms grouping cares about (subqueries are not entered).
pub(crate) fn children(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::BinaryOp { left, right, .. } => vec![left, right],
        Expr::UnaryOp { expr, .. }
        | Expr::Nested(expr)
        | Expr::Cast { expr, .. }
        | Expr::IsNull(expr)
        | Expr::IsNotNull(expr)
        | Expr::IsTrue(expr)
        | Expr::IsFalse(expr)
        | Expr::Collate { expr, .. }
        | Expr::Extract { expr, .. }
        | Expr::AtTimeZone {
            timestamp: expr, ..
        } => vec![expr],
        Expr::IsDistinctFrom(a, b) | Expr::IsNotDistinctFrom(a, b) => vec![a, b],
        Expr::Between {
            expr, low, high, ..
        } => vec![expr, low, high],
        Expr::InList { expr, list, .. } => std::iter::once(expr.as_ref()).chain(list).collect(),
        Expr::Like { expr, pattern, .. } | Expr::ILike { expr, pattern, .. } => vec![expr, pattern],
        Expr::AnyOp { left, right, .. } | Expr::AllOp { left, right, .. } => vec![left, right],
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => operand
            .iter()
            .map(|o| o.as_ref())
            .chain(conditions.iter().flat_map(|w| [&w.condition, &w.result]))
            .chain(else_result.iter().map(|e| e.as_ref()))
            .collect(),
        Expr::Function(f) => match &f.args {
            FunctionArguments::List(list) => list
                .args
                .iter()
                .filter_map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        },
        Expr::Tuple(items) => items.iter().collect(),
        Expr::Array(a) => a.elem.iter().collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    #[test]
    fn aggregates_and_window_functions_are_refused_where_postgresql_refuses_them() {
        let ddl = "CREATE TABLE t (a int4 NOT NULL, b int4);".to_owned();
        let (snap, _) = qail_schema::ddl::from_sql(&[("t.sql".to_owned(), ddl)]);
        let refused = |sql: &str| match crate::analyze(sql, &snap) {
            Ok(_) => None,
            Err(d) => Some(d[0].message.clone()),
        };
        let nested = Some("aggregate function calls cannot be nested".to_owned());
        assert_eq!(refused("SELECT max(min(a)) FROM t"), nested);
        assert_eq!(
            refused("SELECT max(a) FILTER (WHERE sum(b) > 0) FROM t"),
            nested
        );
        assert_eq!(
            refused("SELECT a FROM t WHERE row_number() OVER () < 3").as_deref(),
            Some("window functions are not allowed in WHERE")
        );
        assert_eq!(
            refused("SELECT a FROM t WHERE sum(a) > 0").as_deref(),
            Some("aggregate functions are not allowed in WHERE")
        );
        assert_eq!(
            refused("SELECT rank(a) WITHIN GROUP (ORDER BY b) FROM t").as_deref(),
            Some(
                "column \"t.a\" must appear in the GROUP BY clause or be used in an aggregate function"
            )
        );
        assert_eq!(
            refused("SELECT a, rank(a) WITHIN GROUP (ORDER BY b) FROM t GROUP BY a"),
            None
        );
        assert_eq!(
            refused("SELECT a, rank(a) WITHIN GROUP (ORDER BY b) FROM t GROUP BY (a)"),
            None
        );
        // In a subquery, an aggregate reading a column of the subquery is the subquery's.
        assert_eq!(
            refused(
                "SELECT a FROM t o GROUP BY a HAVING EXISTS (SELECT 1 FROM t i WHERE sum(o.b + i.b) = i.b)"
            )
            .as_deref(),
            Some("aggregate functions are not allowed in WHERE")
        );
        assert_eq!(
            refused(
                "SELECT a FROM t o GROUP BY a HAVING EXISTS (SELECT 1 FROM t i WHERE sum(o.b) = i.b)"
            ),
            None
        );
        assert_eq!(
            refused("SELECT 1 FROM t JOIN t u ON count(*) > 0").as_deref(),
            Some("aggregate functions are not allowed in JOIN/ON")
        );
        assert_eq!(
            refused("DELETE FROM t WHERE rank() OVER () > 1").as_deref(),
            Some("window functions are not allowed in WHERE")
        );
        assert_eq!(
            refused("SELECT rank() OVER (ORDER BY rank() OVER (ORDER BY a)) FROM t").as_deref(),
            Some("window function calls cannot be nested")
        );
        assert_eq!(
            refused("SELECT lower('A') OVER () FROM t").as_deref(),
            Some("OVER specified, but lower is not a window function nor an aggregate function")
        );
        assert_eq!(
            refused("SELECT sum(a) OVER (), rank() OVER (ORDER BY a), count(*) OVER () FROM t"),
            None
        );
        // The valid neighbours: aggregates in HAVING, a window over an aggregate, aggregates
        // in a subquery of WHERE.
        assert_eq!(refused("SELECT max(a) FROM t HAVING sum(b) > 0"), None);
        assert_eq!(refused("SELECT sum(count(*)) OVER () FROM t"), None);
        assert_eq!(
            refused("SELECT a FROM t WHERE a = (SELECT max(a) FROM t)"),
            None
        );
        assert_eq!(
            refused("SELECT a, CASE WHEN sum(b) OVER () > 0 THEN 1 END FROM t"),
            None
        );
        assert_eq!(
            refused(
                "SELECT a FROM t o GROUP BY a HAVING EXISTS (SELECT 1 FROM t WHERE sum(o.b) = b)"
            ),
            None
        );
    }

    fn group_by(sql: &str) -> Vec<Expr> {
        let stmt = Parser::parse_sql(&PostgreSqlDialect {}, sql).expect("parses");
        let sqlparser::ast::Statement::Query(q) = &stmt[0] else {
            panic!("a query")
        };
        let sqlparser::ast::SetExpr::Select(s) = q.body.as_ref() else {
            panic!("a select")
        };
        match &s.group_by {
            GroupByExpr::Expressions(e, _) => e.clone(),
            GroupByExpr::All(_) => Vec::new(),
        }
    }

    fn names(es: &[&Expr]) -> Vec<String> {
        es.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn grouping_sets_flatten_with_their_nullable_members() {
        let g = group_by("SELECT 1 FROM t GROUP BY a, ROLLUP (b, c)");
        let (all, nullable) = flatten(&g);
        assert_eq!(names(&all), ["a", "b", "c"]);
        assert_eq!(names(&nullable), ["b", "c"]);
        let g = group_by("SELECT 1 FROM t GROUP BY GROUPING SETS ((a, b), (a))");
        let (all, nullable) = flatten(&g);
        assert_eq!(names(&all), ["a", "b", "a"]);
        assert_eq!(names(&nullable), ["b"]);
    }
}
