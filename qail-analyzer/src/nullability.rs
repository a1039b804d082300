//! Nullability refinements: NULL-rejecting predicates (WHERE, inner-join ON) and the alias
//! overrides `"name!"`, `"name?"`, `"name: path::Type"`.

use sqlparser::ast::{BinaryOperator, Expr, SelectItem};

use crate::OutputColumn;
use crate::expr::{Ty, Typed};
use crate::scope::{Scope, norm};
use crate::types::{base, builtin, shape};
use qail_schema::snapshot::Snapshot;

/// Applies the top-level AND conjuncts of `cond` that reject NULL for a column: the column is
/// non-null afterwards, and so is its relation's outer-join side.
pub(crate) fn refine(sc: &mut Scope, cond: &Expr) {
    let mut cols = Vec::new();
    for conjunct in conjuncts(cond) {
        rejected(conjunct, &mut cols);
    }
    for (qual, name) in cols {
        if let Ok(found) = sc.lookup(&qual, &name)
            && let (Some((r, c)), 0) = (found.at, found.depth)
        {
            sc.rels[r].proven[c] = true;
            sc.rels[r].null_reason = None;
        }
    }
}

fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => [conjuncts(left), conjuncts(right)].concat(),
        Expr::Nested(inner) => conjuncts(inner),
        other => vec![other],
    }
}

/// Columns a predicate proves non-null when it is true.
fn rejected(e: &Expr, out: &mut Vec<(Vec<String>, String)>) {
    match e {
        Expr::IsNotNull(x) | Expr::IsTrue(x) | Expr::IsFalse(x) => strict_refs(x, out),
        Expr::BinaryOp { left, op, right }
            if !matches!(op, BinaryOperator::Or | BinaryOperator::And) =>
        {
            strict_refs(left, out);
            strict_refs(right, out);
        }
        Expr::InList {
            expr,
            negated: false,
            ..
        }
        | Expr::InSubquery {
            expr,
            negated: false,
            ..
        } => strict_refs(expr, out),
        Expr::Between {
            expr, low, high, ..
        } => {
            strict_refs(expr, out);
            strict_refs(low, out);
            strict_refs(high, out);
        }
        Expr::Like { expr, pattern, .. } | Expr::ILike { expr, pattern, .. } => {
            strict_refs(expr, out);
            strict_refs(pattern, out);
        }
        Expr::AnyOp { left, .. } | Expr::AllOp { left, .. } => strict_refs(left, out),
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => strict_refs(e, out),
        Expr::Nested(inner) => rejected(inner, out),
        _ => {}
    }
}

/// Column references whose NULL makes `e` NULL.
fn strict_refs(e: &Expr, out: &mut Vec<(Vec<String>, String)>) {
    match e {
        Expr::Identifier(id) => out.push((Vec::new(), norm(id))),
        Expr::CompoundIdentifier(ids) => {
            if let Some((last, qual)) = ids.split_last() {
                out.push((qual.iter().map(norm).collect(), norm(last)));
            }
        }
        Expr::Nested(x) | Expr::Cast { expr: x, .. } | Expr::UnaryOp { expr: x, .. } => {
            strict_refs(x, out)
        }
        Expr::BinaryOp { left, op, right }
            if !matches!(op, BinaryOperator::Or | BinaryOperator::And) =>
        {
            strict_refs(left, out);
            strict_refs(right, out);
        }
        _ => {}
    }
}

const GROUPING_SET: &str = "NULL in the rows of grouping sets that leave it out";

/// Columns grouped in only some grouping sets (ROLLUP, CUBE, GROUPING SETS) are NULL in the
/// rows of the other sets.
pub(crate) fn grouping_sets(sc: &mut Scope, items: &[&Expr]) {
    let mut cols = Vec::new();
    for e in items {
        strict_refs(e, &mut cols);
    }
    for (qual, name) in cols {
        if let Ok(found) = sc.lookup(&qual, &name)
            && let (Some((r, c)), 0) = (found.at, found.depth)
        {
            let col = &mut sc.rels[r].cols[c];
            col.not_null = false;
            col.why = vec![GROUPING_SET.into()];
            sc.rels[r].proven[c] = false;
        }
    }
}

