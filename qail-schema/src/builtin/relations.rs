//! The system catalogs (`pg_class`, `pg_stat_activity`, …) and `information_schema` views
//! (`columns`, `tables`, …) as relations of the snapshot model, from qail-catalog's generated
//! table: queries over them are checked without pulling them.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use qail_catalog::Versions;

use crate::snapshot::{Column, Relation, RelationKind, TypeRef};

/// The schemas whose relations are built in; a pulled snapshot never holds them.
pub const SYSTEM_SCHEMAS: [&str; 2] = ["pg_catalog", "information_schema"];

/// The relations every version of `target` has, with the columns they all have; built once
/// per target and kept for the process.
fn relations(target: Versions) -> &'static [Relation] {
    static CACHE: OnceLock<Mutex<HashMap<Versions, &'static [Relation]>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    // Note: entries are inserted whole, so a panic elsewhere leaves the map consistent.
    let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
    cache.entry(target).or_insert_with(|| {
        let built: Vec<Relation> = qail_catalog::RELATIONS
            .iter()
            .filter(|r| r.versions.covers(target))
            .map(|r| relation(r, target))
            .collect();
        Box::leak(built.into_boxed_slice())
    })
}

fn relation(r: &qail_catalog::Relation, target: Versions) -> Relation {
    Relation {
        schema: r.schema.to_owned(),
        name: r.name.to_owned(),
        kind: if r.kind == 'v' {
            RelationKind::View
        } else {
            RelationKind::Table
        },
        columns: r
            .columns_in(target)
            .map(|c| Column {
                name: c.name.to_owned(),
                ty: TypeRef {
                    schema: "pg_catalog".to_owned(),
                    name: c.ty.to_owned(),
                    oid: super::oid(c.ty),
                    array_dims: u32::from(c.array),
                },
                not_null: c.not_null,
                default: None,
                identity: None,
                generated: None,
            })
            .collect(),
        primary_key: Vec::new(),
        unique: Vec::new(),
        foreign_keys: Vec::new(),
        changes_session: false,
    }
}

/// The system catalog or `information_schema` view `schema.name` (`pg_catalog.pg_class`,
/// `information_schema.columns`) as every PostgreSQL major version of `target` has it: only
/// the columns they all have.
pub fn system_relation(schema: &str, name: &str, target: Versions) -> Option<&'static Relation> {
    // Note: only the relation asked for is built (a query names a few; building every one
    // for the target took as long as analyzing a hundred queries), once per target.
    type Built = HashMap<(Versions, &'static str, &'static str), &'static Relation>;
    static CACHE: OnceLock<Mutex<Built>> = OnceLock::new();
    let row = qail_catalog::relation(schema, name).filter(|r| r.versions.covers(target))?;
    let cache = CACHE.get_or_init(Mutex::default);
    // Note: entries are inserted whole, so a panic elsewhere leaves the map consistent.
    let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
    Some(
        cache
            .entry((target, row.schema, row.name))
            .or_insert_with(|| Box::leak(Box::new(relation(row, target)))),
    )
}

/// Every built-in relation every version of `target` has, sorted by schema and name.
pub fn system_relations(target: Versions) -> &'static [Relation] {
    relations(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogs_and_information_schema_views_are_there() {
        let class = system_relation("pg_catalog", "pg_class", Versions::ALL).expect("pg_class");
        let relname = class.column("relname").expect("relname");
        assert_eq!((relname.ty.name.as_str(), relname.not_null), ("name", true));
        let acl = class.column("relacl").expect("relacl");
        assert_eq!(
            (acl.ty.name.as_str(), acl.ty.array_dims, acl.not_null),
            ("aclitem", 1, false)
        );
        let cols =
            system_relation("information_schema", "columns", Versions::ALL).expect("columns");
        assert_eq!(cols.kind, RelationKind::View);
        // A domain (sql_identifier, cardinal_number) is its base type, as Describe reports.
        let name = cols.column("table_name").expect("table_name");
        assert_eq!((name.ty.name.as_str(), name.not_null), ("name", false));
        assert_eq!(
            cols.column("ordinal_position").map(|c| c.ty.name.as_str()),
            Some("int4")
        );
        assert!(system_relation("public", "pg_class", Versions::ALL).is_none());
    }
}
