//! `JSON_TABLE(doc, path COLUMNS (…)) AS t` in FROM (PostgreSQL 17): a relation with the
//! declared columns, NESTED PATH columns flattened into it. A path column is NULL when its path
//! finds nothing; a `FOR ORDINALITY` column of the top level is never NULL.

use std::ops::Range;

use qail_catalog::{NEWEST, Versions};
use sqlparser::ast::{Expr, JsonTableColumn, TableAlias};

use crate::ctx::Ctx;
use crate::diag::version_gap;
use crate::expr::{expr, settle};
use crate::scope::{Col, Rel, Scope, norm};
use crate::types::{builtin, written};

/// The relation of a `JSON_TABLE` over `doc` (seeing earlier FROM items, as PostgreSQL's
/// JSON_TABLE is implicitly LATERAL).
pub(crate) fn json_table(
    cx: &mut Ctx,
    sc: &Scope,
    doc: &Expr,
    columns: &[JsonTableColumn],
    alias: Option<&TableAlias>,
    range: Range<usize>,
) -> Option<Rel> {
    let have = Versions::span(17, NEWEST);
    if !have.covers(cx.target) {
        let (message, hint) = version_gap("JSON_TABLE", have, cx.target);
        cx.error(range, message, Some(hint));
        return None;
    }
    let mut t = expr(cx, sc, doc);
    // Note: an untyped document is text, as the server's Describe reports for `$1`.
    settle(cx, &mut t, &builtin("text"));
    if t.is_error() {
        return None;
    }
    let mut cols = Vec::new();
    add_columns(cx, columns, false, &mut cols)?;
    let name = alias.map_or_else(|| "json_table".to_owned(), |a| norm(&a.name));
    if let Some(a) = alias {
        for (c, new) in cols.iter_mut().zip(&a.columns) {
            c.name = norm(&new.name);
        }
    }
    let label = format!("JSON_TABLE AS {name}");
    Some(Rel::new(name, None, label, cols))
}

fn add_columns(
    cx: &mut Ctx,
    columns: &[JsonTableColumn],
    nested: bool,
    out: &mut Vec<Col>,
) -> Option<()> {
    for c in columns {
        match c {
            JsonTableColumn::ForOrdinality(id) => out.push(col(
                norm(id),
                builtin("int4"),
                !nested,
                "a nested ordinality is NULL on rows of a sibling path",
            )),
            JsonTableColumn::Named(n) => {
                let ty = written::resolve(cx, &n.r#type)?;
                out.push(col(
                    norm(&n.name),
                    ty,
                    false,
                    "a JSON_TABLE column is NULL when its path finds nothing",
                ));
            }
            JsonTableColumn::Nested(n) => add_columns(cx, &n.columns, true, out)?,
        }
    }
    Some(())
}

fn col(name: String, ty: qail_schema::snapshot::TypeRef, not_null: bool, why: &str) -> Col {
    Col {
        name,
        ty,
        not_null,
        source: None,
        why: if not_null {
            Vec::new()
        } else {
            vec![why.to_owned()]
        },
        shape: None,
    }
}