/// Select items that are exactly a grouping-set expression become nullable.
pub(crate) fn grouping_items(cols: &mut [OutputColumn], items: &[SelectItem], sets: &[&Expr]) {
    if sets.is_empty() {
        return;
    }
    let texts: Vec<String> = sets.iter().map(|e| e.to_string()).collect();
    for (col, item) in cols.iter_mut().zip(items) {
        let e = match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => e,
            _ => return,
        };
        if texts.contains(&e.to_string()) && !col.nullable {
            col.nullable = true;
            col.why = vec![GROUPING_SET.into()];
        }
    }
}

/// What an alias asks of a column's nullability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Force {
    NonNull,
    Nullable,
}

/// Splits `name!`, `name?`, `name: Type`, `name!: Type` into the name and the overrides.
fn parse_alias(alias: &str) -> (String, Option<Force>, Option<String>) {
    let (head, rust) = match alias.find(':').filter(|&i| !alias[i..].starts_with("::")) {
        Some(i) => (
            &alias[..i],
            Some(alias[i + 1..].trim().to_string()).filter(|t| !t.is_empty()),
        ),
        None => (alias, None),
    };
    let head = head.trim_end();
    // Note: an alias that is only `?` or `!` is a name, not an override.
    let (name, force) = if let Some(n) = head.strip_suffix('!').filter(|n| !n.is_empty()) {
        (n, Some(Force::NonNull))
    } else if let Some(n) = head.strip_suffix('?').filter(|n| !n.is_empty()) {
        (n, Some(Force::Nullable))
    } else {
        (head, None)
    };
    (name.to_string(), force, rust)
}

/// The output column for a typed select item; `alias` is the item's alias if any, `range` the
/// item's bytes in the SQL. A domain column is reported as its base type, as PostgreSQL's
/// RowDescription does (an array of a domain as itself).
pub(crate) fn output(
    t: Typed,
    alias: Option<&sqlparser::ast::Ident>,
    range: std::ops::Range<usize>,
    snap: &Snapshot,
) -> OutputColumn {
    let ty = match t.ty {
        // Note: an array of a domain is reported as itself (PostgreSQL has array types of
        // domains), a domain as its base type.
        Ty::Known(ty) if ty.array_dims > 0 => ty,
        Ty::Known(ty) => base(&ty, snap),
        Ty::Unknown => builtin("unknown"),
        _ => builtin("text"),
    };
    let shape = t.shape.or_else(|| shape::of_type(&ty, snap));
    let mut col = OutputColumn {
        name: t.name.unwrap_or_else(|| "?column?".into()),
        ty,
        nullable: t.nullable,
        source: t.source,
        rust_type: None,
        why: if t.nullable { t.why } else { Vec::new() },
        range,
        shape,
    };
    if let Some(a) = alias {
        let (name, force, rust) = parse_alias(&norm(a));
        col.name = name;
        col.rust_type = rust;
        match force {
            Some(Force::NonNull) => {
                col.nullable = false;
                col.why.clear();
            }
            Some(Force::Nullable) => {
                col.nullable = true;
                col.why = vec!["declared nullable by the alias".into()];
            }
            None => {}
        }
    }
    if col.nullable && col.why.is_empty() {
        col.why.push("the expression can be NULL".into());
    }
    col
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alias_overrides() {
        assert_eq!(
            parse_alias("name!"),
            ("name".into(), Some(Force::NonNull), None)
        );
        assert_eq!(
            parse_alias("name?"),
            ("name".into(), Some(Force::Nullable), None)
        );
        assert_eq!(
            parse_alias("id: crate::Id"),
            ("id".into(), None, Some("crate::Id".into()))
        );
        assert_eq!(
            parse_alias("id!: crate::Id"),
            ("id".into(), Some(Force::NonNull), Some("crate::Id".into()))
        );
        assert_eq!(parse_alias("plain"), ("plain".into(), None, None));
    }
}
