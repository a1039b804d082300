//! Names of primary keys, unique constraints and unique indexes.
//!
//! The snapshot keeps keys as column lists only; the import remembers their names so that
//! `DROP CONSTRAINT`, `DROP INDEX` and `RENAME CONSTRAINT` can find them later.

use sqlparser::ast::ObjectName;

use super::Importer;
use super::names::split_name;
use crate::snapshot::Relation;

/// A named key: a primary key, unique constraint or unique index.
pub(crate) struct NamedKey {
    schema: String,
    name: String,
    table: String,
    columns: Vec<String>,
    primary: bool,
}

impl Importer {
    /// Remembers a key of `rel` called `name` (PostgreSQL's default name when `None`).
    pub(crate) fn remember_key(
        &mut self,
        rel: &Relation,
        name: Option<String>,
        columns: &[String],
        primary: bool,
    ) {
        let name = name.unwrap_or_else(|| {
            let (cols, label) = if primary {
                (String::new(), "pkey")
            } else {
                (columns.join("_"), "key")
            };
            super::names::object_name(&rel.name, &cols, label)
        });
        self.keys
            .retain(|k| !(k.schema == rel.schema && k.name == name));
        self.keys.push(NamedKey {
            schema: rel.schema.clone(),
            name,
            table: rel.name.clone(),
            columns: columns.to_vec(),
            primary,
        });
    }

    /// Drops the key `name` of `rel`; false when no such key is known.
    pub(crate) fn drop_key(&mut self, rel: &mut Relation, name: &str) -> bool {
        let at = self
            .keys
            .iter()
            .position(|k| k.schema == rel.schema && k.table == rel.name && k.name == name);
        let Some(at) = at else { return false };
        let key = self.keys.remove(at);
        if key.primary {
            rel.primary_key.clear();
        } else if let Some(i) = rel.unique.iter().position(|u| *u == key.columns) {
            rel.unique.remove(i);
        }
        true
    }

    /// Renames the key `old` of `rel`; false when no such key is known.
    pub(crate) fn rename_key(&mut self, rel: &Relation, old: &str, new: &str) -> bool {
        let key = self
            .keys
            .iter_mut()
            .find(|k| k.schema == rel.schema && k.table == rel.name && k.name == old);
        key.map(|k| new.clone_into(&mut k.name)).is_some()
    }

    /// Keys follow their table when it is renamed.
    pub(crate) fn rename_key_table(&mut self, schema: &str, old: &str, new: &str) {
        for k in self
            .keys
            .iter_mut()
            .filter(|k| k.schema == schema && k.table == old)
        {
            new.clone_into(&mut k.table);
        }
    }

    /// `DROP INDEX name`: a unique index acting as a unique constraint goes away.
    pub(crate) fn drop_index(&mut self, n: &ObjectName) -> Result<(), String> {
        let (schema, name) = split_name(n)?;
        let key = self.keys.iter().find(|k| {
            k.name == name
                && schema
                    .as_ref()
                    .map_or(self.path.contains(&k.schema), |s| *s == k.schema)
        });
        // Non-unique indexes are not tracked; dropping one changes nothing.
        let Some(key) = key else { return Ok(()) };
        let (schema, table) = (key.schema.clone(), key.table.clone());
        if let Some(i) = self.relation_index(Some(&schema), &table) {
            let mut rel = self.snap.relations[i].clone();
            self.drop_key(&mut rel, &name);
            self.snap.relations[i] = rel;
        }
        Ok(())
    }
}
