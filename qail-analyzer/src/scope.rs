//! Relations in scope and column resolution (qualified, unqualified, USING-merged, outer).

use sqlparser::ast::{Ident, ObjectName, ObjectNamePart};

use crate::diag::closest;
use crate::{ColumnSource, Shape};
use qail_schema::snapshot::TypeRef;

/// A column as a relation in scope exposes it.
#[derive(Debug, Clone)]
pub(crate) struct Col {
    pub(crate) name: String,
    pub(crate) ty: TypeRef,
    pub(crate) not_null: bool,
    pub(crate) source: Option<ColumnSource>,
    /// Why it is nullable, when not from a table column (e.g. a derived table's aggregate).
    pub(crate) why: Vec<String>,
    /// The fields inside it, when it is a record or an array of records.
    pub(crate) shape: Option<Shape>,
}

/// A relation in a FROM clause (table, view, CTE, subquery, EXCLUDED…).
#[derive(Debug, Clone)]
pub(crate) struct Rel {
    /// The name it is referred to by: the alias, else the table name.
    pub(crate) name: String,
    /// Schema, when referred to by its table name (no alias): `schema.table.col` matches it.
    pub(crate) schema: Option<String>,
    /// For messages: `harbors AS origin`.
    pub(crate) label: String,
    pub(crate) cols: Vec<Col>,
    /// Set when the relation is on the nullable side of an outer join.
    pub(crate) null_reason: Option<String>,
    /// Columns a WHERE/ON predicate proved non-null.
    pub(crate) proven: Vec<bool>,
    /// Primary-key column indexes (tables only): grouping by them groups the whole row.
    pub(crate) primary_key: Vec<usize>,
    /// A table: it has the system columns (`ctid`, `xmin`, `xmax`, `tableoid`, …).
    pub(crate) system: bool,
    /// A function returning a scalar (without ORDINALITY): its whole-row reference is the
    /// scalar value, not a record.
    pub(crate) scalar: bool,
    /// A snapshot table or view: the composite type its whole-row reference has (else the
    /// whole row is a `record`).
    pub(crate) row_type: Option<TypeRef>,
    /// Reachable only through its name (`old.balance` in RETURNING), never by a bare column
    /// name.
    pub(crate) qualified_only: bool,
}

/// System columns of every table and their types.
const SYSTEM_COLUMNS: &[(&str, &str)] = &[
    ("tableoid", "oid"),
    ("ctid", "tid"),
    ("xmin", "xid"),
    ("xmax", "xid"),
    ("cmin", "cid"),
    ("cmax", "cid"),
];

impl Rel {
    pub(crate) fn new(name: String, schema: Option<String>, label: String, cols: Vec<Col>) -> Self {
        let proven = vec![false; cols.len()];
        Self {
            name,
            schema,
            label,
            cols,
            null_reason: None,
            proven,
            primary_key: Vec::new(),
            system: false,
            scalar: false,
            row_type: None,
            qualified_only: false,
        }
    }
}

/// A `USING`/`NATURAL` join column, visible once without qualification.
#[derive(Debug, Clone)]
pub(crate) struct Merged {
    pub(crate) name: String,
    pub(crate) ty: TypeRef,
    pub(crate) left: (usize, usize),
    pub(crate) right: (usize, usize),
    /// `true` for FULL joins: the value is COALESCE(left, right).
    pub(crate) full: bool,
    /// `true` for RIGHT joins: the value is the right column's.
    pub(crate) from_right: bool,
}

/// One entry of `SELECT *`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Star {
    Col(usize, usize),
    Merged(usize),
}

/// A resolved column reference.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub(crate) name: String,
    pub(crate) ty: TypeRef,
    pub(crate) nullable: bool,
    pub(crate) why: Vec<String>,
    pub(crate) source: Option<ColumnSource>,
    /// (relation, column) in the scope where it was found (`None` for merged columns).
    pub(crate) at: Option<(usize, usize)>,
    /// 0 for the current scope, 1 for the enclosing query, …
    pub(crate) depth: usize,
    /// The fields inside it, when it is a record or an array of records.
    pub(crate) shape: Option<Shape>,
}

/// Why a reference did not resolve.
#[derive(Debug)]
pub(crate) enum LookupError {
    /// No such column; the closest name, if any.
    NoColumn {
        within: Option<String>,
        suggestion: Option<String>,
    },
    /// No relation of that name in FROM.
    NoRelation { suggestion: Option<String> },
    /// Several relations have the column.
    Ambiguous(Vec<String>),
}

