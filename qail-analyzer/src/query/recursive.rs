//! The form PostgreSQL requires of a recursive WITH query (`WITH RECURSIVE t AS (base UNION
//! [ALL] step)`), checked before its columns are typed: the base term never refers to `t`; the
//! step refers to it once, not on the nullable side of an outer join, not inside a subquery
//! expression or the right side of EXCEPT (a WITH query or derived table inside the step is
//! part of it; a WITH clause of the whole recursive query is not); and the query has no ORDER
//! BY, LIMIT, OFFSET or locking clause of its own. A WITH query that never refers to itself is not recursive and
//! is not checked.

use sqlparser::ast::{
    Cte, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, JoinOperator, Query, Select,
    SelectItem, SetExpr, SetOperator, SetQuantifier, TableFactor, TableWithJoins,
};

use crate::ctx::Ctx;
use crate::query::group::children;
use crate::scope::{norm, parts};

/// Where a reference to the recursive query is being looked for.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    /// The recursive term, where one reference belongs.
    Step,
    Base,
    Subquery,
    OuterJoin,
    Intersect,
    Except,
}

struct Walk {
    name: String,
    place: Place,
    seen: usize,
    /// The first rule broken.
    broken: Option<String>,
}

/// Reports the first rule of a recursive query that `cte` breaks; `false` when it breaks one.
pub(super) fn check(cx: &mut Ctx, cte: &Cte) -> bool {
    let name = norm(&cte.alias.name);
    let mut any = Walk {
        name: name.clone(),
        place: Place::Step,
        seen: 0,
        broken: None,
    };
    any.query(&cte.query);
    if any.seen == 0 && any.broken.is_none() {
        return true;
    }
    let mut q = cte.query.as_ref();
    // Note: a parenthesized whole is the same query.
    while let SetExpr::Query(inner) = q.body.as_ref()
        && q.with.is_none()
        && clauses(q).is_none()
    {
        q = inner;
    }
    let mut walk = Walk {
        name: name.clone(),
        place: Place::Step,
        seen: 0,
        broken: None,
    };
    match q.body.as_ref() {
        SetExpr::SetOperation {
            op: SetOperator::Union,
            left,
            right,
            ..
        } => {
            if let Some(with) = &q.with {
                walk.place = Place::Subquery;
                for inner in &with.cte_tables {
                    walk.query(&inner.query);
                }
            }
            walk.place = Place::Base;
            walk.set(left);
            if walk.broken.is_none() {
                walk.broken = clauses(q);
            }
            walk.place = Place::Step;
            walk.set(right);
        }
        _ => {
            walk.broken = Some(format!(
                "recursive query \"{name}\" does not have the form non-recursive-term UNION [ALL] recursive-term"
            ));
        }
    }
    match walk.broken {
        Some(message) => {
            cx.error(
                cx.range(q),
                message,
                Some(
                    "write the recursive query as base-query UNION [ALL] step-query, the step referring to it once, in its FROM clause, not on the nullable side of an outer join"
                        .into(),
                ),
            );
            false
        }
        None => true,
    }
}

/// Whether the WITH query `cte` of `q` is read: by `q`'s body or by another of its WITH
/// queries (by name, without a schema).
pub(super) fn is_read(q: &Query, cte: &Cte) -> bool {
    let mut walk = Walk {
        name: norm(&cte.alias.name),
        place: Place::Step,
        seen: 0,
        broken: None,
    };
    for other in q.with.iter().flat_map(|w| &w.cte_tables) {
        if !std::ptr::eq(other, cte) {
            walk.query(&other.query);
        }
    }
    walk.set(&q.body);
    walk.seen > 0
}

/// The clauses of the whole recursive query that PostgreSQL does not implement.
fn clauses(q: &Query) -> Option<String> {
    let what = if q.order_by.is_some() {
        "ORDER BY"
    } else if let Some(limit) = &q.limit_clause {
        match limit {
            sqlparser::ast::LimitClause::LimitOffset {
                offset: Some(_), ..
            }
            | sqlparser::ast::LimitClause::OffsetCommaLimit { .. } => "OFFSET",
            _ => "LIMIT",
        }
    } else if q.fetch.is_some() {
        "LIMIT"
    } else if !q.locks.is_empty() {
        "FOR UPDATE/SHARE"
    } else {
        return None;
    };
    Some(format!("{what} in a recursive query is not implemented"))
}

