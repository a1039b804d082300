//! Queries: WITH, SELECT (target list, WHERE, GROUP BY, HAVING, DISTINCT), set operations,
//! VALUES, ORDER BY, LIMIT/OFFSET.

use sqlparser::ast::{
    Cte, Distinct, Expr, GroupByExpr, LimitClause, NamedWindowDefinition, NamedWindowExpr, OrderBy,
    OrderByKind, Query, Select, SelectItem, SelectItemQualifiedWildcardKind, SetExpr, SetOperator,
    Statement, Value,
};

use crate::ctx::Ctx;
use crate::expr::{Fit, Ty, Typed, condition, expect, expr, literal, settle};
use crate::nullability::output;
use crate::query::{from, group, statement_in};
use crate::scope::{Col, Scope, norm, parts};
use crate::types::{builtin, common_type, display, scalar_name, sql_name};
use crate::{OutputColumn, nullability};
use qail_schema::snapshot::TypeRef;

/// A subquery, seeing `outer`'s relations (correlation).
pub(crate) fn subquery(cx: &mut Ctx, q: &Query, outer: &Scope) -> Option<Vec<OutputColumn>> {
    query(cx, q, Some(outer))
}

/// A whole query; `None` when an error was reported. Untyped literal columns are `text`.
pub(crate) fn query(cx: &mut Ctx, q: &Query, outer: Option<&Scope>) -> Option<Vec<OutputColumn>> {
    let mut cols = query_raw(cx, q, outer)?;
    resolve_unknown(&mut cols);
    Some(cols)
}

/// Untyped literal columns (`SELECT 'x'`, `SELECT NULL`) become `text`, as in PostgreSQL 10+.
pub(crate) fn resolve_unknown(cols: &mut [OutputColumn]) {
    for c in cols.iter_mut().filter(|c| is_unknown(&c.ty)) {
        c.ty = builtin("text");
    }
}

pub(crate) fn is_unknown(t: &TypeRef) -> bool {
    scalar_name(t) == Some("unknown")
}

/// A query whose untyped literal columns are still `unknown` (for UNION branches and
/// INSERT … SELECT, where the other side decides their type).
pub(crate) fn query_raw(
    cx: &mut Ctx,
    q: &Query,
    outer: Option<&Scope>,
) -> Option<Vec<OutputColumn>> {
    let top = cx.depth == 0;
    cx.depth += 1;
    let out = query_at(cx, q, outer, top);
    cx.depth -= 1;
    out
}

/// [`query_raw`] of a query that is the statement itself (`top`) or inside one.
fn query_at(
    cx: &mut Ctx,
    q: &Query,
    outer: Option<&Scope>,
    top: bool,
) -> Option<Vec<OutputColumn>> {
    let mut with = match outer {
        Some(o) => Scope::child(o),
        None => Scope::default(),
    };
    if let Some(w) = &q.with {
        for cte in &w.cte_tables {
            crate::names::col_id(cx, &cte.alias.name);
            if !returns_rows(&cte.query) && super::recursive::is_read(q, cte) {
                let name = norm(&cte.alias.name);
                cx.error(
                    cx.ident_range(&cte.alias.name),
                    format!("WITH query \"{name}\" does not have a RETURNING clause"),
                    Some("add RETURNING to the data-modifying statement to read its rows".into()),
                );
                return None;
            }
            let modifying = !matches!(
                cte.query.body.as_ref(),
                SetExpr::Select(_)
                    | SetExpr::Query(_)
                    | SetExpr::SetOperation { .. }
                    | SetExpr::Values(_)
                    | SetExpr::Table(_)
            );
            if modifying && !top {
                cx.error(
                    cx.ident_range(&cte.alias.name),
                    "WITH clause containing a data-modifying statement must be at the top level",
                    Some("move the WITH query to the start of the statement".into()),
                );
                return None;
            }
            cx.in_with = modifying;
            let cols = cte_columns(cx, cte, &with, w.recursive);
            cx.in_with = false;
            let cols = cols?;
            with.ctes.push((norm(&cte.alias.name), cols));
        }
    }
    if !locking_allowed(cx, q) {
        return None;
    }
    let cols = body(cx, &q.body, &with, q.order_by.as_ref())?;
    limits(cx, q, &with);
    Some(cols)
}

