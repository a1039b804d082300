//! Hover: a result column's PostgreSQL type, Rust type, nullability and the reasons (those of
//! `cargo qail analyze --why`); a column reference's type through its relation and outer
//! joins; a parameter's expected type; a relation, function or type.

use std::fmt::Write;
use std::ops::Range;

use super::document::Region;
use super::resolve::{self, Read, Target};
use super::scan::Kind;
use crate::report::format_type;
use crate::report::why::explain;
use qail_analyzer::OutputColumn;
use qail_analyzer::rust_type::Features;
use qail_schema::Snapshot;
use qail_schema::snapshot::{Column, Relation, RelationKind, UserTypeKind};

/// The hover text (Markdown) at byte `at` of the region's SQL, and the bytes it is about.
/// `line` is the document line (1-based) where the region starts, for the reasons that cite
/// a line.
pub(crate) fn hover(
    snap: &Snapshot,
    features: &Features,
    region: &Region,
    at: usize,
    line: usize,
) -> Option<(String, Range<usize>)> {
    let sql = region.sql.as_str();
    let read = Read::new(sql);
    let i = read.token_at(at)?;
    let tok = &read.tokens[i];
    if tok.kind == Kind::Param {
        return param(snap, features, region, at).map(|t| (t, tok.range.clone()));
    }
    if !matches!(tok.kind, Kind::Word { .. }) {
        return None;
    }
    let name = tok.name(sql);
    if let Some(text) = result_column(snap, features, region, at, &name, line) {
        return Some((text, tok.range.clone()));
    }
    let is_call = read.tokens.get(i + 1).is_some_and(|t| t.kind == Kind::Open);
    let after_cast = i
        .checked_sub(1)
        .is_some_and(|k| read.tokens[k].kind == Kind::Cast);
    let text = if after_cast {
        type_text(snap, &name)?
    } else if let Some(target) = resolve::target(snap, &read, i).filter(|_| !is_call) {
        match target {
            Target::Column(rel, c, r) => column_text(
                snap,
                features,
                rel,
                c,
                r.and_then(|r| r.null_reason.as_deref()),
            ),
            Target::Relation(rel) => relation_text(snap, rel),
        }
    } else if is_call {
        function_text(snap, &name)?
    } else {
        type_text(snap, &name)?
    };
    Some((text, tok.range.clone()))
}

/// A result column whose select-list item holds `at` and names `word`.
fn result_column(
    snap: &Snapshot,
    features: &Features,
    region: &Region,
    at: usize,
    word: &str,
    line: usize,
) -> Option<String> {
    let (rewritten, analysis) = region.analyzed()?;
    let at = rewritten.rewritten_offset(at);
    let (index, col) = analysis.columns.iter().enumerate().find(|(_, c)| {
        c.range.start <= at
            && at <= c.range.end
            && (c.name == word || c.source.as_ref().is_some_and(|s| s.column == word))
    })?;
    let st = crate::report::Statement {
        file: String::new(),
        index: 1,
        name: None,
        line,
        column: 1,
        sql: rewritten.sql.clone(),
        result: Ok(analysis.clone()),
    };
    let e = explain(col, index, &st, snap);
    Some(output_text(snap, features, col, &e.summary, &e.reasons))
}

fn output_text(
    snap: &Snapshot,
    features: &Features,
    col: &OutputColumn,
    summary: &str,
    reasons: &[String],
) -> String {
    let rust = col
        .rust_type
        .clone()
        .unwrap_or_else(|| features.rust_type(&col.ty, col.nullable, snap));
    let mut out = format!(
        "**{}**: `{}`, {} ({summary})\n\nRust: `{rust}`\n",
        col.name,
        format_type(&col.ty, snap),
        if col.nullable { "nullable" } else { "not null" }
    );
    if !reasons.is_empty() {
        out.push('\n');
        for r in reasons {
            let _ = writeln!(out, "- {r}");
        }
    }
    out
}

fn column_text(
    snap: &Snapshot,
    features: &Features,
    rel: &Relation,
    c: &Column,
    join: Option<&str>,
) -> String {
    let nullable = !c.not_null || join.is_some();
    let mut out = format!(
        "**{}.{}**: `{}`, {}\n\nRust: `{}`\n\n- column {}.{}.{} is {}",
        rel.name,
        c.name,
        format_type(&c.ty, snap),
        if nullable { "nullable" } else { "not null" },
        features.rust_type(&c.ty, nullable, snap),
        rel.schema,
        rel.name,
        c.name,
        format_type(&c.ty, snap),
    );
    if rel.primary_key.contains(&c.name) {
        let _ = write!(
            out,
            ", part of the primary key of {}.{}",
            rel.schema, rel.name
        );
    } else if c.not_null {
        out.push_str(" NOT NULL");
    } else if rel.kind != RelationKind::Table {
        out.push_str("; PostgreSQL records no NOT NULL for the columns of a view");
    } else {
        out.push_str(" and nullable");
    }
    out.push('\n');
    if let Some(j) = join {
        let _ = writeln!(out, "- {j}");
    }
    out
}

fn relation_text(snap: &Snapshot, rel: &Relation) -> String {
    let kind = rel.kind.sql_name();
    let mut out = format!("**{kind} {}.{}**\n\n", rel.schema, rel.name);
    for c in rel.columns.iter().take(40) {
        let _ = writeln!(
            out,
            "- `{}` {}{}",
            c.name,
            format_type(&c.ty, snap),
            if c.not_null { " NOT NULL" } else { "" }
        );
    }
    if rel.columns.len() > 40 {
        let _ = writeln!(out, "- … {} more", rel.columns.len() - 40);
    }
    if !rel.primary_key.is_empty() {
        let _ = writeln!(out, "\nprimary key ({})", rel.primary_key.join(", "));
    }
    out
}