impl Walk {
    fn reference(&mut self) {
        if self.broken.is_some() {
            return;
        }
        let name = &self.name;
        let within = match self.place {
            Place::Step => {
                self.seen += 1;
                if self.seen > 1 {
                    self.broken = Some(format!(
                        "recursive reference to query \"{name}\" must not appear more than once"
                    ));
                }
                return;
            }
            Place::Base => "its non-recursive term",
            Place::Subquery => "a subquery",
            Place::OuterJoin => "an outer join",
            Place::Intersect => "INTERSECT",
            Place::Except => "EXCEPT",
        };
        self.seen += 1;
        self.broken = Some(format!(
            "recursive reference to query \"{name}\" must not appear within {within}"
        ));
    }

    /// Walks `f` in `place`, then restores the current place.
    fn within(&mut self, place: Place, f: impl FnOnce(&mut Walk)) {
        let saved = self.place;
        if self.place == Place::Step {
            self.place = place;
        }
        f(self);
        self.place = saved;
    }

    fn query(&mut self, q: &Query) {
        if let Some(with) = &q.with {
            for inner in &with.cte_tables {
                // Note: a WITH query of the same name hides the recursive one.
                if norm(&inner.alias.name) == self.name {
                    return;
                }
                self.query(&inner.query);
            }
        }
        self.set(&q.body);
    }

    fn set(&mut self, s: &SetExpr) {
        match s {
            SetExpr::Select(select) => self.select(select),
            SetExpr::Query(q) => self.query(q),
            SetExpr::SetOperation {
                op,
                set_quantifier,
                left,
                right,
            } => {
                let all = matches!(set_quantifier, SetQuantifier::All);
                match op {
                    SetOperator::Intersect if all => self.within(Place::Intersect, |w| {
                        w.set(left);
                        w.set(right);
                    }),
                    SetOperator::Except => {
                        if all {
                            self.within(Place::Except, |w| w.set(left));
                        } else {
                            self.set(left);
                        }
                        self.within(Place::Except, |w| w.set(right));
                    }
                    _ => {
                        self.set(left);
                        self.set(right);
                    }
                }
            }
            SetExpr::Values(v) => v.rows.iter().flatten().for_each(|e| self.expr(e)),
            _ => {}
        }
    }

    fn select(&mut self, s: &Select) {
        for item in &s.projection {
            if let SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } = item {
                self.expr(e);
            }
        }
        for from in &s.from {
            self.from(from);
        }
        for e in s.selection.iter().chain(&s.having) {
            self.expr(e);
        }
    }

    fn from(&mut self, t: &TableWithJoins) {
        // Note: `a LEFT JOIN b RIGHT JOIN c` is `(a LEFT JOIN b) RIGHT JOIN c`: an item is on a
        // nullable side when its own join is LEFT or FULL, or a later one is RIGHT or FULL.
        let right_after = |i: usize| {
            t.joins[i..].iter().any(|j| {
                matches!(
                    j.join_operator,
                    JoinOperator::Right(_)
                        | JoinOperator::RightOuter(_)
                        | JoinOperator::FullOuter(_)
                )
            })
        };
        let nullable = right_after(0);
        self.within(
            if nullable {
                Place::OuterJoin
            } else {
                Place::Step
            },
            |w| w.factor(&t.relation),
        );
        for (i, j) in t.joins.iter().enumerate() {
            let own = matches!(
                j.join_operator,
                JoinOperator::Left(_) | JoinOperator::LeftOuter(_) | JoinOperator::FullOuter(_)
            );
            let nullable = own || right_after(i + 1);
            self.within(
                if nullable {
                    Place::OuterJoin
                } else {
                    Place::Step
                },
                |w| w.factor(&j.relation),
            );
        }
    }

    fn factor(&mut self, f: &TableFactor) {
        match f {
            TableFactor::Table { name, args, .. } => {
                if let [one] = parts(name).as_slice()
                    && args.is_none()
                    && norm(one) == self.name
                {
                    self.reference();
                }
            }
            TableFactor::Derived { subquery, .. } => self.query(subquery),
            TableFactor::NestedJoin {
                table_with_joins, ..
            } => self.from(table_with_joins),
            _ => {}
        }
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Subquery(q) | Expr::Exists { subquery: q, .. } => {
                self.within(Place::Subquery, |w| w.query(q));
            }
            Expr::InSubquery { expr, subquery, .. } => {
                self.expr(expr);
                self.within(Place::Subquery, |w| w.query(subquery));
            }
            Expr::Function(f) => {
                if let FunctionArguments::Subquery(q) = &f.args {
                    self.within(Place::Subquery, |w| w.query(q));
                }
                if let FunctionArguments::List(list) = &f.args {
                    for a in &list.args {
                        if let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = a {
                            self.expr(e);
                        }
                    }
                }
            }
            other => children(other).into_iter().for_each(|c| self.expr(c)),
        }
    }
}

