//! Sequences: `CREATE SEQUENCE`, and those PostgreSQL creates for `serial` and identity
//! columns, which live and die with their column.

use sqlparser::ast::ObjectName;

use super::Importer;
use super::names::{object_name, split_name};
use crate::snapshot::{Column, Relation, RelationKind, TypeRef};

/// A sequence created for a column: it is dropped with the column (or its table) and keeps its
/// name when either is renamed.
pub(crate) struct Owned {
    schema: String,
    name: String,
    table: String,
    column: String,
    /// Created for an identity column: `DROP IDENTITY` drops it.
    identity: bool,
}

impl Importer {
    pub(crate) fn create_sequence(
        &mut self,
        name: &ObjectName,
        if_not_exists: bool,
    ) -> Result<(), String> {
        let (schema, name) = split_name(name)?;
        let schema = self.creation_schema(schema);
        if self.relation_index(Some(&schema), &name).is_some() {
            return if if_not_exists {
                Ok(())
            } else {
                Err(format!(
                    "relation {schema}.{name} already exists; statement skipped"
                ))
            };
        }
        self.snap.relations.push(sequence(schema, name));
        Ok(())
    }

    /// A table and its columns renamed: the sequences they own follow (by owner, not name).
    pub(crate) fn rename_owner(&mut self, schema: &str, table: &str, new_table: &str) {
        for o in self
            .owned
            .iter_mut()
            .filter(|o| o.schema == schema && o.table == table)
        {
            new_table.clone_into(&mut o.table);
        }
    }

    /// A column renamed: the sequence it owns follows.
    pub(crate) fn rename_owner_column(&mut self, schema: &str, table: &str, old: &str, new: &str) {
        let owns = |o: &&mut Owned| o.schema == schema && o.table == table && o.column == old;
        for o in self.owned.iter_mut().filter(owns) {
            new.clone_into(&mut o.column);
        }
    }

    /// After each statement: a sequence for each new serial or identity column, and none for
    /// a column (or table) that is gone or lost its identity.
    pub(crate) fn sync_sequences(&mut self) {
        let mut wanted = Vec::new();
        for rel in self
            .snap
            .relations
            .iter()
            .filter(|r| r.kind == RelationKind::Table)
        {
            for col in &rel.columns {
                let owned = self
                    .owned
                    .iter()
                    .any(|o| o.schema == rel.schema && o.table == rel.name && o.column == col.name);
                if owned {
                    continue;
                }
                if col.identity.is_some() {
                    wanted.push((
                        rel.schema.clone(),
                        object_name(&rel.name, &col.name, "seq"),
                        rel,
                        col,
                        true,
                    ));
                } else if let Some(seq) = col.default.as_deref().and_then(nextval) {
                    let (schema, name) = match seq.split_once('.') {
                        Some((s, n)) => (unquote(s), unquote(n)),
                        None => (rel.schema.clone(), unquote(seq)),
                    };
                    if self.snap.relation(Some(&schema), &name).is_none() {
                        wanted.push((schema, name, rel, col, false));
                    }
                }
            }
        }
        let wanted: Vec<(Owned, Relation)> = wanted
            .into_iter()
            .map(|(schema, name, rel, col, identity)| {
                let owned = Owned {
                    schema: rel.schema.clone(),
                    name: name.clone(),
                    table: rel.name.clone(),
                    column: col.name.clone(),
                    identity,
                };
                (owned, sequence(schema, name))
            })
            .collect();
        for (owned, seq) in wanted {
            if self.snap.relation(Some(&seq.schema), &seq.name).is_none() {
                self.snap.relations.push(seq);
            }
            self.owned.push(owned);
        }
        let snap = &self.snap;
        let (kept, gone): (Vec<Owned>, Vec<Owned>) =
            std::mem::take(&mut self.owned).into_iter().partition(|o| {
                let column = snap
                    .relations
                    .iter()
                    .find(|r| {
                        r.kind == RelationKind::Table && r.schema == o.schema && r.name == o.table
                    })
                    .and_then(|r| r.column(&o.column));
                column.is_some_and(|c| !o.identity || c.identity.is_some())
            });
        self.owned = kept;
        for o in gone {
            self.snap.relations.retain(|r| {
                !(r.kind == RelationKind::Sequence && r.schema == o.schema && r.name == o.name)
            });
        }
    }
}

/// The sequence a `nextval('…'::regclass)` default names, as written (maybe qualified).
fn nextval(default: &str) -> Option<&str> {
    let rest = default.strip_prefix("nextval('")?;
    let end = rest.find('\'')?;
    Some(&rest[..end])
}

fn unquote(name: &str) -> String {
    match name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
        Some(n) => n.replace("\"\"", "\""),
        None => name.to_lowercase(),
    }
}

/// A sequence's relation: the three columns every sequence has.
fn sequence(schema: String, name: String) -> Relation {
    let column = |name: &str, ty: &str| Column {
        name: name.to_owned(),
        ty: TypeRef::builtin(ty),
        not_null: true,
        default: None,
        identity: None,
        generated: None,
    };
    Relation {
        schema,
        name,
        kind: RelationKind::Sequence,
        columns: vec![
            column("last_value", "int8"),
            column("log_cnt", "int8"),
            column("is_called", "bool"),
        ],
        primary_key: Vec::new(),
        unique: Vec::new(),
        foreign_keys: Vec::new(),
        changes_session: false,
    }
}
