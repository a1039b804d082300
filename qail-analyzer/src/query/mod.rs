//! Statements: dispatch to SELECT (`select`), INSERT (`insert`), UPDATE (`update`) and
//! DELETE (`delete`), with FROM (`from`) and grouping (`group`) shared by them, and RETURNING.

pub(crate) mod assign;
pub(crate) mod delete;
pub(crate) mod from;
pub(crate) mod group;
pub(crate) mod insert;
mod json_table;
mod merge;
mod recursive;
mod returning;
mod rules;
pub(crate) mod select;
pub(crate) mod update;

use sqlparser::ast::{SelectItem, SetExpr, Statement, UpdateTableFromKind};

use crate::ctx::{Ctx, Shape};
use crate::query::select::projection;
use crate::scope::Scope;
use crate::{OutputColumn, StatementKind};

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
        Statement::Merge { output, .. } => (StatementKind::Merge, output.is_some()),
        _ => (StatementKind::Select, true),
    }
}

/// A scope for a statement's own relations, inside `outer` (the CTEs of `WITH … INSERT`).
pub(crate) fn scope_in<'p>(outer: Option<&'p Scope<'p>>) -> Scope<'p> {
    outer.map_or_else(Scope::default, Scope::child)
}

/// Analyzes a statement that may sit in a query's WITH (`outer` holds the CTEs).
pub(crate) fn statement_in(cx: &mut Ctx, stmt: &Statement, outer: Option<&Scope>) -> Option<Shape> {
    // Note: the queries inside an INSERT, UPDATE, DELETE or MERGE are not its top.
    let dml = !matches!(stmt, Statement::Query(_));
    // Note: a write can change the session through what it runs and the snapshot does not
    // show: a column default's nextval (currval, lastval), a trigger, a rule.
    cx.changes_session |= dml;
    cx.depth += usize::from(dml);
    let out = statement_at(cx, stmt, outer);
    cx.depth -= usize::from(dml);
    out
}

fn statement_at(cx: &mut Ctx, stmt: &Statement, outer: Option<&Scope>) -> Option<Shape> {
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
            update::update(
                cx,
                outer,
                table,
                assignments,
                from,
                selection.as_ref(),
                returning.as_deref(),
            )
        }
        Statement::Delete(d) => delete::delete(cx, d, outer),
        Statement::Merge {
            table,
            source,
            on,
            clauses,
            output,
            ..
        } => merge::merge(
            cx,
            &merge::Merge {
                table,
                source,
                on,
                clauses,
                output: output.as_ref(),
            },
            outer,
        ),
        other => {
            let r = cx.range(other);
            cx.error(
                r,
                "only SELECT, INSERT, UPDATE, DELETE and MERGE can be checked",
                Some("run other statements with execute() or batch_execute()".into()),
            );
            None
        }
    }
}

/// RETURNING (if any) over the statement's scope.
pub(crate) fn finish(
    cx: &mut Ctx,
    sc: &mut Scope,
    returning: Option<&[SelectItem]>,
    kind: StatementKind,
) -> Shape {
    for item in returning.unwrap_or_default() {
        let e = match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => e,
            _ => continue,
        };
        let what = if group::has_window(e) {
            "window"
        } else if group::has_aggregate(e) {
            "aggregate"
        } else {
            continue;
        };
        cx.error(
            cx.range(e),
            format!("{what} functions are not allowed in RETURNING"),
            Some(format!(
                "return the rows from a WITH query and compute the {what} function over them"
            )),
        );
    }
    let in_with = std::mem::take(&mut cx.in_with);
    let at = returning
        .and_then(|items| items.first())
        .map_or(0..cx.sql.len(), |i| cx.range(i));
    let replaced = match sc.rels.first().cloned() {
        Some(target) => rules::apply(cx, &target, kind, returning.is_some(), in_with, at),
        None => Some(false),
    };
    if replaced == Some(true) {
        // Note: what the server describes; running it returns the rows of the rule's action.
        return Shape {
            kind,
            returns_rows: false,
            columns: Vec::new(),
        };
    }
    let added = returning.map_or(0, |items| returning::old_new(cx, sc, items, kind));
    let mut columns: Vec<OutputColumn> = returning
        .map(|items| projection(cx, sc, items))
        .unwrap_or_default();
    sc.rels.truncate(sc.rels.len() - added);
    select::resolve_unknown(&mut columns);
    Shape {
        kind,
        returns_rows: returning.is_some(),
        columns,
    }
}
