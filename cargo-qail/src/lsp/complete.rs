//! Completion from the tolerant reading of the statement being typed: what comes before the
//! cursor decides what is offered.
//!
//! | before the cursor | offered |
//! |---|---|
//! | `alias.` / `table.` | that relation's columns only |
//! | `schema.` | the schema's relations |
//! | `FROM`, `JOIN`, `UPDATE`, `INTO`, `,` in FROM | tables and views, schemas |
//! | a relation in FROM | `WHERE`, `JOIN`, … |
//! | `::`, `CAST(… AS` | types |
//! | `col = '` (a string compared with an enum column) | the enum's labels |
//! | nothing | `SELECT`, `INSERT INTO`, … |
//! | elsewhere | the columns of the statement's relations, aliases, functions, keywords |

use lsp_types::{CompletionItem, CompletionItemKind};

use super::resolve::{self, Read};
use super::scan::{Kind, word_start};
use crate::report::format_type;
use crate::report::names::quote_ident;
use qail_schema::Snapshot;
use qail_schema::snapshot::UserTypeKind;

/// Completion items at byte `at` of `sql` (the SQL as written).
pub(crate) fn complete(snap: &Snapshot, sql: &str, at: usize) -> Vec<CompletionItem> {
    let read = Read::new(sql);
    let mut out = Vec::new();
    if let Some(labels) = enum_labels(snap, &read, at) {
        return labels;
    }
    let start = word_start(sql, at);
    let prefix = sql[start..at].to_lowercase();
    let prev = read.tokens.partition_point(|t| t.range.end <= start);
    let prev = prev.checked_sub(1).map(|i| (i, &read.tokens[i]));
    let Some((p, prev_tok)) = prev else {
        keywords(&mut out, STATEMENT);
        return out;
    };
    match prev_tok.kind {
        Kind::Dot => {
            let Some(q) = p
                .checked_sub(1)
                .map(|k| &read.tokens[k])
                .filter(|t| matches!(t.kind, Kind::Word { .. }))
                .map(|t| t.name(sql))
            else {
                return out;
            };
            if let Some(r) = read.visible(&q) {
                if let Some(rel) = resolve::relation(snap, r) {
                    for c in &rel.columns {
                        out.push(item(
                            &c.name,
                            CompletionItemKind::FIELD,
                            format!("{} · {}", format_type(&c.ty, snap), r.label()),
                        ));
                    }
                }
                return out;
            }
            relations(&mut out, snap, Some(&q), &prefix);
            return out;
        }
        Kind::Cast => {
            types(&mut out, snap);
            return out;
        }
        _ => {}
    }
    let clause = clause_before(&read, p);
    let is = |kw: &str| prev_tok.is(sql, kw);
    let table_place = ["FROM", "JOIN", "UPDATE", "INTO", "TABLE"]
        .iter()
        .any(|kw| is(kw))
        || (prev_tok.kind == Kind::Comma && clause.as_deref() == Some("FROM"));
    if table_place {
        relations(&mut out, snap, None, &prefix);
        for s in &snap.schemas {
            out.push(item(s, CompletionItemKind::MODULE, "schema".to_owned()));
        }
        return out;
    }
    if is("AS") && cast_as(&read, p) {
        types(&mut out, snap);
        return out;
    }
    let after_relation = read.rels.iter().any(|r| {
        r.range.end == prev_tok.range.end
            || r.alias.is_some() && {
                // The alias is the last word of the reference.
                prev_tok.range.start > r.range.end
                    && r.alias.as_deref() == Some(prev_tok.name(sql).as_str())
                    && read.tokens[..p]
                        .last()
                        .is_some_and(|t| t.range.end <= r.range.end || t.is(sql, "AS"))
            }
    });
    if after_relation {
        keywords(&mut out, AFTER_RELATION);
        return out;
    }
    // An expression: columns of the statement's relations, aliases, functions, keywords.
    for r in &read.rels {
        if let Some(v) = r.visible() {
            out.push(item(v, CompletionItemKind::VARIABLE, r.label()));
        }
        if let Some(rel) = resolve::relation(snap, r) {
            for c in &rel.columns {
                if c.name.starts_with(&prefix) {
                    out.push(item(
                        &c.name,
                        CompletionItemKind::FIELD,
                        format!("{} · {}", format_type(&c.ty, snap), r.label()),
                    ));
                }
            }
        }
    }
    if !prefix.is_empty() {
        functions(&mut out, snap, &prefix);
    }
    let words = match clause.as_deref() {
        Some("SELECT") => SELECT_LIST,
        Some("WHERE" | "ON" | "HAVING" | "AND" | "OR") => PREDICATE,
        Some("SET") => &["WHERE", "FROM", "RETURNING"],
        _ => EXPRESSION,
    };
    keywords(&mut out, words);
    out
}

