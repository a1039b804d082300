//! Statement dispatch, UPDATE, DELETE and RETURNING. INSERT lives in `insert`.

use sqlparser::ast::{
    Assignment, AssignmentTarget, Delete, Expr, FromTable, FunctionArg, FunctionArgExpr,
    FunctionArguments, Ident, ObjectName, SelectItem, SetExpr, Statement, TableWithJoins,
    UpdateTableFromKind,
};

use super::ctx::{Ctx, Shape};
use super::expr::{Fit, condition, expect};
use super::from;
use super::insert;
use super::nullability;
use super::scope::{Rel, Scope, norm, parts};
use super::select::{self, projection};
use super::types::assignable;
use super::{OutputColumn, StatementKind};

/// Analyzes one statement.
pub(crate) fn statement(cx: &mut Ctx, stmt: &Statement) -> Option<Shape> {
    if let Statement::Query(q) = stmt {
        let columns = select::query(cx, q, None)?;
        // Note: `WITH … INSERT/UPDATE/DELETE` is a query whose body is the statement.
        let (kind, returns_rows) = match q.body.as_ref() {
            SetExpr::Insert(s) | SetExpr::Update(s) | SetExpr::Delete(s) => kind_of(s),
            _ => (StatementKind::Select, true),
        };
        return Some(Shape {
            kind,
            columns,
            returns_rows,
        });
    }
    statement_in(cx, stmt, None)
}

/// The kind of a data-modifying statement and whether it has RETURNING.
fn kind_of(stmt: &Statement) -> (StatementKind, bool) {
    match stmt {
        Statement::Insert(i) => (StatementKind::Insert, i.returning.is_some()),
        Statement::Update { returning, .. } => (StatementKind::Update, returning.is_some()),
        Statement::Delete(d) => (StatementKind::Delete, d.returning.is_some()),
        _ => (StatementKind::Select, true),
    }
}

/// A scope for a statement's own relations, inside `outer` (the CTEs of `WITH … INSERT`).
pub(crate) fn scope_in<'p>(outer: Option<&'p Scope<'p>>) -> Scope<'p> {
    outer.map_or_else(Scope::default, Scope::child)
}

/// Analyzes a statement that may sit in a query's WITH (`outer` holds the CTEs).
pub(crate) fn statement_in(cx: &mut Ctx, stmt: &Statement, outer: Option<&Scope>) -> Option<Shape> {
    match stmt {
        Statement::Query(q) => {
            let columns = select::query(cx, q, outer)?;
            Some(Shape {
                kind: StatementKind::Select,
                columns,
                returns_rows: true,
            })
        }
        Statement::Insert(ins) => insert::insert(cx, ins, outer),
        Statement::Update {
            table,
            assignments,
            from,
            selection,
            returning,
            ..
        } => {
            let from = match from {
                Some(UpdateTableFromKind::BeforeSet(f) | UpdateTableFromKind::AfterSet(f)) => {
                    f.as_slice()
                }
                None => &[],
            };
            update(
                cx,
                outer,
                table,
                assignments,
                from,
                selection.as_ref(),
                returning.as_deref(),
            )
        }
        Statement::Delete(d) => delete(cx, d, outer),
        other => {
            let r = cx.range(other);
            cx.error(
                r,
                "only SELECT, INSERT, UPDATE and DELETE can be checked",
                Some("run other statements with execute() or batch_execute()".into()),
            );
            None
        }
    }
}

fn update(
    cx: &mut Ctx,
    outer: Option<&Scope>,
    table: &TableWithJoins,
    assignments: &[Assignment],
    from: &[TableWithJoins],
    selection: Option<&Expr>,
    returning: Option<&[SelectItem]>,
) -> Option<Shape> {
    let mut sc = scope_in(outer);
    if !from::from_clause(cx, &mut sc, std::slice::from_ref(table))
        || !from::from_clause(cx, &mut sc, from)
    {
        return None;
    }
    if let Some(w) = selection {
        nullability::refine(&mut sc, w);
    }
    let target = sc.rels.first()?.clone();
    set_list(cx, &sc, &target, assignments);
    if let Some(w) = selection {
        condition(cx, &sc, w, "WHERE");
    }
    Some(finish(cx, &sc, returning, StatementKind::Update))
}