/// The relations visible to an expression.
#[derive(Debug, Default)]
pub(crate) struct Scope<'p> {
    pub(crate) rels: Vec<Rel>,
    pub(crate) merged: Vec<Merged>,
    pub(crate) star: Vec<Star>,
    /// Common table expressions visible here: name and columns.
    pub(crate) ctes: Vec<(String, Vec<Col>)>,
    pub(crate) parent: Option<&'p Scope<'p>>,
    /// A query with GROUP BY (without grouping sets): every group has at least one row.
    pub(crate) grouped: bool,
}

/// The identifier as PostgreSQL sees it: unquoted names fold to lower case.
pub(crate) fn norm(id: &Ident) -> String {
    if id.quote_style.is_some() {
        id.value.clone()
    } else {
        id.value.to_lowercase()
    }
}

/// The identifiers of a dotted name (function-call parts are ignored).
pub(crate) fn parts(name: &ObjectName) -> Vec<&Ident> {
    name.0
        .iter()
        .filter_map(|p| match p {
            ObjectNamePart::Identifier(i) => Some(i),
            ObjectNamePart::Function(_) => None,
        })
        .collect()
}

impl<'p> Scope<'p> {
    pub(crate) fn child(parent: &'p Scope<'p>) -> Self {
        Scope {
            parent: Some(parent),
            ..Scope::default()
        }
    }