/// A locking clause (`FOR UPDATE`, `FOR SHARE`, …) on a query whose rows are not rows of
/// tables, refused as the server refuses it (CheckSelectLocking): over a set operation,
/// VALUES, DISTINCT, GROUP BY or HAVING. Reports the error and returns `false`.
fn locking_allowed(cx: &mut Ctx, q: &Query) -> bool {
    let Some(lock) = q.locks.first() else {
        return true;
    };
    let mut b = q.body.as_ref();
    while let SetExpr::Query(inner) = b {
        b = inner.body.as_ref();
    }
    let what = match b {
        SetExpr::SetOperation { .. } => "is not allowed with UNION/INTERSECT/EXCEPT",
        SetExpr::Values(_) => "cannot be applied to VALUES",
        SetExpr::Select(s) if s.distinct.is_some() => "is not allowed with DISTINCT clause",
        SetExpr::Select(s) if !matches!(&s.group_by, GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty()) => {
            "is not allowed with GROUP BY clause"
        }
        SetExpr::Select(s) if s.having.is_some() => "is not allowed with HAVING clause",
        _ => return true,
    };
    cx.error(
        cx.range(q),
        format!("FOR {} {what}", lock.lock_type),
        Some(
            "lock the rows of a plain query over the tables, or leave the locking clause out"
                .into(),
        ),
    );
    false
}

/// Whether a WITH query yields rows: a query, or a data-modifying statement with RETURNING.
fn returns_rows(q: &Query) -> bool {
    match q.body.as_ref() {
        SetExpr::Insert(Statement::Insert(i)) => i.returning.is_some(),
        SetExpr::Update(Statement::Update { returning, .. }) => returning.is_some(),
        SetExpr::Delete(Statement::Delete(d)) => d.returning.is_some(),
        SetExpr::Merge(Statement::Merge { output, .. }) => output.is_some(),
        _ => true,
    }
}

