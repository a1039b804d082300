//! Assignments to a target table's columns, shared by UPDATE's SET list and INSERT's
//! `ON CONFLICT DO UPDATE SET`: columns, tuples, fields and subscripts of a column, DEFAULT,
//! and the error for a target column that does not exist.

use sqlparser::ast::{
    Assignment, AssignmentTarget, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident,
    ObjectName,
};

use crate::ctx::Ctx;
use crate::diag::did_you_mean;
use crate::expr::{Fit, expect};
use crate::query::select;
use crate::scope::{Rel, Scope, norm, parts};
use crate::types::{assignable, element_of};

mod field;

/// `SET col = expr, …` against the target relation (UPDATE and ON CONFLICT DO UPDATE).
pub(crate) fn set_list(cx: &mut Ctx, sc: &Scope, target: &Rel, assignments: &[Assignment]) {
    for a in assignments {
        let names = match &a.target {
            AssignmentTarget::ColumnName(name) => std::slice::from_ref(name),
            AssignmentTarget::Tuple(names) => names.as_slice(),
        };
        for name in names {
            if let Some(column) = parts(name).first() {
                crate::names::col_id(cx, column);
            }
        }
        match &a.target {
            AssignmentTarget::ColumnName(name) => {
                let ids = parts(name);
                if let [column, fields @ ..] = ids.as_slice()
                    && !fields.is_empty()
                    && field::assign(cx, sc, target, column, fields, &a.value)
                {
                    continue;
                }
                if let Some(id) = ids.last().copied() {
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
        no_such_column(cx, target, id);
        return;
    };
    if is_default(value) {
        return;
    }
    // Note: `SET col[i] = v` assigns an element (the subscript was removed before parsing).
    let element = cx.element_targets.contains(&cx.ident_range(id).start);
    let ty = match element_of(&col.ty) {
        Some(e) if element => e,
        _ => col.ty.clone(),
    };
    let t = expect(
        cx,
        sc,
        value,
        &ty,
        Fit::Assign,
        &format!("column \"{col_name}\""),
    );
    match (t.param, col.not_null) {
        (Some(n), false) => cx.param_nullable(n),
        (Some(n), true) => cx.param_fills(n, &col_name),
        (None, _) => {}
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
            None => no_such_column(cx, target, id),
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

/// `column "x" of relation "t" does not exist`, with a suggestion.
pub(crate) fn no_such_column(cx: &mut Ctx, target: &Rel, id: &Ident) {
    let name = norm(id);
    let hint =
        did_you_mean(&name, target.cols.iter().map(|c| c.name.as_str())).unwrap_or_else(|| {
            "check the name, or run `cargo qail schema pull` if the column is new".into()
        });
    let table = target
        .label
        .split(" AS ")
        .next()
        .unwrap_or(&target.label)
        .to_string();
    cx.error(
        cx.ident_range(id),
        format!("column \"{name}\" of relation \"{table}\" does not exist"),
        Some(hint),
    );
}
