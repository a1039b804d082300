//! Assignments to a target table's columns, shared by UPDATE's SET list and INSERT's
//! `ON CONFLICT DO UPDATE SET`: columns, tuples, fields and subscripts of a column, DEFAULT,
//! and the errors for a target column that does not exist or is computed (a generated column
//! takes only DEFAULT, in INSERT, UPDATE and MERGE alike; a `GENERATED ALWAYS AS IDENTITY`
//! column too, unless an INSERT says `OVERRIDING SYSTEM VALUE` or `OVERRIDING USER VALUE`).

use std::ops::Range;

use qail_schema::snapshot::Identity;
use sqlparser::ast::{
    Assignment, AssignmentTarget, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident,
    ObjectName,
};

use crate::ctx::Ctx;
use crate::diag::did_you_mean;
use crate::expr::{Fit, expect};
use crate::query::select;
use crate::scope::{Col, Rel, Scope, norm, parts};
use crate::types::{assignable, base, builtin, display, element_of};

mod field;

/// `SET col = expr, …` against the target relation (UPDATE and ON CONFLICT DO UPDATE).
pub(crate) fn set_list(cx: &mut Ctx, sc: &Scope, target: &Rel, assignments: &[Assignment]) {
    let mut whole: Vec<String> = Vec::new();
    for a in assignments {
        let targets = match &a.target {
            AssignmentTarget::ColumnName(name) => std::slice::from_ref(name),
            AssignmentTarget::Tuple(names) => names.as_slice(),
        };
        for name in targets {
            if let Some(column) = parts(name).first() {
                crate::names::col_id(cx, column);
            }
        }
        // Note: several fields or elements of one column may be assigned, the whole column
        // once.
        let names: Vec<&Ident> = match &a.target {
            AssignmentTarget::ColumnName(name) => match parts(name).as_slice() {
                [one]
                    if !cx
                        .sql
                        .get(cx.ident_range(one).end..)
                        .is_some_and(|rest| rest.trim_start().starts_with('[')) =>
                {
                    vec![*one]
                }
                _ => Vec::new(),
            },
            AssignmentTarget::Tuple(names) => names
                .iter()
                .filter_map(|n| parts(n).last().copied())
                .collect(),
        };
        for id in names {
            let name = norm(id);
            if whole.contains(&name) {
                cx.error(
                    cx.ident_range(id),
                    format!("multiple assignments to same column \"{name}\""),
                    Some("assign each column once".into()),
                );
            }
            whole.push(name);
        }
        match &a.target {
            AssignmentTarget::ColumnName(name) => {
                let ids = parts(name);
                if let [column, fields @ ..] = ids.as_slice()
                    && !fields.is_empty()
                {
                    // Note: the first name is always a column (`SET t.col` names a column
                    // "t", never the table).
                    if field::assign(cx, sc, target, column, fields, &a.value) {
                        continue;
                    }
                    let name = norm(column);
                    match target.cols.iter().find(|c| c.name == name) {
                        Some(col) => cx.error(
                            cx.ident_range(fields[0]),
                            format!(
                                "cannot assign to field \"{}\" of column \"{name}\" because its type {} is not a composite type",
                                norm(fields[0]),
                                crate::types::display(&col.ty)
                            ),
                            Some(format!("assign the whole column: SET {name} = …")),
                        ),
                        None => no_such_column(cx, target, column),
                    }
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
    if let Some(what) = computed(cx, col) {
        let range = cx.ident_range(id);
        refuse_computed(cx, &col_name, what, range, false);
        return;
    }
    // Note: `SET col[i] = v` assigns an element (the subscript was removed before parsing).
    let at = cx.ident_range(id).start;
    let element = cx.element_targets.contains(&at);
    // Note: a key (`SET doc['a'] = v`) subscripts jsonb, whose element is jsonb; an array's
    // subscript is an integer (the server reads a string as one, or fails).
    if cx.keyed_targets.contains(&at) && base(&col.ty, cx.snap) != builtin("jsonb") {
        cx.error(
            cx.ident_range(id),
            format!(
                "a string subscript of column \"{col_name}\" (type {}) is not supported",
                display(&col.ty)
            ),
            Some("string subscripts are keys of a jsonb column; write an integer subscript".into()),
        );
        return;
    }
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
            Some(t) => {
                if let Some(what) = computed(cx, t) {
                    let range = cx.ident_range(id);
                    refuse_computed(cx, &t.name, what, range, false);
                } else if !assignable(&c.ty, &t.ty, cx.snap) {
                    cx.mismatch(
                        cx.range(value),
                        &format!("column \"{}\"", t.name),
                        &t.ty,
                        &c.ty,
                    );
                }
            }
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

/// What PostgreSQL computes for a target column, which then takes no value but DEFAULT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Computed {
    /// `GENERATED ALWAYS AS (…) STORED` or `VIRTUAL`: never a value.
    Generated,
    /// `GENERATED ALWAYS AS IDENTITY`: an INSERT may give it one with `OVERRIDING SYSTEM
    /// VALUE` (`OVERRIDING USER VALUE` makes the server ignore it); UPDATE never.
    Identity,
}

/// Whether the target column `col` is computed by its table, and how.
pub(crate) fn computed(cx: &Ctx, col: &Col) -> Option<Computed> {
    let s = col.source.as_ref()?;
    let c = cx
        .snap
        .relation(Some(&s.schema), &s.table)
        .and_then(|r| r.column(&s.column))?;
    if c.generated.is_some() {
        Some(Computed::Generated)
    } else if c.identity == Some(Identity::Always) {
        Some(Computed::Identity)
    } else {
        None
    }
}

/// The computed column an INSERT may not give a value, given its OVERRIDING clause
/// (`Some(true)` for `OVERRIDING SYSTEM VALUE`, `Some(false)` for `… USER VALUE`).
pub(crate) fn refused_in_insert(cx: &Ctx, col: &Col, overriding: Option<bool>) -> Option<Computed> {
    computed(cx, col).filter(|c| *c == Computed::Generated || overriding.is_none())
}

/// PostgreSQL's refusal of a value for the computed column `name` (in INSERT when
/// `insert`, else in UPDATE's or MERGE's SET).
pub(crate) fn refuse_computed(
    cx: &mut Ctx,
    name: &str,
    what: Computed,
    range: Range<usize>,
    insert: bool,
) {
    let message = if insert {
        format!("cannot insert a non-DEFAULT value into column \"{name}\"")
    } else {
        format!("column \"{name}\" can only be updated to DEFAULT")
    };
    let hint = match (what, insert) {
        (Computed::Generated, _) => format!(
            "\"{name}\" is a generated column: PostgreSQL computes it; leave it out, or write DEFAULT"
        ),
        (Computed::Identity, true) => format!(
            "\"{name}\" is an identity column defined as GENERATED ALWAYS: add OVERRIDING SYSTEM \
             VALUE before VALUES or the query to give it a value, or leave it out (or write DEFAULT)"
        ),
        (Computed::Identity, false) => format!(
            "\"{name}\" is an identity column defined as GENERATED ALWAYS: leave it out, or write DEFAULT"
        ),
    };
    cx.error(range, message, Some(hint));
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

#[cfg(test)]
mod tests {
    fn refused(sql: &str) -> Option<String> {
        let ddl = "CREATE TYPE pair AS (x int4, y int4); \
                   CREATE TABLE u (a int4, b int4, c text, p pair, arr int4[]);"
            .to_owned();
        let (snap, _) = qail_schema::ddl::from_sql(&[("u.sql".to_owned(), ddl)]);
        match crate::analyze(sql, &snap) {
            Ok(_) => None,
            Err(d) => Some(d[0].message.clone()),
        }
    }

    #[test]
    fn set_targets_postgresql_refuses_are_refused() {
        let cases = [
            (
                "UPDATE u t SET t.b = t.b + 10",
                "column \"t\" of relation \"u\" does not exist",
            ),
            (
                "UPDATE u SET u.b = 1",
                "column \"u\" of relation \"u\" does not exist",
            ),
            (
                "UPDATE u SET b.x = 1",
                "cannot assign to field \"x\" of column \"b\" because its type integer is not a composite type",
            ),
            (
                "UPDATE u SET (c, b) = ('car', a + b), b = a + 1",
                "multiple assignments to same column \"b\"",
            ),
        ];
        for (sql, message) in cases {
            assert_eq!(refused(sql).as_deref(), Some(message), "{sql}");
        }
        for sql in [
            "UPDATE u SET p.x = 1, p.y = 2",
            "UPDATE u SET arr[1] = 1, arr[2] = 2",
            "UPDATE u SET arr[1:1] = '{1}', arr[2:2] = '{2}'",
            "UPDATE u SET (a, b) = (1, 2), c = 'x'",
        ] {
            assert_eq!(refused(sql), None, "{sql}");
        }
    }
}