fn param(snap: &Snapshot, features: &Features, region: &Region, at: usize) -> Option<String> {
    let rewritten = region.rewritten.as_ref().ok()?;
    let n = rewritten.param_at(&region.sql, at)?;
    let capture = rewritten.captures.iter().find(|c| c.number == n);
    let what = match capture {
        Some(c) => format!("**parameter ${n}** (`{{{}}}`)", c.name),
        None => format!("**parameter ${n}**"),
    };
    let Some((_, analysis)) = region.analyzed() else {
        return Some(format!(
            "{what}\n\nthe statement does not check yet; its type is unknown"
        ));
    };
    let p = analysis.params.get(n - 1)?;
    Some(format!(
        "{what}: `{}`{}\n\nRust: `{}` (or any type that encodes as {})",
        format_type(&p.ty, snap),
        if p.nullable { ", NULL allowed" } else { "" },
        features.rust_type(&p.ty, p.nullable, snap),
        format_type(&p.ty, snap),
    ))
}

/// `name(args) → result` for each built-in overload, one per line.
/// The signatures of the built-in function `name`; one that not every version of `target`
/// has says which versions have it.
pub(crate) fn builtin_signatures(name: &str, target: qail_catalog::Versions) -> String {
    qail_catalog::functions(name)
        .iter()
        .map(|f| {
            let args: Vec<String> = f.args.iter().map(|a| display_type(a)).collect();
            let only = if f.versions.covers(target) {
                String::new()
            } else {
                format!("  -- PostgreSQL {} only", f.versions)
            };
            format!(
                "{name}({}) → {}{}{only}",
                args.join(", "),
                if f.set { "SETOF " } else { "" },
                display_type(f.result)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `_text` → `text[]`.
fn display_type(name: &str) -> String {
    match name.strip_prefix('_') {
        Some(element) => format!("{element}[]"),
        None => name.to_owned(),
    }
}

fn function_text(snap: &Snapshot, name: &str) -> Option<String> {
    let mut lines: Vec<String> = snap
        .functions_named(None, name)
        .into_iter()
        .map(|f| {
            let args: Vec<String> = f.args.iter().map(|a| format_type(a, snap)).collect();
            format!(
                "{}.{}({}) → {}{}",
                f.schema,
                f.name,
                args.join(", "),
                if f.returns_set { "SETOF " } else { "" },
                format_type(&f.returns, snap)
            )
        })
        .collect();
    let builtin = builtin_signatures(name, snap.target().unwrap_or(qail_catalog::Versions::ALL));
    if !builtin.is_empty() {
        lines.push(builtin);
    }
    (!lines.is_empty()).then(|| format!("```sql\n{}\n```", lines.join("\n")))
}

fn type_text(snap: &Snapshot, name: &str) -> Option<String> {
    if let Some(t) = qail_catalog::type_by_name(name).or_else(|| qail_catalog::alias(name)) {
        return Some(format!("**type {}** ({})", t.name, t.display));
    }
    let t = snap.user_type(None, name)?;
    let what = match &t.kind {
        UserTypeKind::Enum { labels } => format!("enum: {}", labels.join(", ")),
        UserTypeKind::Composite { fields } => format!(
            "composite: {}",
            fields
                .iter()
                .map(|f| format!("{} {}", f.name, format_type(&f.ty, snap)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        UserTypeKind::Domain { base, not_null } => format!(
            "domain over {}{}",
            format_type(base, snap),
            if *not_null { " NOT NULL" } else { "" }
        ),
        UserTypeKind::Range { subtype } => format!("range of {}", format_type(subtype, snap)),
    };
    Some(format!("**type {}.{}**: {what}", t.schema, t.name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::document::{Document, FileKind};

    fn hover_at(sql: &str, word: &str) -> String {
        let snap = qail_schema::ddl::from_sql(&[(
            "t.sql".to_owned(),
            "CREATE TABLE harbors (id int PRIMARY KEY, name text NOT NULL);
             CREATE TABLE ships (id int PRIMARY KEY, harbor_id int, name text NOT NULL);"
                .to_owned(),
        )])
        .0;
        let mut doc = Document::new(FileKind::Sql, sql.to_owned());
        doc.analyze(&snap);
        let at = sql.find(word).unwrap();
        hover(&snap, &Features::default(), &doc.regions[0], at, 1)
            .unwrap()
            .0
    }

    #[test]
    fn a_left_joined_column_is_nullable_and_says_why() {
        let sql = "SELECT s.id, h.name FROM ships s LEFT JOIN harbors h ON h.id = s.harbor_id WHERE s.id = $1";
        let text = hover_at(sql, "name");
        assert!(
            text.starts_with("**name**: `text`, nullable (right side of LEFT JOIN harbors AS h)"),
            "{text}"
        );
        assert!(text.contains("Rust: `Option<String>`"), "{text}");
        assert!(
            text.contains("harbors AS h is the right side of a LEFT JOIN (line 1)"),
            "{text}"
        );
        let text = hover_at(sql, "id = s");
        assert!(
            text.starts_with("**harbors.id**: `integer`, nullable"),
            "{text}"
        );
        let text = hover_at(sql, "$1");
        assert!(text.starts_with("**parameter $1**: `integer`"), "{text}");
        assert!(text.contains("Rust: `i32`"), "{text}");
    }
}
