//! Differences per kind of object.

use std::fmt::Display;

use super::{Change, DiffOptions, ExprCompare, loose_expr};
use crate::snapshot::{
    Column, Field, ForeignKey, Function, Relation, RelationKind, Snapshot, TypeRef, UserType,
    UserTypeKind,
};

/// `text`, `int4[]`, `public.mood`: a type as the diff prints it.
pub(crate) fn type_name(t: &TypeRef) -> String {
    let mut s = if t.schema == "pg_catalog" {
        t.name.clone()
    } else {
        format!("{}.{}", t.schema, t.name)
    };
    for _ in 0..t.array_dims {
        s.push_str("[]");
    }
    s
}

fn list(v: &[String]) -> String {
    format!("({})", v.join(", "))
}

/// Pairs up items of two sorted lists by key and reports additions and removals; `both` is
/// called for items present in each.
fn pair<'a, T, K: Ord>(
    old: &'a [T],
    new: &'a [T],
    key: impl Fn(&T) -> K,
    label: impl Fn(&T) -> String,
    out: &mut Vec<Change>,
    mut both: impl FnMut(&'a T, &'a T, &mut Vec<Change>),
) {
    for o in old {
        match new.iter().find(|n| key(n) == key(o)) {
            Some(n) => both(o, n, out),
            None => out.push(Change {
                object: label(o),
                detail: "removed".to_owned(),
            }),
        }
    }
    for n in new.iter().filter(|n| !old.iter().any(|o| key(o) == key(n))) {
        out.push(Change {
            object: label(n),
            detail: "added".to_owned(),
        });
    }
}

pub(crate) fn relations(old: &Snapshot, new: &Snapshot, opts: &DiffOptions, out: &mut Vec<Change>) {
    let label = |r: &Relation| format!("{} {}.{}", r.kind.sql_name(), r.schema, r.name);
    pair(
        &old.relations,
        &new.relations,
        |r| (r.schema.clone(), r.name.clone()),
        label,
        out,
        |o, n, out| {
            let object = label(o);
            let mut push = |detail: String| {
                out.push(Change {
                    object: object.clone(),
                    detail,
                })
            };
            if o.kind != n.kind {
                push(format!(
                    "kind {} → {}",
                    o.kind.sql_name(),
                    n.kind.sql_name()
                ));
            }
            let skip_columns = opts.lenient_view_columns
                && o.kind != RelationKind::Table
                && (o.columns.is_empty() || n.columns.is_empty());
            if !skip_columns {
                columns(o, n, opts, &mut push);
            }
            if o.primary_key != n.primary_key {
                push(format!(
                    "primary key {} → {}",
                    list(&o.primary_key),
                    list(&n.primary_key)
                ));
            }
            for u in o.unique.iter().filter(|u| !n.unique.contains(u)) {
                push(format!("unique {} removed", list(u)));
            }
            for u in n.unique.iter().filter(|u| !o.unique.contains(u)) {
                push(format!("unique {} added", list(u)));
            }
            foreign_keys(&o.foreign_keys, &n.foreign_keys, &mut push);
            if o.changes_session != n.changes_session {
                let says = |b: bool| if b { "yes" } else { "no" };
                push(format!(
                    "reading it may change session state (a function its query or policy \
                     calls): {} → {}",
                    says(o.changes_session),
                    says(n.changes_session)
                ));
            }
        },
    );
}

fn columns(o: &Relation, n: &Relation, opts: &DiffOptions, push: &mut impl FnMut(String)) {
    for c in o.columns.iter().filter(|c| n.column(&c.name).is_none()) {
        push(format!("column {} removed", c.name));
    }
    for c in n.columns.iter().filter(|c| o.column(&c.name).is_none()) {
        push(format!("column {} added ({})", c.name, describe(c)));
    }
    for oc in &o.columns {
        if let Some(nc) = n.column(&oc.name) {
            column(oc, nc, opts, push);
        }
    }
    let order = |r: &Relation, other: &Relation| -> Vec<String> {
        r.columns
            .iter()
            .filter(|c| other.column(&c.name).is_some())
            .map(|c| c.name.clone())
            .collect()
    };
    let (oo, no) = (order(o, n), order(n, o));
    if oo != no {
        push(format!(
            "column order {} → {}",
            oo.join(", "),
            no.join(", ")
        ));
    }
}

fn describe(c: &Column) -> String {
    let mut s = type_name(&c.ty);
    if c.not_null {
        s.push_str(" NOT NULL");
    }
    s
}

fn column(o: &Column, n: &Column, opts: &DiffOptions, push: &mut impl FnMut(String)) {
    let name = &o.name;
    if o.ty != n.ty {
        push(format!(
            "column {name}: type {} → {}",
            type_name(&o.ty),
            type_name(&n.ty)
        ));
    }
    if o.not_null != n.not_null {
        let what = if n.not_null {
            "now NOT NULL"
        } else {
            "now nullable"
        };
        push(format!("column {name}: {what}"));
    }
    if !exprs_equal(o.default.as_deref(), n.default.as_deref(), opts.exprs) {
        push(format!(
            "column {name}: default {} → {}",
            show(&o.default),
            show(&n.default)
        ));
    }
    if !exprs_equal(o.generated.as_deref(), n.generated.as_deref(), opts.exprs) {
        push(format!(
            "column {name}: generated {} → {}",
            show(&o.generated),
            show(&n.generated)
        ));
    }
    if o.identity != n.identity {
        push(format!(
            "column {name}: identity {:?} → {:?}",
            o.identity, n.identity
        ));
    }
}

