//! The system catalogs (`pg_class`, `pg_stat_activity`, …) and `information_schema` views
//! (`columns`, `tables`, …) as relations of the snapshot model, from qail-catalog's generated
//! table: queries over them are checked without pulling them.

use std::sync::LazyLock;

use crate::snapshot::{Column, Relation, RelationKind, TypeRef};

/// The schemas whose relations are built in; a pulled snapshot never holds them.
pub const SYSTEM_SCHEMAS: [&str; 2] = ["pg_catalog", "information_schema"];

static RELATIONS: LazyLock<Vec<Relation>> =
    LazyLock::new(|| qail_catalog::RELATIONS.iter().map(relation).collect());

fn relation(r: &qail_catalog::Relation) -> Relation {
    Relation {
        schema: r.schema.to_owned(),
        name: r.name.to_owned(),
        kind: if r.kind == 'v' {
            RelationKind::View
        } else {
            RelationKind::Table
        },
        columns: r
            .columns
            .iter()
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
    }
}

/// The system catalog or `information_schema` view `schema.name` (`pg_catalog.pg_class`,
/// `information_schema.columns`), for the server version qail-catalog was generated from.
pub fn system_relation(schema: &str, name: &str) -> Option<&'static Relation> {
    let i = RELATIONS
        .binary_search_by(|r| (r.schema.as_str(), r.name.as_str()).cmp(&(schema, name)))
        .ok()?;
    RELATIONS.get(i)
}

/// Every built-in relation, sorted by schema and name.
pub fn system_relations() -> &'static [Relation] {
    &RELATIONS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogs_and_information_schema_views_are_there() {
        let class = system_relation("pg_catalog", "pg_class").expect("pg_class");
        let relname = class.column("relname").expect("relname");
        assert_eq!((relname.ty.name.as_str(), relname.not_null), ("name", true));
        let acl = class.column("relacl").expect("relacl");
        assert_eq!(
            (acl.ty.name.as_str(), acl.ty.array_dims, acl.not_null),
            ("aclitem", 1, false)
        );
        let cols = system_relation("information_schema", "columns").expect("columns");
        assert_eq!(cols.kind, RelationKind::View);
        // A domain (sql_identifier, cardinal_number) is its base type, as Describe reports.
        let name = cols.column("table_name").expect("table_name");
        assert_eq!((name.ty.name.as_str(), name.not_null), ("name", false));
        assert_eq!(
            cols.column("ordinal_position").map(|c| c.ty.name.as_str()),
            Some("int4")
        );
        assert!(system_relation("public", "pg_class").is_none());
    }
}
