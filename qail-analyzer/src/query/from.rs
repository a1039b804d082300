//! FROM clauses: tables, views, CTEs, derived tables, joins (ON, USING, NATURAL) and the
//! nullability outer joins introduce.

use sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, Ident, JoinConstraint, JoinOperator, ObjectName, Query,
    TableAlias, TableFactor, TableWithJoins,
};

use crate::call::srf;
use crate::ctx::Ctx;
use crate::expr::condition;
use crate::names::{find_relation, relation_suggestion};
use crate::query::json_table;
use crate::query::select;
use crate::scope::{Col, Merged, Rel, Scope, Star, norm, parts};
use crate::types::{common_type, display, not_null_domain, shape};
use crate::{ColumnSource, nullability};
use qail_schema::snapshot::{Relation, RelationKind, Snapshot, TypeRef};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Inner,
    Left,
    Right,
    Full,
    Cross,
}

/// Adds the FROM items of an UPDATE (or the USING items of a DELETE) after its target, which
/// they do not see: PostgreSQL refuses a LATERAL reference to the target from them.
pub(crate) fn beside_target(cx: &mut Ctx, sc: &mut Scope, items: &[TableWithJoins]) -> bool {
    let Some(at) = sc.rels.len().checked_sub(1) else {
        return from_clause(cx, sc, items);
    };
    let target = &mut sc.rels[at];
    let hidden = (std::mem::take(&mut target.name), target.qualified_only);
    target.qualified_only = true;
    let ok = from_clause(cx, sc, items);
    (sc.rels[at].name, sc.rels[at].qualified_only) = hidden;
    let name = &sc.rels[at].name;
    if ok
        && sc.rels[at + 1..].iter().any(|r| r.name == *name)
        && let Some(first) = items.first()
    {
        let message = format!("table name \"{name}\" specified more than once");
        cx.error(
            cx.range(first),
            message,
            Some("give the table in FROM an alias of its own".into()),
        );
        return false;
    }
    ok
}

/// Adds every FROM item to the scope (comma-separated items are cross joins).
pub(crate) fn from_clause(cx: &mut Ctx, sc: &mut Scope, items: &[TableWithJoins]) -> bool {
    let mut ok = true;
    for item in items {
        match with_joins(cx, sc, item) {
            Some(star) => sc.star.extend(star),
            None => ok = false,
        }
    }
    ok
}

fn with_joins(cx: &mut Ctx, sc: &mut Scope, twj: &TableWithJoins) -> Option<Vec<Star>> {
    let start = sc.rels.len();
    let mut star = factor(cx, sc, &twj.relation)?;
    for join in &twj.joins {
        let (kind, constraint) = match &join.join_operator {
            JoinOperator::Join(c) | JoinOperator::Inner(c) => (Kind::Inner, Some(c)),
            JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (Kind::Left, Some(c)),
            JoinOperator::Right(c) | JoinOperator::RightOuter(c) => (Kind::Right, Some(c)),
            JoinOperator::FullOuter(c) => (Kind::Full, Some(c)),
            JoinOperator::CrossJoin(c) => (Kind::Cross, Some(c)),
            _ => {
                let r = cx.range(&join.relation);
                cx.error(
                    r,
                    "this join kind is not PostgreSQL syntax",
                    Some("use [INNER|LEFT|RIGHT|FULL|CROSS] JOIN".into()),
                );
                return None;
            }
        };
        let mid = sc.rels.len();
        if matches!(kind, Kind::Right | Kind::Full)
            && let Some((id, table)) = lateral_reference(&join.relation, &sc.rels[start..mid])
        {
            cx.error(
                cx.ident_range(id),
                format!("invalid reference to FROM-clause entry for table \"{table}\""),
                Some("a LATERAL reference needs an INNER or LEFT join: the left side of a RIGHT or FULL join may be null-extended".into()),
            );
            return None;
        }
        let right = factor(cx, sc, &join.relation)?;
        mark_outer(sc, kind, start, mid);
        star = match constraint {
            Some(JoinConstraint::On(e)) => {
                let cond = condition(cx, sc, e, "JOIN/ON");
                if kind == Kind::Inner && !cond.is_error() {
                    nullability::refine(sc, e);
                }
                [star, right].concat()
            }
            Some(JoinConstraint::Using(names)) => {
                let names: Vec<&Ident> = names
                    .iter()
                    .flat_map(|n| parts(n).into_iter().last())
                    .collect();
                merge(cx, sc, kind, star, right, &names)?
            }
            Some(JoinConstraint::Natural) => {
                let common = natural_columns(sc, &star, &right);
                let idents: Vec<Ident> = common
                    .iter()
                    .map(|n| Ident::with_quote('"', n.as_str()))
                    .collect();
                let refs: Vec<&Ident> = idents.iter().collect();
                merge(cx, sc, kind, star, right, &refs)?
            }
            _ => [star, right].concat(),
        };
    }
    Some(star)
}

