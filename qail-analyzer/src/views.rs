//! The columns of views built from DDL: qail-schema's importer sits below the analyzer, so it
//! asks for them through [`qail_schema::ddl::from_sql_with_views`], and this module answers.

use qail_schema::ddl::{DdlWarning, TypedView};
use qail_schema::snapshot::{Field, Snapshot};

/// The columns of a view whose query is `query`, typed against `snapshot` (as it stands when
/// the view is created): names and types in order, and whether reading the view may change
/// session state ([`crate::Analysis::changes_session`] of its query); or the analyzer's first
/// diagnostic.
///
/// # Errors
///
/// The diagnostic's message (with its hint) when the query does not analyze.
pub fn view_columns(snapshot: &Snapshot, query: &str) -> Result<TypedView, String> {
    match crate::analyze(query, snapshot) {
        Ok(a) => Ok(TypedView {
            changes_session: a.changes_session,
            columns: a
                .columns
                .into_iter()
                .map(|c| {
                    // Note: the analyzer types a domain column as its base type; a view column
                    // taken unchanged from a table keeps the table column's type, domain included.
                    let declared = c.source.as_ref().and_then(|s| {
                        let rel = snapshot.relation(Some(&s.schema), &s.table)?;
                        Some(rel.column(&s.column)?.ty.clone())
                    });
                    Field {
                        name: c.name,
                        ty: declared.unwrap_or(c.ty),
                    }
                })
                .collect(),
        }),
        Err(diags) => Err(diags.first().map_or_else(
            || "the query does not analyze".to_owned(),
            ToString::to_string,
        )),
    }
}

/// DDL scripts → a snapshot, with views typed by the analyzer: [`qail_schema::ddl::from_sql`]
/// plus [`view_columns`].
pub fn import_ddl(files: &[(String, String)]) -> (Snapshot, Vec<DdlWarning>) {
    qail_schema::ddl::from_sql_with_views(files, &mut view_columns)
}

#[cfg(test)]
mod tests {
    #[test]
    fn views_get_their_columns_as_of_their_creation() {
        let sql = "CREATE DOMAIN code AS int;\n\
                   CREATE TABLE harbors (id code PRIMARY KEY, name text NOT NULL);\n\
                   CREATE VIEW named (harbor, label) AS SELECT id, upper(name) FROM harbors;\n\
                   ALTER TABLE harbors RENAME COLUMN name TO title;\n";
        let (snap, warnings) = super::import_ddl(&[("01.sql".to_owned(), sql.to_owned())]);
        assert!(warnings.is_empty(), "{warnings:?}");
        let view = snap.relation(Some("public"), "named").expect("the view");
        let cols: Vec<(&str, &str, bool)> = view
            .columns
            .iter()
            .map(|c| (c.name.as_str(), c.ty.name.as_str(), c.not_null))
            .collect();
        assert_eq!(cols, [("harbor", "code", false), ("label", "text", false)]);
    }
}
