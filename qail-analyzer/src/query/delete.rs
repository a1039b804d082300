//! DELETE … USING.

use sqlparser::ast::{Delete, FromTable};

use crate::ctx::{Ctx, Shape};
use crate::expr::condition;
use crate::query::{finish, from, scope_in};
use crate::scope::Scope;
use crate::{StatementKind, nullability};

pub(crate) fn delete(cx: &mut Ctx, d: &Delete, outer: Option<&Scope>) -> Option<Shape> {
    let tables = match &d.from {
        FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
    };
    let mut sc = scope_in(outer);
    let using = d.using.as_deref().unwrap_or(&[]);
    if !from::from_clause(cx, &mut sc, tables) || !from::beside_target(cx, &mut sc, using) {
        return None;
    }
    if let Some(w) = &d.selection {
        nullability::refine(&mut sc, w);
        condition(cx, &sc, w, "WHERE");
    }
    Some(finish(
        cx,
        &mut sc,
        d.returning.as_deref(),
        StatementKind::Delete,
    ))
}