/// A column of `left` named (qualified) in the arguments of the function `tf` calls: the
/// reference to the preceding FROM items a function in FROM may make, which a RIGHT or FULL
/// join cannot take.
fn lateral_reference<'a>(tf: &'a TableFactor, left: &[Rel]) -> Option<(&'a Ident, String)> {
    let args: Vec<&FunctionArg> = match tf {
        TableFactor::Table { args: Some(a), .. } => a.args.iter().collect(),
        TableFactor::Function { args, .. } => args.iter().collect(),
        _ => Vec::new(),
    };
    let mut exprs: Vec<&Expr> = args
        .into_iter()
        .filter_map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
            _ => None,
        })
        .collect();
    if let TableFactor::UNNEST { array_exprs, .. } = tf {
        exprs.extend(array_exprs);
    }
    while let Some(e) = exprs.pop() {
        if let Expr::CompoundIdentifier(ids) = e
            && let [q, _] = ids.as_slice()
            && let Some(r) = left.iter().find(|r| r.name == norm(q))
        {
            return Some((q, r.name.clone()));
        }
        exprs.extend(crate::query::group::children(e));
    }
    None
}

/// Marks the nullable side(s) of an outer join with the reason.
fn mark_outer(sc: &mut Scope, kind: Kind, start: usize, mid: usize) {
    let right_label = sc.rels[mid..]
        .iter()
        .map(|r| r.label.clone())
        .collect::<Vec<_>>()
        .join(", ");
    if matches!(kind, Kind::Left | Kind::Full) {
        let word = if kind == Kind::Left { "LEFT" } else { "FULL" };
        for rel in &mut sc.rels[mid..] {
            rel.null_reason
                .get_or_insert_with(|| format!("right side of {word} JOIN {}", rel.label));
            rel.proven.iter_mut().for_each(|p| *p = false);
        }
    }
    if matches!(kind, Kind::Right | Kind::Full) {
        let word = if kind == Kind::Right { "RIGHT" } else { "FULL" };
        for rel in &mut sc.rels[start..mid] {
            rel.null_reason
                .get_or_insert_with(|| format!("left side of {word} JOIN {right_label}"));
            rel.proven.iter_mut().for_each(|p| *p = false);
        }
    }
}

fn star_name<'s>(sc: &'s Scope, s: Star) -> &'s str {
    match s {
        Star::Col(r, c) => &sc.rels[r].cols[c].name,
        Star::Merged(m) => &sc.merged[m].name,
    }
}

fn natural_columns(sc: &Scope, left: &[Star], right: &[Star]) -> Vec<String> {
    left.iter()
        .map(|s| star_name(sc, *s).to_string())
        .filter(|n| right.iter().any(|r| star_name(sc, *r) == n))
        .collect()
}

/// `USING (cols)` / NATURAL: one merged column per name, listed first in `*`.
fn merge(
    cx: &mut Ctx,
    sc: &mut Scope,
    kind: Kind,
    mut left: Vec<Star>,
    mut right: Vec<Star>,
    names: &[&Ident],
) -> Option<Vec<Star>> {
    let mut merged_star = Vec::new();
    for id in names {
        let name = norm(id);
        let find = |side: &[Star], sc: &Scope| side.iter().position(|s| star_name(sc, *s) == name);
        let (Some(li), Some(ri)) = (find(&left, sc), find(&right, sc)) else {
            let side = if find(&left, sc).is_none() {
                "left"
            } else {
                "right"
            };
            let msg = format!(
                "column \"{name}\" specified in USING clause does not exist in {side} table"
            );
            let hint = "USING needs a column of that name on both sides".to_string();
            cx.error(cx.ident_range(id), msg, Some(hint));
            return None;
        };
        let (l, r, ty) = merged_type(cx, sc, id, left.remove(li), right.remove(ri))?;
        if kind == Kind::Inner {
            sc.rels[l.0].proven[l.1] = true;
            sc.rels[r.0].proven[r.1] = true;
        }
        sc.merged.push(Merged {
            name,
            ty,
            left: l,
            right: r,
            full: kind == Kind::Full,
            from_right: kind == Kind::Right,
        });
        merged_star.push(Star::Merged(sc.merged.len() - 1));
    }
    Some([merged_star, left, right].concat())
}

