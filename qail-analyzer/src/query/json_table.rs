//! `JSON_TABLE(doc, path COLUMNS (…)) AS t` in FROM (PostgreSQL 17): a relation with the
//! declared columns, NESTED PATH columns flattened into it. The `PASSING` values and the
//! columns' `DEFAULT … ON EMPTY | ERROR` values, which the parse took out ([`crate::parse`]),
//! are typed here: a DEFAULT must convert to its column's type. A path column is NULL when its path
//! finds nothing; a `FOR ORDINALITY` column of the top level is never NULL.

use std::ops::Range;

use qail_catalog::{NEWEST, Versions};
use sqlparser::ast::{Expr, JsonTableColumn, TableAlias};

use sqlparser::parser::ParserError;
use sqlparser::tokenizer::Token;

use crate::call::sqljson;
use crate::ctx::Ctx;
use crate::diag::version_gap;
use crate::expr::{Fit, expect, expr, settle};
use crate::scope::{Col, Rel, Scope, norm};
use crate::set_aside::parser_over;
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
    let inside = |r: &Range<usize>| encloses(&range, r);
    let passing = within(&cx.aside.json_table.passing, &range);
    for list in passing {
        let read = parser_over(cx.sql, list.clone()).and_then(|mut p| {
            let failed = sqljson::passing(cx, sc, &mut p)?;
            match p.peek_token().token {
                Token::EOF => Ok(failed),
                other => Err(ParserError::ParserError(format!(
                    "unexpected {other} in PASSING"
                ))),
            }
        });
        match read {
            Ok(false) => {}
            Ok(true) => return None,
            Err(e) => {
                cx.error(
                    list,
                    format!("JSON_TABLE PASSING: {e}"),
                    Some("write PASSING value AS name, …".into()),
                );
                return None;
            }
        }
    }
    let behaviors = within(&cx.aside.json_table.behaviors, &range);
    for b in behaviors {
        let words: Vec<String> = cx.sql[b.clone()]
            .split_whitespace()
            .map(str::to_ascii_uppercase)
            .collect();
        if !matches!(
            words.join(" ").as_str(),
            "ERROR ON ERROR" | "EMPTY ON ERROR" | "EMPTY ARRAY ON ERROR"
        ) {
            cx.error(
                b,
                "invalid ON ERROR behavior",
                Some("JSON_TABLE takes ERROR ON ERROR or EMPTY [ARRAY] ON ERROR".into()),
            );
            return None;
        }
    }
    let mut cols = Vec::new();
    add_columns(cx, sc, columns, false, &mut cols)?;
    // Note: column and path names share one namespace.
    let paths: Vec<_> = cx
        .aside
        .json_table
        .path_names
        .iter()
        .filter(|(r, _)| inside(r))
        .cloned()
        .collect();
    let mut seen: Vec<&str> = Vec::new();
    let names = cols
        .iter()
        .map(|c| (range.clone(), c.name.as_str()))
        .chain(paths.iter().map(|(r, n)| (r.clone(), n.as_str())));
    for (at, n) in names {
        if seen.contains(&n) {
            cx.error(
                at,
                format!("duplicate JSON_TABLE column or path name: {n}"),
                Some("give every column and path its own name".into()),
            );
            return None;
        }
        seen.push(n);
    }
    if let Some(a) = alias
        && a.columns.len() > cols.len()
    {
        cx.error(
            range,
            format!(
                "JSON_TABLE function has {} columns available but {} columns specified",
                cols.len(),
                a.columns.len()
            ),
            Some("name at most as many columns as the JSON_TABLE has".into()),
        );
        return None;
    }
    let name = alias.map_or_else(|| "json_table".to_owned(), |a| norm(&a.name));
    if let Some(a) = alias {
        for (c, new) in cols.iter_mut().zip(&a.columns) {
            c.name = norm(&new.name);
        }
    }
    let label = format!("JSON_TABLE AS {name}");
    Some(Rel::new(name, None, label, cols))
}

/// The pieces set aside in `pieces` that lie within `range`.
fn within(pieces: &[Range<usize>], range: &Range<usize>) -> Vec<Range<usize>> {
    pieces
        .iter()
        .filter(|r| encloses(range, r))
        .cloned()
        .collect()
}

/// Whether `inner` lies within `outer`.
fn encloses(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    inner.start >= outer.start && inner.end <= outer.end
}

fn add_columns(
    cx: &mut Ctx,
    sc: &Scope,
    columns: &[JsonTableColumn],
    nested: bool,
    out: &mut Vec<Col>,
) -> Option<()> {
    let ordinality: Vec<_> = columns
        .iter()
        .filter_map(|c| match c {
            JsonTableColumn::ForOrdinality(id) => Some(id),
            _ => None,
        })
        .collect();
    if let [_, second, ..] = ordinality.as_slice() {
        cx.error(
            cx.ident_range(second),
            "only one FOR ORDINALITY column is allowed",
            Some("keep one FOR ORDINALITY column per path".into()),
        );
        return None;
    }
    // Note: a path's own columns come before its NESTED paths' columns, whatever the order
    // they are written in (the server's JSON_TABLE plan).
    let (own, inner): (Vec<_>, Vec<_>) = columns
        .iter()
        .partition(|c| !matches!(c, JsonTableColumn::Nested(_)));
    for c in own.into_iter().chain(inner) {
        match c {
            JsonTableColumn::ForOrdinality(id) => out.push(col(
                norm(id),
                builtin("int4"),
                !nested,
                "a nested ordinality is NULL on rows of a sibling path",
            )),
            JsonTableColumn::Named(n) => {
                let ty = written::resolve(cx, &n.r#type)?;
                let at = cx.ident_range(&n.name).start;
                let defaults: Vec<_> = cx
                    .aside
                    .json_table
                    .defaults
                    .iter()
                    .filter(|(name_at, _)| *name_at == at)
                    .map(|(_, r)| r.clone())
                    .collect();
                for value in defaults {
                    let what = format!("the DEFAULT of JSON_TABLE column \"{}\"", norm(&n.name));
                    match parser_over(cx.sql, value.clone()).and_then(|mut p| p.parse_expr()) {
                        Ok(e) => {
                            if !crate::call::sqljson::behavior_default(cx, &e)
                                || expect(cx, sc, &e, &ty, Fit::Assign, &what).is_error()
                            {
                                return None;
                            }
                        }
                        Err(e) => {
                            cx.error(value, format!("{what}: {e}"), None);
                            return None;
                        }
                    }
                }
                out.push(col(
                    norm(&n.name),
                    ty,
                    false,
                    "a JSON_TABLE column is NULL when its path finds nothing",
                ));
            }
            JsonTableColumn::Nested(n) => add_columns(cx, sc, &n.columns, true, out)?,
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