    /// A CTE by name, here or in an enclosing query.
    pub(crate) fn cte(&self, name: &str) -> Option<&[Col]> {
        self.ctes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c.as_slice())
            .or_else(|| self.parent.and_then(|p| p.cte(name)))
    }

    /// The value of column `c` of relation `r`, with its nullability and the reasons.
    pub(crate) fn value(&self, r: usize, c: usize) -> Found {
        let rel = &self.rels[r];
        let col = &rel.cols[c];
        let proven = rel.proven[c];
        let mut why = Vec::new();
        if !proven {
            if let Some(reason) = &rel.null_reason {
                why.push(reason.clone());
            }
            if !col.not_null {
                why.extend(col.why.iter().cloned());
                if col.why.is_empty() {
                    why.push(format!("column {}.{} is nullable", rel.name, col.name));
                }
            }
        }
        Found {
            name: col.name.clone(),
            ty: col.ty.clone(),
            nullable: !why.is_empty(),
            why,
            source: col.source.clone(),
            at: Some((r, c)),
            depth: 0,
            shape: col.shape.clone(),
        }
    }

    fn merged_value(&self, m: &Merged) -> Found {
        let (l, r) = (
            self.value(m.left.0, m.left.1),
            self.value(m.right.0, m.right.1),
        );
        let mut f = if m.from_right { r.clone() } else { l.clone() };
        if m.full {
            // Note: COALESCE(left, right) over a FULL join: one side is always present, so
            // the value is NULL only if a present side's column can itself be NULL.
            let own =
                |(r, c): (usize, usize)| !self.rels[r].cols[c].not_null && !self.rels[r].proven[c];
            f.nullable = own(m.left) || own(m.right);
            f.why = if f.nullable {
                [l.why, r.why].concat()
            } else {
                Vec::new()
            };
            f.source = None;
        }
        f.ty = m.ty.clone();
        f.at = None;
        f
    }

    /// A system column of table `r`, if `name` is one and `r` is a table.
    fn system_column(&self, r: usize, name: &str) -> Option<Found> {
        let rel = &self.rels[r];
        let (_, ty) = SYSTEM_COLUMNS.iter().find(|(n, _)| *n == name)?;
        if !rel.system {
            return None;
        }
        let why: Vec<String> = rel.null_reason.iter().cloned().collect();
        Some(Found {
            name: name.to_string(),
            ty: crate::types::builtin(ty),
            nullable: !why.is_empty(),
            why,
            source: None,
            at: None,
            depth: 0,
            shape: None,
        })
    }

    /// Resolves `[qualifier.]name`, looking outward through enclosing queries.
    pub(crate) fn lookup(&self, qual: &[String], name: &str) -> Result<Found, LookupError> {
        let here = self.lookup_here(qual, name);
        let Some(parent) = self.parent else {
            return here;
        };
        match here {
            Err(LookupError::NoColumn {
                suggestion: mine,
                within,
            }) => match parent.lookup(qual, name) {
                Ok(f) => Ok(Found {
                    depth: f.depth + 1,
                    ..f
                }),
                // Note: the enclosing query's suggestion helps when this one has none.
                Err(LookupError::NoColumn {
                    suggestion: Some(s),
                    within: w,
                }) if mine.is_none() => Err(LookupError::NoColumn {
                    suggestion: Some(s),
                    within: w,
                }),
                Err(_) => Err(LookupError::NoColumn {
                    suggestion: mine,
                    within,
                }),
            },
            Err(LookupError::NoRelation { suggestion }) => match parent.lookup(qual, name) {
                Ok(f) => Ok(Found {
                    depth: f.depth + 1,
                    ..f
                }),
                Err(_) => Err(LookupError::NoRelation { suggestion }),
            },
            other => other,
        }
    }

    fn lookup_here(&self, qual: &[String], name: &str) -> Result<Found, LookupError> {
        if qual.is_empty() {
            if let Some(m) = self.merged.iter().rev().find(|m| m.name == name) {
                return Ok(self.merged_value(m));
            }
            let hits: Vec<(usize, usize)> = self
                .rels
                .iter()
                .enumerate()
                .filter(|(_, rel)| !rel.qualified_only)
                .filter_map(|(r, rel)| rel.cols.iter().position(|c| c.name == name).map(|c| (r, c)))
                .collect();
            let system: Vec<usize> = (0..self.rels.len())
                .filter(|&r| self.system_column(r, name).is_some())
                .collect();
            return match hits.as_slice() {
                [(r, c)] => Ok(self.value(*r, *c)),
                [] if system.len() == 1 => {
                    self.system_column(system[0], name)
                        .ok_or(LookupError::NoColumn {
                            within: None,
                            suggestion: None,
                        })
                }
                [] if system.len() > 1 => Err(LookupError::Ambiguous(
                    system.iter().map(|r| self.rels[*r].name.clone()).collect(),
                )),
                [] => Err(LookupError::NoColumn {
                    within: (self.rels.len() == 1).then(|| self.rels[0].label.clone()),
                    suggestion: self.suggest_column(name, None),
                }),
                many => Err(LookupError::Ambiguous(
                    many.iter()
                        .map(|(r, _)| self.rels[*r].name.clone())
                        .collect(),
                )),
            };
        }
        let Some(r) = self.find_rel(qual) else {
            let names: Vec<&str> = self.rels.iter().map(|r| r.name.as_str()).collect();
            let last = qual.last().map_or("", String::as_str);
            return Err(LookupError::NoRelation {
                suggestion: closest(last, names).map(str::to_string),
            });
        };
        match self.rels[r].cols.iter().position(|c| c.name == name) {
            Some(c) => Ok(self.value(r, c)),
            None if self.system_column(r, name).is_some() => self
                .system_column(r, name)
                .ok_or(LookupError::NoRelation { suggestion: None }),
            None => Err(LookupError::NoColumn {
                within: Some(self.rels[r].label.clone()),
                suggestion: self.suggest_column(name, Some(r)),
            }),
        }
    }

    /// Whether a relation of this name is in scope here or in an enclosing query.
    pub(crate) fn has_rel(&self, name: &str) -> bool {
        self.rels.iter().any(|r| r.name == name) || self.parent.is_some_and(|p| p.has_rel(name))
    }

    /// Whether the whole row of relation `name` (the nearest one) has fields: it is not a
    /// function's scalar.
    pub(crate) fn has_fields(&self, name: &str) -> bool {
        match self.rels.iter().find(|r| r.name == name) {
            Some(rel) => !(rel.scalar && rel.cols.len() == 1),
            None => self.parent.is_some_and(|p| p.has_fields(name)),
        }
    }

    /// The whole row of relation `name` (the nearest one of that name) as a value: a
    /// `record`, NULL on the nullable side of an outer join (a null-extended row is NULL as a
    /// whole, not a row of NULLs); for a function returning a scalar, that scalar.
    pub(crate) fn whole_row(&self, name: &str) -> Option<Found> {
        let Some(r) = self.rels.iter().position(|r| r.name == name) else {
            let f = self.parent?.whole_row(name)?;
            return Some(Found {
                depth: f.depth + 1,
                ..f
            });
        };
        let rel = &self.rels[r];
        if rel.scalar && rel.cols.len() == 1 {
            return Some(Found {
                name: name.to_string(),
                at: None,
                ..self.value(r, 0)
            });
        }
        let why: Vec<String> = rel.null_reason.iter().cloned().collect();
        Some(Found {
            name: name.to_string(),
            ty: rel
                .row_type
                .clone()
                .unwrap_or_else(|| crate::types::builtin("record")),
            nullable: !why.is_empty(),
            why,
            source: None,
            at: None,
            depth: 0,
            shape: None,
        })
    }

    /// The index of the relation a qualifier names (`alias`, `table`, `schema.table`).
    pub(crate) fn find_rel(&self, qual: &[String]) -> Option<usize> {
        match qual {
            [t] => self.rels.iter().position(|r| &r.name == t),
            [s, t] => self
                .rels
                .iter()
                .position(|r| &r.name == t && r.schema.as_ref() == Some(s)),
            _ => None,
        }
    }

    fn suggest_column(&self, name: &str, only: Option<usize>) -> Option<String> {
        let mut names: Vec<String> = Vec::new();
        for (_, rel) in self
            .rels
            .iter()
            .enumerate()
            .filter(|(i, _)| only.is_none_or(|o| o == *i))
        {
            for col in &rel.cols {
                let ambiguous = self
                    .rels
                    .iter()
                    .filter(|r| r.cols.iter().any(|c| c.name == col.name))
                    .count()
                    > 1;
                names.push(if ambiguous && only.is_none() {
                    format!("{}.{}", rel.name, col.name)
                } else {
                    col.name.clone()
                });
            }
        }
        let plain: Vec<&str> = names
            .iter()
            .map(|n| n.rsplit('.').next().unwrap_or(n))
            .collect();
        let best = closest(name, plain.iter().copied())?;
        names
            .iter()
            .find(|n| n.rsplit('.').next() == Some(best))
            .cloned()
    }

    /// Expands `*` (`None`) or `rel.*`.
    pub(crate) fn expand(&self, qual: Option<&[String]>) -> Option<Vec<Found>> {
        match qual {
            None => Some(
                self.star
                    .iter()
                    .map(|s| match *s {
                        Star::Col(r, c) => self.value(r, c),
                        Star::Merged(m) => self.merged_value(&self.merged[m]),
                    })
                    .collect(),
            ),
            Some(q) => {
                let r = self.find_rel(q)?;
                Some(
                    (0..self.rels[r].cols.len())
                        .map(|c| self.value(r, c))
                        .collect(),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::builtin;

    fn col(name: &str, not_null: bool) -> Col {
        Col {
            name: name.into(),
            ty: builtin("text"),
            not_null,
            source: None,
            why: Vec::new(),
            shape: None,
        }
    }

    fn scope() -> Scope<'static> {
        let mut sc = Scope::default();
        let harbors = Rel::new(
            "h".into(),
            None,
            "harbors AS h".into(),
            vec![col("id", true), col("name", true)],
        );
        let mut ops = Rel::new(
            "operators".into(),
            Some("public".into()),
            "operators".into(),
            vec![col("id", true), col("website", false)],
        );
        ops.null_reason = Some("right side of LEFT JOIN operators".into());
        sc.rels = vec![harbors, ops];
        sc
    }

    #[test]
    fn qualified_unqualified_and_ambiguous() {
        let sc = scope();
        assert!(!sc.lookup(&[], "name").expect("unique").nullable);
        assert!(
            matches!(sc.lookup(&[], "id"), Err(LookupError::Ambiguous(r)) if r == ["h", "operators"])
        );
        assert!(
            sc.lookup(&["public".into(), "operators".into()], "id")
                .is_ok()
        );
        assert!(matches!(
            sc.lookup(&["harbors".into()], "id"),
            Err(LookupError::NoRelation { .. })
        ));
    }

    #[test]
    fn outer_join_side_and_proof() {
        let mut sc = scope();
        let f = sc.lookup(&["operators".into()], "id").expect("found");
        assert!(f.nullable);
        assert_eq!(f.why, ["right side of LEFT JOIN operators"]);
        sc.rels[1].null_reason = None;
        sc.rels[1].proven[1] = true;
        assert!(!sc.lookup(&[], "website").expect("found").nullable);
    }

    #[test]
    fn suggestions_and_correlation() {
        let outer = scope();
        let inner = Scope::child(&outer);
        let f = inner.lookup(&["h".into()], "name").expect("correlated");
        assert_eq!(f.depth, 1);
        match inner.lookup(&[], "nme") {
            Err(LookupError::NoColumn { suggestion, .. }) => {
                assert_eq!(suggestion.as_deref(), Some("name"))
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