/// (relation, column) indexes in the scope.
type ColAt = (usize, usize);

/// The two columns a USING name joins, and the merged column's type.
fn merged_type(
    cx: &mut Ctx,
    sc: &Scope,
    id: &Ident,
    ls: Star,
    rs: Star,
) -> Option<(ColAt, ColAt, TypeRef)> {
    let (Star::Col(lr, lc), Star::Col(rr, rc)) = (ls, rs) else {
        let hint = Some("use ON instead".into());
        cx.error(
            cx.ident_range(id),
            "USING over an already merged column is not supported yet",
            hint,
        );
        return None;
    };
    let (lt, rt) = (
        sc.rels[lr].cols[lc].ty.clone(),
        sc.rels[rr].cols[rc].ty.clone(),
    );
    match common_type(&[lt, rt], cx.snap) {
        Ok(t) => Some(((lr, lc), (rr, rc), t)),
        Err(pair) => {
            let (a, b) = *pair;
            let msg = format!(
                "JOIN/USING types {} and {} cannot be matched",
                display(&a),
                display(&b)
            );
            cx.error(
                cx.ident_range(id),
                msg,
                Some("join with ON and an explicit cast".into()),
            );
            None
        }
    }
}

fn factor(cx: &mut Ctx, sc: &mut Scope, tf: &TableFactor) -> Option<Vec<Star>> {
    if let TableFactor::Table { alias: Some(a), .. } | TableFactor::Derived { alias: Some(a), .. } =
        tf
    {
        crate::names::col_id(cx, &a.name);
    }
    let rel = match tf {
        TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } => table(cx, sc, name, alias.as_ref())?,
        TableFactor::Derived {
            lateral,
            subquery,
            alias,
        } => derived(cx, sc, *lateral, subquery, alias.as_ref())?,
        TableFactor::NestedJoin {
            table_with_joins,
            alias: None,
        } => return with_joins(cx, sc, table_with_joins),
        TableFactor::Table { args: Some(_), .. }
        | TableFactor::Function { .. }
        | TableFactor::UNNEST { .. } => srf::table_factor(cx, sc, tf)?,
        TableFactor::JsonTable {
            json_expr,
            columns,
            alias,
            ..
        } => json_table::json_table(cx, sc, json_expr, columns, alias.as_ref(), cx.range(tf))?,
        other => {
            let r = cx.range(other);
            cx.error(
                r,
                "this kind of FROM item is not supported by the analyzer yet",
                Some("use a table, a view, a CTE, a subquery or a function".into()),
            );
            return None;
        }
    };
    let r = sc.rels.len();
    let n = rel.cols.len();
    sc.rels.push(rel);
    Some((0..n).map(|c| Star::Col(r, c)).collect())
}

/// `(SELECT …) AS alias (cols)`, seeing earlier FROM items only when LATERAL.
fn derived(
    cx: &mut Ctx,
    sc: &Scope,
    lateral: bool,
    subquery: &Query,
    alias: Option<&TableAlias>,
) -> Option<Rel> {
    let outer = if lateral { Some(sc) } else { sc.parent };
    let cols = match outer {
        Some(o) => select::subquery(cx, subquery, o)?,
        None => select::query(cx, subquery, None)?,
    };
    let cols = cols
        .into_iter()
        .map(|c| Col {
            name: c.name,
            ty: c.ty,
            not_null: !c.nullable,
            source: c.source,
            why: c.why,
            shape: c.shape,
        })
        .collect();
    let name = alias.map_or_else(|| "subquery".to_string(), |a| norm(&a.name));
    Some(aliased(Rel::new(name.clone(), None, name, cols), alias))
}

