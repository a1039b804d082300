//! UPDATE: its target, FROM, WHERE and RETURNING; the SET list is [`super::assign`]'s.

use sqlparser::ast::{Assignment, Expr, SelectItem, TableWithJoins};

use crate::ctx::{Ctx, Shape};
use crate::expr::condition;
use crate::query::assign::set_list;
use crate::query::{finish, from, scope_in};
use crate::scope::Scope;
use crate::{StatementKind, nullability};

pub(crate) fn update(
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
        || !from::beside_target(cx, &mut sc, from)
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
    Some(finish(cx, &mut sc, returning, StatementKind::Update))
}