#[cfg(test)]
mod tests {
    fn refused(sql: &str) -> Option<String> {
        let ddl = "CREATE TABLE y (a int4 NOT NULL);".to_owned();
        let (snap, _) = qail_schema::ddl::from_sql(&[("y.sql".to_owned(), ddl)]);
        match crate::analyze(sql, &snap) {
            Ok(_) => None,
            Err(d) => Some(d[0].message.clone()),
        }
    }

    #[test]
    fn a_recursive_query_of_a_form_postgresql_refuses_is_refused() {
        let cases = [
            (
                "WITH RECURSIVE x(n) AS (SELECT a FROM y UNION ALL SELECT x.n + 1 FROM y LEFT JOIN x ON x.n = y.a) SELECT * FROM x",
                "recursive reference to query \"x\" must not appear within an outer join",
            ),
            (
                "WITH RECURSIVE x(n) AS (SELECT a FROM y UNION ALL SELECT x.n + 1 FROM x RIGHT JOIN y ON x.n = y.a) SELECT * FROM x",
                "recursive reference to query \"x\" must not appear within an outer join",
            ),
            (
                "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM x WHERE n IN (SELECT * FROM x)) SELECT * FROM x",
                "recursive reference to query \"x\" must not appear within a subquery",
            ),
            (
                "WITH RECURSIVE x(n) AS (WITH x1 AS (SELECT 1 FROM x) SELECT 0 UNION SELECT * FROM x1) SELECT * FROM x",
                "recursive reference to query \"x\" must not appear within a subquery",
            ),
            (
                "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM x ORDER BY 1) SELECT * FROM x",
                "ORDER BY in a recursive query is not implemented",
            ),
            (
                "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM x LIMIT 10 OFFSET 1) SELECT * FROM x",
                "OFFSET in a recursive query is not implemented",
            ),
            (
                "WITH RECURSIVE f(i) AS (VALUES (1) UNION ALL (SELECT i + 1 FROM f WHERE i < 10 UNION ALL SELECT i + 1 FROM f WHERE i < 5)) SELECT * FROM f",
                "recursive reference to query \"f\" must not appear more than once",
            ),
            (
                "WITH RECURSIVE f(i) AS (VALUES (1) UNION ALL (SELECT i + 1 FROM f WHERE i < 10 EXCEPT SELECT i + 1 FROM f WHERE i < 5)) SELECT * FROM f",
                "recursive reference to query \"f\" must not appear within EXCEPT",
            ),
            (
                "WITH RECURSIVE x(n) AS (SELECT n FROM x UNION ALL SELECT 1) SELECT * FROM x",
                "recursive reference to query \"x\" must not appear within its non-recursive term",
            ),
            (
                "WITH x(n, b) AS (SELECT 1) SELECT * FROM x",
                "WITH query \"x\" has 1 columns available but 2 columns specified",
            ),
        ];
        for (sql, message) in cases {
            assert_eq!(refused(sql).as_deref(), Some(message), "{sql}");
        }
        // The forms PostgreSQL takes.
        for sql in [
            "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM x WHERE n < 5) SELECT * FROM x",
            "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT x.n + 1 FROM x LEFT JOIN y ON y.a = x.n WHERE x.n < 5) SELECT * FROM x",
            "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT s.n + 1 FROM (SELECT n FROM x) s WHERE s.n < 5) SELECT * FROM x",
            "WITH RECURSIVE x(n) AS (SELECT a FROM y) SELECT * FROM x",
            "WITH RECURSIVE x(n) AS (WITH x1 AS (SELECT 1 AS n) SELECT 0 UNION SELECT * FROM x1) SELECT * FROM x",
            "WITH RECURSIVE q AS (SELECT a FROM y UNION ALL (WITH z AS (SELECT * FROM q) SELECT a + 1 FROM z WHERE a < 5)) SELECT * FROM q",
        ] {
            assert_eq!(refused(sql), None, "{sql}");
        }
    }

    #[test]
    fn a_data_modifying_with_query_without_returning_is_not_read() {
        assert_eq!(
            refused("WITH t AS (INSERT INTO y VALUES (0)) SELECT * FROM t").as_deref(),
            Some("WITH query \"t\" does not have a RETURNING clause")
        );
        assert_eq!(
            refused("WITH t AS (DELETE FROM y), u AS (SELECT * FROM t) SELECT 1").as_deref(),
            Some("WITH query \"t\" does not have a RETURNING clause")
        );
        assert_eq!(
            refused("WITH t AS (INSERT INTO y VALUES (0)) SELECT 1"),
            None
        );
        assert_eq!(
            refused("WITH t AS (INSERT INTO y VALUES (0) RETURNING a) SELECT * FROM t"),
            None
        );
    }
}