/// A table, view or CTE by name.
pub(crate) fn table(
    cx: &mut Ctx,
    sc: &Scope,
    name: &ObjectName,
    alias: Option<&TableAlias>,
) -> Option<Rel> {
    let ids = parts(name);
    // Note: only the first part is a ColId; after a dot any keyword is a name.
    if let Some(first) = ids.first() {
        crate::names::col_id(cx, first);
    }
    let names: Vec<String> = ids.iter().map(|i| norm(i)).collect();
    let (schema, tname) = match names.as_slice() {
        [t] => (None, t.clone()),
        [s, t] => (Some(s.clone()), t.clone()),
        [_, s, t] => (Some(s.clone()), t.clone()),
        _ => (None, String::new()),
    };
    if schema.is_none()
        && let Some(cols) = sc.cte(&tname)
    {
        let rel = Rel::new(tname.clone(), None, tname, cols.to_vec());
        return Some(aliased(rel, alias));
    }
    let Some(found) = find_relation(cx.snap, schema.as_deref(), &tname) else {
        let range = match (ids.first(), ids.last()) {
            (Some(f), Some(l)) => cx.ident_range(f).start..cx.ident_range(l).end,
            _ => cx.range(name),
        };
        // Note: a system relation of other PostgreSQL versions than the targeted ones.
        let system = qail_catalog::relation(schema.as_deref().unwrap_or("pg_catalog"), &tname)
            .filter(|r| !r.versions.covers(cx.target));
        if let Some(other) = system {
            let (message, hint) = crate::diag::version_gap(
                &format!("relation \"{}\"", names.join(".")),
                other.versions,
                cx.target,
            );
            cx.error(range, message, Some(hint));
            return None;
        }
        let hint = relation_suggestion(cx.snap, schema.as_deref(), &tname).map_or_else(
            || "check the name, or run `cargo qail schema pull` if the table is new".to_string(),
            |s| format!("did you mean \"{s}\"?"),
        );
        cx.error(
            range,
            format!("relation \"{}\" does not exist", names.join(".")),
            Some(hint),
        );
        return None;
    };
    crate::call::session::relation_read(cx, found);
    let cols = table_columns(found, cx.snap);
    let mut rel = Rel::new(tname.clone(), Some(found.schema.clone()), tname, cols);
    rel.system = found.kind == RelationKind::Table;
    // Note: sequences have no row type.
    rel.row_type = (found.kind != RelationKind::Sequence).then(|| TypeRef {
        schema: found.schema.clone(),
        name: found.name.clone(),
        oid: None,
        array_dims: 0,
    });
    rel.primary_key = found
        .primary_key
        .iter()
        .filter_map(|k| found.columns.iter().position(|c| &c.name == k))
        .collect();
    Some(aliased(rel, alias))
}

/// A snapshot relation's columns as a FROM item exposes them.
fn table_columns(found: &Relation, snap: &Snapshot) -> Vec<Col> {
    found
        .columns
        .iter()
        .map(|c| Col {
            name: c.name.clone(),
            ty: c.ty.clone(),
            not_null: c.not_null
                || found.primary_key.contains(&c.name)
                || not_null_domain(&c.ty, snap),
            source: Some(ColumnSource {
                schema: found.schema.clone(),
                table: found.name.clone(),
                column: c.name.clone(),
            }),
            why: Vec::new(),
            shape: shape::of_type(&c.ty, snap),
        })
        .collect()
}

fn aliased(mut rel: Rel, alias: Option<&TableAlias>) -> Rel {
    if let Some(a) = alias {
        let name = norm(&a.name);
        if name != rel.name {
            rel.label = format!("{} AS {name}", rel.label);
        }
        rel.name = name;
        rel.schema = None;
        for (col, new) in rel.cols.iter_mut().zip(&a.columns) {
            col.name = norm(&new.name);
        }
    }
    rel
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_from_items_of_update_and_delete_do_not_see_the_target() {
        let ddl = "CREATE TABLE y (a int4 NOT NULL); CREATE TABLE z (b int4);".to_owned();
        let (snap, _) = qail_schema::ddl::from_sql(&[("y.sql".to_owned(), ddl)]);
        let refused = |sql: &str| {
            crate::analyze(sql, &snap)
                .err()
                .map(|d| d[0].message.clone())
        };
        assert!(
            refused("UPDATE y SET a = b FROM LATERAL (SELECT * FROM z WHERE b = a) s").is_some()
        );
        assert!(refused("DELETE FROM y USING LATERAL (SELECT * FROM z WHERE b = y.a) s").is_some());
        assert_eq!(
            refused("UPDATE y SET a = b FROM y, z WHERE b = y.a").as_deref(),
            Some("table name \"y\" specified more than once")
        );
        assert_eq!(
            refused("UPDATE y SET a = b FROM y AS o, z WHERE b = o.a"),
            None
        );
        assert_eq!(refused("UPDATE y SET a = b FROM z WHERE b = a"), None);
        assert_eq!(
            refused("SELECT g FROM y RIGHT JOIN LATERAL generate_series(0, y.a) g ON true")
                .as_deref(),
            Some("invalid reference to FROM-clause entry for table \"y\"")
        );
        assert_eq!(
            refused("SELECT g FROM y LEFT JOIN LATERAL generate_series(0, y.a) g ON true"),
            None
        );
        assert_eq!(
            refused("DELETE FROM y USING z WHERE b = y.a RETURNING y.a"),
            None
        );
    }
}