/// `SET col = expr, …` against the target relation (UPDATE and ON CONFLICT DO UPDATE).
pub(crate) fn set_list(cx: &mut Ctx, sc: &Scope, target: &Rel, assignments: &[Assignment]) {
    for a in assignments {
        match &a.target {
            AssignmentTarget::ColumnName(name) => {
                if let Some(id) = parts(name).last().copied() {
                    assign(cx, sc, target, id, &a.value);
                }
            }
            AssignmentTarget::Tuple(names) => set_tuple(cx, sc, target, names, &a.value),
        }
    }
}

/// `col = value` against the target relation.
fn assign(cx: &mut Ctx, sc: &Scope, target: &Rel, id: &Ident, value: &Expr) {
    let col_name = norm(id);
    let Some(col) = target.cols.iter().find(|c| c.name == col_name) else {
        insert::no_such_column(cx, target, id);
        return;
    };
    if is_default(value) {
        return;
    }
    let t = expect(
        cx,
        sc,
        value,
        &col.ty,
        Fit::Assign,
        &format!("column \"{col_name}\""),
    );
    if let (Some(n), false) = (t.param, col.not_null) {
        cx.param_nullable(n);
    }
}

/// `SET (a, b) = (x, y)`, `= ROW(x, y)` or `= (SELECT x, y …)`.
fn set_tuple(cx: &mut Ctx, sc: &Scope, target: &Rel, names: &[ObjectName], value: &Expr) {
    let ids: Vec<&Ident> = names
        .iter()
        .filter_map(|n| parts(n).last().copied())
        .collect();
    let values: Option<Vec<&Expr>> = match value {
        Expr::Tuple(items) => Some(items.iter().collect()),
        Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("row") => match &f.args {
            FunctionArguments::List(list) => list
                .args
                .iter()
                .map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                    _ => None,
                })
                .collect(),
            _ => None,
        },
        _ => None,
    };
    if let Some(values) = values {
        if values.len() != ids.len() {
            return tuple_mismatch(cx, value, ids.len(), values.len());
        }
        for (id, v) in ids.into_iter().zip(values) {
            assign(cx, sc, target, id, v);
        }
        return;
    }
    let Expr::Subquery(q) = value else {
        cx.error(
            cx.range(value),
            "SET (a, b) = … needs a row (x, y) or a subquery",
            Some("write SET (a, b) = ($1, $2) or assign each column".into()),
        );
        return;
    };
    let Some(cols) = select::subquery(cx, q, sc) else {
        return;
    };
    if cols.len() != ids.len() {
        return tuple_mismatch(cx, value, ids.len(), cols.len());
    }
    for (id, c) in ids.into_iter().zip(cols) {
        match target.cols.iter().find(|t| t.name == norm(id)) {
            Some(t) if !assignable(&c.ty, &t.ty, cx.snap) => {
                cx.mismatch(
                    cx.range(value),
                    &format!("column \"{}\"", t.name),
                    &t.ty,
                    &c.ty,
                );
            }
            Some(_) => {}
            None => insert::no_such_column(cx, target, id),
        }
    }
}

fn tuple_mismatch(cx: &mut Ctx, value: &Expr, want: usize, got: usize) {
    cx.error(
        cx.range(value),
        format!("SET lists {want} columns but the source gives {got} values"),
        Some("give one value per column".into()),
    );
}

/// The `DEFAULT` keyword in VALUES or SET.
pub(crate) fn is_default(e: &Expr) -> bool {
    matches!(e, Expr::Identifier(id) if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default"))
}

fn delete(cx: &mut Ctx, d: &Delete, outer: Option<&Scope>) -> Option<Shape> {
    let tables = match &d.from {
        FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
    };
    let mut sc = scope_in(outer);
    let using = d.using.as_deref().unwrap_or(&[]);
    if !from::from_clause(cx, &mut sc, tables) || !from::from_clause(cx, &mut sc, using) {
        return None;
    }
    if let Some(w) = &d.selection {
        nullability::refine(&mut sc, w);
        condition(cx, &sc, w, "WHERE");
    }
    Some(finish(
        cx,
        &sc,
        d.returning.as_deref(),
        StatementKind::Delete,
    ))
}

/// RETURNING (if any) over the statement's scope.
pub(crate) fn finish(
    cx: &mut Ctx,
    sc: &Scope,
    returning: Option<&[SelectItem]>,
    kind: StatementKind,
) -> Shape {
    let mut columns: Vec<OutputColumn> = returning
        .map(|items| projection(cx, sc, items))
        .unwrap_or_default();
    select::resolve_unknown(&mut columns);
    Shape {
        kind,
        returns_rows: returning.is_some(),
        columns,
    }
}
