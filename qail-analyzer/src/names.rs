//! Names that do not resolve: relations looked up through the search_path with
//! suggestions, and the diagnostics for column references that fail.

use sqlparser::ast::Ident;

use crate::ctx::Ctx;
use crate::diag::closest;
use crate::scope::LookupError;
use qail_schema::builtin::{SYSTEM_SCHEMAS, system_relation};
use qail_schema::snapshot::{Relation, Snapshot};

/// Looks a table or view up by (optional schema, name) through the search_path. The system
/// catalogs and `information_schema` views are built in; `pg_catalog` is searched first unless
/// the search_path names it elsewhere, as PostgreSQL does.
pub(crate) fn find_relation<'s>(
    snap: &'s Snapshot,
    schema: Option<&str>,
    name: &str,
) -> Option<&'s Relation> {
    // Note: an unreadable declared range is reported before any name is looked up.
    let target = snap.target().unwrap_or(qail_catalog::Versions::ALL);
    let in_schema = |s: &str| -> Option<&'s Relation> {
        if SYSTEM_SCHEMAS.contains(&s) {
            return system_relation(s, name, target);
        }
        snap.relations
            .iter()
            .find(|r| r.schema == s && r.name == name)
    };
    match schema {
        Some(s) => in_schema(s),
        None => snap.effective_search_path().find_map(in_schema),
    }
}

/// "did you mean" candidates for a relation name: visible names, then qualified ones.
pub(crate) fn relation_suggestion(
    snap: &Snapshot,
    schema: Option<&str>,
    name: &str,
) -> Option<String> {
    let visible: Vec<&str> = snap
        .relations
        .iter()
        .filter(|r| match schema {
            Some(s) => r.schema == s,
            None => snap.on_search_path(&r.schema),
        })
        .map(|r| r.name.as_str())
        .collect();
    if let Some(c) = closest(name, visible) {
        return Some(c.to_string());
    }
    let qualified: Vec<String> = snap
        .relations
        .iter()
        .map(|r| format!("{}.{}", r.schema, r.name))
        .collect();
    closest(name, qualified.iter().map(String::as_str))
        .or_else(|| snap.relations.iter().find(|r| r.name == name).map(|_| ""))
        .map(|c| {
            if c.is_empty() {
                qualified_of(snap, name)
            } else {
                c.to_string()
            }
        })
}

fn qualified_of(snap: &Snapshot, name: &str) -> String {
    snap.relations
        .iter()
        .find(|r| r.name == name)
        .map(|r| format!("{}.{}", r.schema, r.name))
        .unwrap_or_default()
}

/// Reports a column reference that did not resolve.
pub(crate) fn report_lookup(
    cx: &mut Ctx,
    q: &[String],
    name: &str,
    qual: &[Ident],
    id: &Ident,
    e: LookupError,
) {
    let range = cx.ident_range(id);
    match e {
        LookupError::NoColumn { within, suggestion } => {
            let msg = match within {
                Some(rel) => format!("column \"{name}\" does not exist in table \"{}\"", rel),
                None => format!("column \"{name}\" does not exist"),
            };
            let hint = suggestion
                .map(|s| format!("did you mean \"{s}\"?"))
                .unwrap_or_else(|| {
                    "check the name, or run `cargo qail schema pull` if the column is new".into()
                });
            cx.error(range, msg, Some(hint));
        }
        LookupError::NoRelation { suggestion } => {
            let r = qual.first().map_or(range.clone(), |f| {
                cx.ident_range(f).start..cx.ident_range(qual.last().unwrap_or(f)).end
            });
            let hint = suggestion.map_or_else(
                || "add the table to FROM or fix the qualifier".to_string(),
                |s| format!("did you mean \"{s}\"?"),
            );
            cx.error(
                r,
                format!("missing FROM-clause entry for table \"{}\"", q.join(".")),
                Some(hint),
            );
        }
        LookupError::Ambiguous(rels) => {
            let options: Vec<String> = rels.iter().map(|r| format!("{r}.{name}")).collect();
            cx.error(
                range,
                format!("column reference \"{name}\" is ambiguous"),
                Some(format!("qualify it: {}", options.join(" or "))),
            );
        }
    }
}

/// Refuses an unquoted reserved keyword where PostgreSQL takes only a name (`ColId`: an INSERT
/// or SET column, a CTE's name, a table alias): `INSERT INTO t (select)` is a syntax error
/// on the server, so it is one here too. sqlparser reads any word there as a name.
pub(crate) fn col_id(cx: &mut Ctx, id: &Ident) {
    if id.quote_style.is_none() && !crate::dialect::is_col_id(&id.value) {
        let lower = id.value.to_ascii_lowercase();
        cx.error(
            cx.ident_range(id),
            format!(
                "\"{}\" is a reserved keyword in PostgreSQL and cannot be a name here",
                id.value
            ),
            Some(format!("write it in double quotes: \"{lower}\"")),
        );
    }
}