fn show<T: Display>(v: &Option<T>) -> String {
    v.as_ref()
        .map_or_else(|| "none".to_owned(), ToString::to_string)
}

fn exprs_equal(a: Option<&str>, b: Option<&str>, how: ExprCompare) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => match how {
            ExprCompare::Exact => a == b,
            ExprCompare::Loose => loose_expr(a) == loose_expr(b),
            ExprCompare::Presence => true,
        },
        (None, None) => true,
        _ => false,
    }
}

fn fk_text(f: &ForeignKey) -> String {
    format!(
        "{} → {}.{}{}",
        list(&f.columns),
        f.ref_schema,
        f.ref_table,
        list(&f.ref_columns)
    )
}

fn foreign_keys(o: &[ForeignKey], n: &[ForeignKey], push: &mut impl FnMut(String)) {
    for f in o {
        match n.iter().find(|g| g.name == f.name) {
            None => push(format!("foreign key {} removed", f.name)),
            Some(g) if g != f => push(format!(
                "foreign key {}: {} → {}",
                f.name,
                fk_text(f),
                fk_text(g)
            )),
            Some(_) => {}
        }
    }
    for g in n.iter().filter(|g| !o.iter().any(|f| f.name == g.name)) {
        push(format!("foreign key {} added: {}", g.name, fk_text(g)));
    }
}

fn fields_text(fields: &[Field]) -> String {
    let f: Vec<String> = fields
        .iter()
        .map(|f| format!("{} {}", f.name, type_name(&f.ty)))
        .collect();
    list(&f)
}

fn type_kind_text(k: &UserTypeKind) -> String {
    match k {
        UserTypeKind::Enum { labels } => format!("enum {}", list(labels)),
        UserTypeKind::Composite { fields } => format!("composite {}", fields_text(fields)),
        UserTypeKind::Domain { base, not_null } => {
            format!(
                "domain over {}{}",
                type_name(base),
                if *not_null { " NOT NULL" } else { "" }
            )
        }
        UserTypeKind::Range { subtype } => format!("range of {}", type_name(subtype)),
    }
}

pub(crate) fn types(old: &Snapshot, new: &Snapshot, out: &mut Vec<Change>) {
    let label = |t: &UserType| format!("type {}.{}", t.schema, t.name);
    pair(
        &old.types,
        &new.types,
        |t| (t.schema.clone(), t.name.clone()),
        label,
        out,
        |o, n, out| {
            if o.kind != n.kind {
                out.push(Change {
                    object: label(o),
                    detail: format!("{} → {}", type_kind_text(&o.kind), type_kind_text(&n.kind)),
                });
            }
        },
    );
}

pub(crate) fn functions(old: &Snapshot, new: &Snapshot, out: &mut Vec<Change>) {
    let label = |f: &Function| {
        let args: Vec<String> = f.args.iter().map(type_name).collect();
        format!("function {}.{}({})", f.schema, f.name, args.join(", "))
    };
    let key = |f: &Function| (f.schema.clone(), f.name.clone(), f.args.clone());
    pair(
        &old.functions,
        &new.functions,
        key,
        label,
        out,
        |o, n, out| {
            let mut push = |detail: String| {
                out.push(Change {
                    object: label(o),
                    detail,
                })
            };
            if o.returns != n.returns || o.returns_set != n.returns_set {
                let r = |f: &Function| {
                    format!(
                        "{}{}",
                        if f.returns_set { "SETOF " } else { "" },
                        type_name(&f.returns)
                    )
                };
                push(format!("returns {} → {}", r(o), r(n)));
            }
            if o.out_columns != n.out_columns {
                push(format!(
                    "output columns {} → {}",
                    fields_text(&o.out_columns),
                    fields_text(&n.out_columns)
                ));
            }
            if o.defaults != n.defaults {
                push(format!(
                    "arguments with defaults {} → {}",
                    o.defaults, n.defaults
                ));
            }
            if o.variadic != n.variadic {
                push(format!("variadic {} → {}", o.variadic, n.variadic));
            }
            if o.strict != n.strict {
                push(format!("strict {} → {}", o.strict, n.strict));
            }
            if o.volatility != n.volatility {
                push(format!("volatility {:?} → {:?}", o.volatility, n.volatility).to_lowercase());
            }
        },
    );
}

pub(crate) fn extensions(old: &Snapshot, new: &Snapshot, out: &mut Vec<Change>) {
    let label = |e: &crate::snapshot::Extension| format!("extension {}", e.name);
    pair(
        &old.extensions,
        &new.extensions,
        |e| e.name.clone(),
        label,
        out,
        |o, n, out| {
            if o.schema != n.schema {
                out.push(Change {
                    object: label(o),
                    detail: format!("schema {} → {}", o.schema, n.schema),
                });
            }
            // A DDL import does not know versions; compare only when both sides do.
            if !o.version.is_empty() && !n.version.is_empty() && o.version != n.version {
                out.push(Change {
                    object: label(o),
                    detail: format!("version {} → {}", o.version, n.version),
                });
            }
        },
    );
}
