//! What the server's Describe of an analyzed statement should say, in the protocol's terms:
//! each parameter's type OID, each result column's name, type OID and type name as a
//! RowDescription reports them, and the snapshot's NOT NULL of the table column a result
//! column is taken from unchanged. A compiled statement expects these (`cargo qail verify`
//! compares them with a live server).

use qail_schema::Snapshot;
use qail_schema::snapshot::TypeRef;

use crate::{Analysis, OutputColumn, is_json, type_oid};

/// A result column as the server should describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireColumn {
    /// Column name.
    pub name: String,
    /// Type OID; 0 for a user type, and for a record-valued column (a table's row type or
    /// `record`, depending on how it is written).
    pub type_oid: u32,
    /// The type's name as RowDescription's type reports it (`int4`, `_text` for an array).
    pub type_name: String,
    /// For a column taken unchanged from a table column, whether the snapshot says that
    /// column is NOT NULL; `None` for any other column.
    pub not_null: Option<bool>,
}

/// Each parameter's type OID (0 for a user type).
pub fn param_oids(analysis: &Analysis) -> Vec<u32> {
    analysis
        .params
        .iter()
        .map(|p| type_oid(&p.ty).unwrap_or(0))
        .collect()
}

/// Each result column as the server should describe it.
pub fn columns(analysis: &Analysis, snapshot: &Snapshot) -> Vec<WireColumn> {
    analysis
        .columns
        .iter()
        .map(|c| WireColumn {
            name: c.name.clone(),
            type_oid: column_oid(c),
            type_name: wire_name(&c.ty),
            not_null: c.source.as_ref().and_then(|s| {
                let relation = snapshot.relation(Some(&s.schema), &s.table)?;
                Some(relation.column(&s.column)?.not_null)
            }),
        })
        .collect()
}

/// The OID the server reports for `column`: 0 for a record-valued one (a JSON document is
/// its own type, `json` or `jsonb`).
fn column_oid(column: &OutputColumn) -> u32 {
    if column.shape.is_some() && !is_json(&column.ty) {
        return 0;
    }
    type_oid(&column.ty).unwrap_or(0)
}

/// The name RowDescription reports for the type (`int4`, `_int4` for an array).
fn wire_name(ty: &TypeRef) -> String {
    if ty.array_dims > 0 {
        format!("_{}", ty.name)
    } else {
        ty.name.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_say_what_the_server_reports() {
        let (snap, _) = crate::import_ddl(&[(
            "m.sql".to_owned(),
            "CREATE TABLE users (id int8 PRIMARY KEY, nick text, tags text[]);".to_owned(),
        )]);
        let a = crate::analyze(
            "SELECT id, nick, tags, nick || '!' AS shout FROM users WHERE nick IS NOT NULL \
             AND id = $1",
            &snap,
        )
        .unwrap();
        assert_eq!(param_oids(&a), [20]);
        let cols = columns(&a, &snap);
        let seen: Vec<(&str, u32, &str, Option<bool>)> = cols
            .iter()
            .map(|c| {
                (
                    c.name.as_str(),
                    c.type_oid,
                    c.type_name.as_str(),
                    c.not_null,
                )
            })
            .collect();
        // `nick` is not NULL in these rows, but its table column may be: the snapshot's
        // answer is what a server's catalog is compared with.
        assert_eq!(
            seen,
            [
                ("id", 20, "int8", Some(true)),
                ("nick", 25, "text", Some(false)),
                ("tags", 1009, "_text", Some(false)),
                ("shout", 25, "text", None),
            ]
        );
    }
}