/// The nearest clause keyword before token `p` at the same parenthesis level.
fn clause_before(read: &Read<'_>, p: usize) -> Option<String> {
    const CLAUSES: &[&str] = &[
        "SELECT",
        "FROM",
        "WHERE",
        "ON",
        "HAVING",
        "SET",
        "VALUES",
        "RETURNING",
        "ORDER",
        "GROUP",
        "LIMIT",
        "AND",
        "OR",
    ];
    let mut depth = 0usize;
    for t in read.tokens[..=p].iter().rev() {
        match t.kind {
            Kind::Close => depth += 1,
            Kind::Open if depth > 0 => depth -= 1,
            Kind::Open => return None,
            Kind::Word { quoted: false } if depth == 0 => {
                if let Some(kw) = CLAUSES.iter().find(|kw| t.is(read.sql, kw)) {
                    return Some((*kw).to_owned());
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether the `AS` at token `p` is inside `CAST(`.
fn cast_as(read: &Read<'_>, p: usize) -> bool {
    let mut depth = 0usize;
    for (k, t) in read.tokens[..p].iter().enumerate().rev() {
        match t.kind {
            Kind::Close => depth += 1,
            Kind::Open if depth > 0 => depth -= 1,
            Kind::Open => {
                return k
                    .checked_sub(1)
                    .is_some_and(|b| read.tokens[b].is(read.sql, "CAST"));
            }
            _ => {}
        }
    }
    false
}

/// The labels of an enum column compared with the string at `at`: `mood = 'ha|'`,
/// `mood IN ('sad', '|`.
fn enum_labels(snap: &Snapshot, read: &Read<'_>, at: usize) -> Option<Vec<CompletionItem>> {
    let closed = |t: &super::scan::Token| {
        t.range.end - t.range.start >= 2 && read.sql[..t.range.end].ends_with('\'')
    };
    let i = read.tokens.iter().position(|t| {
        t.kind == Kind::Str
            && t.range.start < at
            && (at < t.range.end || at == t.range.end && !closed(t))
    })?;
    // Walk back over `'a', 'b', (` and `IN` to the operator and the column before it.
    let mut k = i.checked_sub(1)?;
    while matches!(read.tokens[k].kind, Kind::Comma | Kind::Str | Kind::Open) {
        k = k.checked_sub(1)?;
    }
    let op = &read.tokens[k];
    let op_ok = op.is(read.sql, "IN") || matches!(op.text(read.sql), "=" | "<>" | "!=");
    if !op_ok {
        return None;
    }
    let col = k.checked_sub(1)?;
    let resolve::Target::Column(_, c, _) = resolve::target(snap, read, col)? else {
        return None;
    };
    let user = snap.user_type(Some(&c.ty.schema), &c.ty.name)?;
    let UserTypeKind::Enum { labels } = &user.kind else {
        return None;
    };
    Some(
        labels
            .iter()
            .map(|l| {
                item(
                    l,
                    CompletionItemKind::ENUM_MEMBER,
                    format!("{} label", user.name),
                )
            })
            .collect(),
    )
}

fn relations(out: &mut Vec<CompletionItem>, snap: &Snapshot, schema: Option<&str>, prefix: &str) {
    for r in &snap.relations {
        let visible = match schema {
            Some(s) => r.schema == s,
            None => true,
        };
        if !visible || !r.name.starts_with(prefix) {
            continue;
        }
        let on_path = schema.is_some() || snap.on_search_path(&r.schema);
        let label = if on_path {
            quote_ident(&r.name).into_owned()
        } else {
            format!("{}.{}", quote_ident(&r.schema), quote_ident(&r.name))
        };
        let kind = r.kind.sql_name();
        out.push(item(
            &label,
            CompletionItemKind::CLASS,
            format!(
                "{kind} {}.{} ({} columns)",
                r.schema,
                r.name,
                r.columns.len()
            ),
        ));
    }
}

/// The PostgreSQL versions the snapshot targets; only what all of them have is offered.
fn target(snap: &Snapshot) -> qail_catalog::Versions {
    // Note: an unreadable range is reported by the analyzer's diagnostics.
    snap.target().unwrap_or(qail_catalog::Versions::ALL)
}

fn types(out: &mut Vec<CompletionItem>, snap: &Snapshot) {
    let target = target(snap);
    let mut last = "";
    for t in qail_catalog::TYPES {
        // Note: a type whose row changed between versions is listed once per row.
        if t.category != 'P'
            && !t.name.starts_with('_')
            && t.versions.covers(target)
            && std::mem::replace(&mut last, t.name) != t.name
        {
            out.push(item(
                t.name,
                CompletionItemKind::TYPE_PARAMETER,
                t.display.to_owned(),
            ));
        }
    }
    for t in &snap.types {
        let what = match &t.kind {
            UserTypeKind::Enum { .. } => "enum",
            UserTypeKind::Composite { .. } => "composite type",
            UserTypeKind::Domain { .. } => "domain",
            UserTypeKind::Range { .. } => "range type",
        };
        out.push(item(
            &t.name,
            CompletionItemKind::TYPE_PARAMETER,
            format!("{what} {}.{}", t.schema, t.name),
        ));
    }
}

fn functions(out: &mut Vec<CompletionItem>, snap: &Snapshot, prefix: &str) {
    let target = target(snap);
    let mut last = "";
    let start = qail_catalog::FUNCTIONS.partition_point(|f| f.name < prefix);
    for f in &qail_catalog::FUNCTIONS[start..] {
        if !f.name.starts_with(prefix) {
            if f.name > prefix {
                break;
            }
            continue;
        }
        if f.name == last || f.name.starts_with('_') || !f.versions.covers(target) {
            continue;
        }
        last = f.name;
        out.push(item(
            f.name,
            CompletionItemKind::FUNCTION,
            super::hover::builtin_signatures(f.name, target),
        ));
    }
    for f in snap.functions.iter().filter(|f| f.name.starts_with(prefix)) {
        let args: Vec<String> = f.args.iter().map(|a| format_type(a, snap)).collect();
        out.push(item(
            &f.name,
            CompletionItemKind::FUNCTION,
            format!(
                "{}({}) → {}",
                f.name,
                args.join(", "),
                format_type(&f.returns, snap)
            ),
        ));
    }
}

const STATEMENT: &[&str] = &["SELECT", "INSERT INTO", "UPDATE", "DELETE FROM", "WITH"];
const AFTER_RELATION: &[&str] = &[
    "AS",
    "WHERE",
    "JOIN",
    "LEFT JOIN",
    "INNER JOIN",
    "RIGHT JOIN",
    "FULL JOIN",
    "CROSS JOIN",
    "ON",
    "USING",
    "SET",
    "GROUP BY",
    "ORDER BY",
    "LIMIT",
    "RETURNING",
];
const SELECT_LIST: &[&str] = &[
    "FROM", "AS", "DISTINCT", "CASE", "WHEN", "THEN", "ELSE", "END", "NULL", "CAST",
];
const PREDICATE: &[&str] = &[
    "AND",
    "OR",
    "NOT",
    "IS NULL",
    "IS NOT NULL",
    "IN",
    "LIKE",
    "ILIKE",
    "BETWEEN",
    "EXISTS",
    "ANY",
    "ORDER BY",
    "GROUP BY",
    "LIMIT",
];
const EXPRESSION: &[&str] = &[
    "AND", "OR", "NOT", "NULL", "CASE", "CAST", "AS", "ASC", "DESC",
];

fn keywords(out: &mut Vec<CompletionItem>, words: &[&str]) {
    for w in words {
        out.push(item(w, CompletionItemKind::KEYWORD, "keyword".to_owned()));
    }
}

fn item(label: &str, kind: CompletionItemKind, detail: String) -> CompletionItem {
    CompletionItem {
        label: label.to_owned(),
        kind: Some(kind),
        detail: Some(detail),
        ..CompletionItem::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap() -> Snapshot {
        qail_schema::ddl::from_sql(&[(
            "t.sql".to_owned(),
            "CREATE TYPE mood AS ENUM ('happy', 'sad');
             CREATE TABLE harbors (id int PRIMARY KEY, name text NOT NULL, m mood);
             CREATE TABLE operators (id int PRIMARY KEY, label text);"
                .to_owned(),
        )])
        .0
    }

    fn labels(sql: &str) -> Vec<String> {
        labels_in(&snap(), sql)
    }

    fn labels_in(snap: &Snapshot, sql: &str) -> Vec<String> {
        let at = sql.find('|').unwrap();
        let sql = sql.replace('|', "");
        complete(snap, &sql, at)
            .into_iter()
            .map(|i| i.label)
            .collect()
    }

    #[test]
    fn only_what_every_targeted_version_has() {
        let mut snap = snap();
        snap.postgres = Some("16..=18".to_owned());
        let l = labels_in(&snap, "SELECT uuid|");
        assert!(!l.contains(&"uuidv7".to_owned()), "{l:?}");
        assert!(labels_in(&snap, "SELECT any_v|").contains(&"any_value".to_owned()));
        snap.postgres = Some("18".to_owned());
        assert!(labels_in(&snap, "SELECT uuid|").contains(&"uuidv7".to_owned()));
        snap.postgres = Some("15..=18".to_owned());
        assert!(!labels_in(&snap, "SELECT any_v|").contains(&"any_value".to_owned()));
        assert!(labels_in(&snap, "SELECT 1::|").contains(&"int4multirange".to_owned()));
        snap.postgres = Some("13..=18".to_owned());
        assert!(!labels_in(&snap, "SELECT 1::|").contains(&"int4multirange".to_owned()));
    }

    #[test]
    fn after_an_alias_only_its_columns() {
        assert_eq!(
            labels("SELECT o.| FROM harbors h JOIN operators o ON o.id = h.id"),
            ["id", "label"]
        );
        assert_eq!(labels("SELECT h.na| FROM harbors h"), ["id", "name", "m"]);
    }

    #[test]
    fn contexts() {
        let l = labels("SELECT * FROM |");
        assert!(
            l.contains(&"harbors".to_owned()) && l.contains(&"public".to_owned()),
            "{l:?}"
        );
        let l = labels("SELECT * FROM harbors |");
        assert!(
            l.contains(&"WHERE".to_owned()) && !l.contains(&"harbors".to_owned()),
            "{l:?}"
        );
        let l = labels("SELECT * FROM harbors WHERE na|");
        assert!(
            l.contains(&"name".to_owned()) && !l.contains(&"label".to_owned()),
            "{l:?}"
        );
        let l = labels("SELECT 1::|");
        assert!(
            l.contains(&"int4".to_owned()) && l.contains(&"mood".to_owned()),
            "{l:?}"
        );
        assert_eq!(
            labels("SELECT * FROM harbors WHERE m = 'h|"),
            ["happy", "sad"]
        );
        assert_eq!(
            labels("SELECT * FROM harbors h WHERE h.m IN ('sad', '|')"),
            ["happy", "sad"]
        );
        let l = labels("SELECT upp|");
        assert!(l.contains(&"upper".to_owned()), "{l:?}");
        let l = labels("SELECT 1::ch|");
        assert_eq!(l.iter().filter(|t| *t == "char").count(), 1, "{l:?}");
        assert!(labels("|").contains(&"SELECT".to_owned()));
    }
}