/// A CTE's columns, named by its column list. A recursive CTE (`WITH RECURSIVE t(…) AS
/// (base UNION [ALL] step)`) takes its types from the base term; its columns are nullable if
/// either term's are, found by re-reading the step until nothing changes.
fn cte_columns(cx: &mut Ctx, cte: &Cte, with: &Scope, recursive: bool) -> Option<Vec<Col>> {
    let name = norm(&cte.alias.name);
    if recursive && !super::recursive::check(cx, cte) {
        return None;
    }
    let probe = |extra: Option<Vec<Col>>| {
        let mut ctes = with.ctes.clone();
        ctes.extend(extra.map(|c| (name.clone(), c)));
        Scope {
            ctes,
            parent: with.parent,
            ..Scope::default()
        }
    };
    let base = match cte.query.body.as_ref() {
        SetExpr::SetOperation {
            op: SetOperator::Union,
            left,
            ..
        } if recursive => left,
        _ => {
            let cols = query(cx, &cte.query, Some(&probe(None)))?;
            return named(cx, cols, cte);
        }
    };
    let before = cx.error_count();
    let mut cols = body(cx, base, &probe(None), None)?;
    resolve_unknown(&mut cols);
    let mut cols = named(cx, cols, cte)?;
    for _ in 0..3 {
        if cx.error_count() > before {
            return None;
        }
        let whole = query(cx, &cte.query, Some(&probe(Some(cols.clone()))))?;
        if let Some((c, w)) = cols.iter().zip(&whole).find(|(c, w)| c.ty != w.ty) {
            let msg = format!(
                "recursive query \"{name}\" column \"{}\" has type {} in its non-recursive term but type {} overall",
                c.name,
                display(&c.ty),
                display(&w.ty)
            );
            let hint = format!(
                "cast the non-recursive term's column to {}",
                sql_name(&w.ty)
            );
            cx.error(cx.range(base.as_ref()), msg, Some(hint));
            return None;
        }
        let mut changed = false;
        for (c, w) in cols.iter_mut().zip(whole) {
            if c.not_null && w.nullable {
                c.not_null = false;
                c.why = w.why;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    Some(cols)
}

/// Output columns as CTE columns, renamed by the CTE's column list (which may not name more
/// columns than there are).
fn named(cx: &mut Ctx, cols: Vec<OutputColumn>, cte: &Cte) -> Option<Vec<Col>> {
    if cte.alias.columns.len() > cols.len() {
        cx.error(
            cx.ident_range(&cte.alias.name),
            format!(
                "WITH query \"{}\" has {} columns available but {} columns specified",
                norm(&cte.alias.name),
                cols.len(),
                cte.alias.columns.len()
            ),
            Some("name only the columns the WITH query returns".into()),
        );
        return None;
    }
    let mut cols: Vec<Col> = cols
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
    for (c, a) in cols.iter_mut().zip(&cte.alias.columns) {
        c.name = norm(&a.name);
    }
    Some(cols)
}

fn limits(cx: &mut Ctx, q: &Query, sc: &Scope) {
    let int8 = builtin("int8");
    let check = |cx: &mut Ctx, e: &Expr, what: &str| {
        expect(cx, sc, e, &int8, Fit::Implicit, what);
    };
    match &q.limit_clause {
        Some(LimitClause::LimitOffset { limit, offset, .. }) => {
            if let Some(l) = limit {
                check(cx, l, "LIMIT");
            }
            if let Some(o) = offset {
                check(cx, &o.value, "OFFSET");
            }
        }
        Some(LimitClause::OffsetCommaLimit { offset, limit }) => {
            check(cx, offset, "OFFSET");
            check(cx, limit, "LIMIT");
        }
        None => {}
    }
    if let Some(qty) = q.fetch.as_ref().and_then(|f| f.quantity.as_ref()) {
        check(cx, qty, "FETCH FIRST");
    }
}

fn body(
    cx: &mut Ctx,
    set: &SetExpr,
    sc: &Scope,
    order: Option<&OrderBy>,
) -> Option<Vec<OutputColumn>> {
    match set {
        SetExpr::Select(s) => select(cx, s, sc, order),
        SetExpr::Query(q) => query_raw(cx, q, Some(sc)),
        SetExpr::SetOperation {
            left, right, op, ..
        } => {
            let before = cx.error_count();
            let mut l = body(cx, left, sc, None);
            let mut r = body(cx, right, sc, None);
            // Note: a nested set operation resolves its untyped columns as text.
            for (side, cols) in [(left, &mut l), (right, &mut r)] {
                if let (SetExpr::SetOperation { .. }, Some(cols)) = (side.as_ref(), cols) {
                    resolve_unknown(cols);
                }
            }
            // Note: a branch with errors has placeholder column types; do not match them.
            if cx.error_count() > before {
                return None;
            }
            let cols = union(cx, l?, r?, &op.to_string(), cx.range(set))?;
            order_by_outputs(cx, order, &cols);
            Some(cols)
        }
        SetExpr::Values(v) => values(cx, &v.rows, sc),
        SetExpr::Insert(stmt) | SetExpr::Update(stmt) | SetExpr::Delete(stmt) => {
            statement_in(cx, stmt, Some(sc)).map(|s| s.columns)
        }
        other => {
            let r = cx.range(other);
            cx.error(
                r,
                "this query form is not supported by the analyzer yet",
                Some("write it as SELECT".into()),
            );
            None
        }
    }
}

fn union(
    cx: &mut Ctx,
    l: Vec<OutputColumn>,
    r: Vec<OutputColumn>,
    op: &str,
    range: std::ops::Range<usize>,
) -> Option<Vec<OutputColumn>> {
    if l.len() != r.len() {
        let msg = format!(
            "each {op} query must have the same number of columns ({} vs {})",
            l.len(),
            r.len()
        );
        cx.error(
            range,
            msg,
            Some("select the same number of columns on both sides".into()),
        );
        return None;
    }
    let mut out = Vec::with_capacity(l.len());
    for (a, b) in l.into_iter().zip(r) {
        out.push(union_column(cx, a, b, op, range.clone())?);
    }
    Some(out)
}

/// One column of a set operation: the common type (an untyped literal side takes the
/// other side's type), nullable if either side is.
fn union_column(
    cx: &mut Ctx,
    a: OutputColumn,
    b: OutputColumn,
    op: &str,
    range: std::ops::Range<usize>,
) -> Option<OutputColumn> {
    let known: Vec<TypeRef> = [&a.ty, &b.ty]
        .into_iter()
        .filter(|t| !is_unknown(t))
        .cloned()
        .collect();
    let ty = match common_type(&known, cx.snap) {
        Ok(_) if known.is_empty() => a.ty.clone(),
        Ok(t) => t,
        Err(pair) => {
            let (x, y) = *pair;
            let msg = format!(
                "{op} types {} and {} cannot be matched (column \"{}\")",
                display(&x),
                display(&y),
                a.name
            );
            cx.error(
                range,
                msg,
                Some("cast one side so both have the same type".into()),
            );
            return None;
        }
    };
    // Note: an untyped string literal side is converted to the other side's type, which
    // fails for text the type does not read (`SELECT 1 UNION SELECT 'x'`).
    for side in [&a, &b] {
        if is_unknown(&side.ty)
            && !known.is_empty()
            && let Some(text) = cx.sql.get(side.range.clone()).and_then(quoted_literal)
            && let Some((msg, hint)) = literal::invalid(&text, &ty, cx.snap, cx.target)
        {
            cx.error(side.range.clone(), msg, Some(hint));
            return None;
        }
    }
    let nullable = a.nullable || b.nullable;
    let why = if nullable {
        [a.why, b.why].concat()
    } else {
        Vec::new()
    };
    Some(OutputColumn {
        name: a.name,
        ty,
        nullable,
        source: None,
        rust_type: a.rust_type,
        why,
        range: a.range,
        // Note: a set operation's branches have one record type only when they agree.
        shape: a.shape.filter(|s| Some(s) == b.shape.as_ref()),
    })
}

/// The text of the string literal `item` starts with (`'it''s' AS x` → `it's`).
fn quoted_literal(item: &str) -> Option<String> {
    let rest = item.trim_start().strip_prefix('\'')?;
    let mut text = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            if chars.peek() == Some(&'\'') {
                chars.next();
            } else {
                return Some(text);
            }
        }
        text.push(c);
    }
    None
}

fn values(cx: &mut Ctx, rows: &[Vec<Expr>], sc: &Scope) -> Option<Vec<OutputColumn>> {
    let width = rows.first().map_or(0, Vec::len);
    let typed: Vec<Vec<Typed>> = rows
        .iter()
        .map(|r| r.iter().map(|e| expr(cx, sc, e)).collect())
        .collect();
    let mut cols = Vec::with_capacity(width);
    for i in 0..width {
        let column: Vec<Typed> = typed.iter().filter_map(|r| r.get(i).cloned()).collect();
        let known: Vec<_> = column.iter().filter_map(|t| t.arg().cloned()).collect();
        let ty = common_type(&known, cx.snap).ok()?;
        let mut t = Typed::known(ty.clone(), 0..0);
        for c in &column {
            // Note: untyped parameters and literals of a VALUES column take its common type.
            if matches!(c.ty, Ty::Param(_) | Ty::Unknown) && !known.is_empty() {
                settle(cx, &mut c.clone(), &ty);
            }
            t.absorb(c);
        }
        t.name = Some(format!("column{}", i + 1));
        let range = rows
            .first()
            .and_then(|r| r.get(i))
            .map_or(0..0, |e| cx.range(e));
        cols.push(output(t, None, range, cx.snap));
    }
    Some(cols)
}

fn select(
    cx: &mut Ctx,
    s: &Select,
    outer: &Scope,
    order: Option<&OrderBy>,
) -> Option<Vec<OutputColumn>> {
    let mut sc = Scope::child(outer);
    if !from::from_clause(cx, &mut sc, &s.from) {
        return None;
    }
    if let Some(w) = &s.selection {
        nullability::refine(&mut sc, w);
    }
    let (grouped, null_sets) = match &s.group_by {
        GroupByExpr::Expressions(exprs, _) => group::flatten(exprs),
        GroupByExpr::All(_) => {
            cx.error(
                cx.range(s),
                "GROUP BY ALL is not supported",
                Some("PostgreSQL 15 rejects it; list the grouping columns: GROUP BY a, b".into()),
            );
            return None;
        }
    };
    nullability::grouping_sets(&mut sc, &null_sets);
    sc.grouped = !grouped.is_empty() && null_sets.is_empty() && !has_grouping_sets(&s.group_by);
    let mut cols = projection(cx, &sc, &s.projection);
    nullability::grouping_items(&mut cols, &s.projection, &null_sets);
    group::check(cx, &sc, s);
    if let Some(w) = &s.selection {
        condition(cx, &sc, w, "WHERE");
    }
    for e in grouped {
        position_of_call(cx, e, &s.projection);
        output_ref(cx, &sc, e, &cols);
    }
    if let Some(h) = &s.having {
        condition(cx, &sc, h, "HAVING");
    }
    windows(cx, &sc, &s.named_window);
    if s.distinct.is_some() && s.projection.is_empty() {
        // Note: PostgreSQL allows an empty select list, but not after DISTINCT.
        cx.error(
            cx.range(s),
            "DISTINCT needs a select list",
            Some("name the columns after DISTINCT".into()),
        );
    }
    if let Some(Distinct::On(exprs)) = &s.distinct {
        for e in exprs {
            expr(cx, &sc, e);
        }
    }
    if let Some(OrderBy {
        kind: OrderByKind::Expressions(items),
        ..
    }) = order
    {
        for item in items {
            ambiguous_output(cx, &item.expr, &cols);
            output_ref(cx, &sc, &item.expr, &cols);
        }
    }
    Some(cols)
}

/// Whether GROUP BY holds GROUPING SETS, ROLLUP or CUBE (whose empty set makes one row over
/// no input).
fn has_grouping_sets(g: &GroupByExpr) -> bool {
    matches!(g, GroupByExpr::Expressions(exprs, _)
    if exprs.iter().any(|e| match e {
        Expr::GroupingSets(_) | Expr::Rollup(_) | Expr::Cube(_) => true,
        Expr::Tuple(items) => items.is_empty(),
        _ => false,
    }))
}

/// `WINDOW w AS (PARTITION BY … ORDER BY … frame)`: the names are distinct, the expressions and
/// the frame are checked.
fn windows(cx: &mut Ctx, sc: &Scope, defs: &[NamedWindowDefinition]) {
    for (i, NamedWindowDefinition(name, def)) in defs.iter().enumerate() {
        let range = cx.ident_range(name);
        if defs[..i].iter().any(|d| d.0.value == name.value) {
            cx.error(
                range.clone(),
                format!("window \"{}\" is already defined", name.value),
                Some("give each window of the WINDOW clause its own name".into()),
            );
        }
        if let NamedWindowExpr::WindowSpec(spec) = def {
            crate::call::window_spec(cx, sc, spec, range);
        }
    }
}

/// GROUP BY / ORDER BY items: an output column name or position, else an expression.
fn output_ref(cx: &mut Ctx, sc: &Scope, e: &Expr, cols: &[OutputColumn]) {
    match e {
        Expr::Value(v) if matches!(v.value, Value::Number(..)) => {
            let n = v.value.to_string().parse::<usize>().unwrap_or(0);
            if n == 0 || n > cols.len() {
                let msg = format!("position {n} is not in select list");
                cx.error(
                    cx.range(e),
                    msg,
                    Some(format!("use a position between 1 and {}", cols.len())),
                );
            }
        }
        Expr::Value(v) if !matches!(v.value, Value::Placeholder(..)) => {
            // Note: PostgreSQL sorts or groups by a position, never by a constant.
            cx.error(
                cx.range(e),
                "non-integer constant in GROUP BY or ORDER BY",
                Some("write a column's position (1, 2, …) or an expression".into()),
            );
        }
        Expr::Identifier(id)
            if sc.lookup(&[], &norm(id)).is_err() && cols.iter().any(|c| c.name == norm(id)) => {}
        _ => {
            expr(cx, sc, e);
        }
    }
}

/// `GROUP BY n` naming an output column that holds a window function or an aggregate, which
/// PostgreSQL refuses there (positions are counted only when no `*` comes first).
fn position_of_call(cx: &mut Ctx, e: &Expr, items: &[SelectItem]) {
    let Expr::Value(v) = e else {
        return;
    };
    let Some(n) = v.value.to_string().parse::<usize>().ok() else {
        return;
    };
    let Some(SelectItem::UnnamedExpr(item) | SelectItem::ExprWithAlias { expr: item, .. }) =
        n.checked_sub(1).and_then(|i| items.get(i))
    else {
        return;
    };
    let before = &items[..n - 1];
    if before.iter().any(|i| {
        matches!(
            i,
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
        )
    }) {
        return;
    }
    let what = if super::group::has_window(item) {
        "window"
    } else if super::group::has_aggregate(item) {
        "aggregate"
    } else {
        return;
    };
    cx.error(
        cx.range(e),
        format!("{what} functions are not allowed in GROUP BY"),
        Some(format!(
            "group by the columns the {what} function reads, not by its result"
        )),
    );
}

/// An ORDER BY key written as a bare name: PostgreSQL looks among the output columns first,
/// and two of that name are ambiguous unless they are the same expression (here: the same
/// table column, or the same type without a source).
fn ambiguous_output(cx: &mut Ctx, e: &Expr, cols: &[OutputColumn]) {
    let Expr::Identifier(id) = e else {
        return;
    };
    let named: Vec<&OutputColumn> = cols.iter().filter(|c| c.name == norm(id)).collect();
    let differ = named
        .windows(2)
        .any(|w| match (&w[0].source, &w[1].source) {
            (None, None) => w[0].ty != w[1].ty,
            (a, b) => a != b,
        });
    if differ {
        cx.error(
            cx.ident_range(id),
            format!("ORDER BY \"{}\" is ambiguous", norm(id)),
            Some("give the output columns different names, or sort by a position".into()),
        );
    }
}

fn order_by_outputs(cx: &mut Ctx, order: Option<&OrderBy>, cols: &[OutputColumn]) {
    if let Some(OrderBy {
        kind: OrderByKind::Expressions(items),
        ..
    }) = order
    {
        let empty = Scope::default();
        for item in items {
            ambiguous_output(cx, &item.expr, cols);
            output_ref(cx, &empty, &item.expr, cols);
        }
    }
}

pub(crate) fn projection(cx: &mut Ctx, sc: &Scope, items: &[SelectItem]) -> Vec<OutputColumn> {
    let mut cols = Vec::new();
    for item in items {
        match item {
            SelectItem::UnnamedExpr(e) => {
                cols.push(output(expr(cx, sc, e), None, cx.range(item), cx.snap));
            }
            SelectItem::ExprWithAlias { expr: e, alias } => {
                cols.push(output(
                    expr(cx, sc, e),
                    Some(alias),
                    cx.range(item),
                    cx.snap,
                ));
            }
            SelectItem::Wildcard(_) => wildcard(cx, sc, None, item, &mut cols),
            SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(name), _) => {
                let q: Vec<String> = parts(name).iter().map(|i| norm(i)).collect();
                wildcard(cx, sc, Some(&q), item, &mut cols);
            }
            SelectItem::QualifiedWildcard(..) => {
                cx.error(
                    cx.range(item),
                    "expression.* is not supported by the analyzer yet",
                    Some("list the columns".into()),
                );
            }
        }
    }
    cols
}

fn wildcard(
    cx: &mut Ctx,
    sc: &Scope,
    q: Option<&[String]>,
    item: &SelectItem,
    cols: &mut Vec<OutputColumn>,
) {
    match sc.expand(q) {
        Some(found) if !(q.is_none() && sc.rels.is_empty()) => {
            for f in found {
                let mut t = Typed::known(f.ty, 0..0);
                t.nullable = f.nullable;
                t.why = f.why;
                t.name = Some(f.name);
                t.source = f.source;
                cols.push(output(t, None, cx.range(item), cx.snap));
            }
        }
        Some(_) => cx.error(
            cx.range(item),
            "SELECT * with no tables specified is not valid",
            Some("add a FROM clause".into()),
        ),
        None => {
            let name = q.map(|q| q.join(".")).unwrap_or_default();
            cx.error(
                cx.range(item),
                format!("missing FROM-clause entry for table \"{name}\""),
                Some("qualify * with a table or alias from FROM".into()),
            );
        }
    }
}
