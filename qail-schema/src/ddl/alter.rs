//! `ALTER TABLE`.

use sqlparser::ast::{AlterColumnOperation, AlterTableOperation, ObjectName, RenameTableNameKind};

use super::Importer;
use super::names::{ident, split_name};
use crate::snapshot::Relation;

impl Importer {
    pub(crate) fn alter_table(
        &mut self,
        name: &ObjectName,
        ops: &[AlterTableOperation],
        if_exists: bool,
    ) -> Result<(), String> {
        let idx = match self.relation_of(name) {
            Ok(i) => i,
            Err(_) if if_exists => return Ok(()),
            Err(e) => return Err(e),
        };
        // Work on a copy so a failing operation leaves the table as it was.
        let mut rel = self.snap.relations[idx].clone();
        for op in ops {
            self.alter_op(&mut rel, op)?;
        }
        let (old_schema, old_name) = {
            let r = &self.snap.relations[idx];
            (r.schema.clone(), r.name.clone())
        };
        if (old_schema.as_str(), old_name.as_str()) != (rel.schema.as_str(), rel.name.as_str()) {
            self.rename_references(&old_schema, &old_name, &rel.name);
            self.rename_key_table(&old_schema, &old_name, &rel.name);
            self.rename_owner(&old_schema, &old_name, &rel.name);
        }
        self.snap.relations[idx] = rel;
        Ok(())
    }

    /// `ALTER COLUMN … SET GENERATED { ALWAYS | BY DEFAULT }` on an identity column.
    pub(crate) fn set_identity(
        &mut self,
        table: &ObjectName,
        column: &sqlparser::ast::Ident,
        always: bool,
    ) -> Result<(), String> {
        let idx = self.relation_of(table)?;
        let name = ident(column);
        let col = self.snap.relations[idx]
            .columns
            .iter_mut()
            .find(|c| c.name == name)
            .ok_or_else(|| format!("column {name} does not exist"))?;
        if col.identity.is_none() {
            return Err(format!("column {name} is not an identity column"));
        }
        col.identity = Some(if always {
            crate::snapshot::Identity::Always
        } else {
            crate::snapshot::Identity::ByDefault
        });
        Ok(())
    }

    fn alter_op(&mut self, rel: &mut Relation, op: &AlterTableOperation) -> Result<(), String> {
        match op {
            AlterTableOperation::AddColumn {
                column_def,
                if_not_exists,
                ..
            } => {
                if *if_not_exists && rel.column(&ident(&column_def.name)).is_some() {
                    return Ok(());
                }
                self.add_column(rel, column_def, false)
            }
            AlterTableOperation::DropColumn {
                column_names,
                if_exists,
                ..
            } => {
                for c in column_names {
                    drop_column(rel, &ident(c), *if_exists)?;
                }
                Ok(())
            }
            AlterTableOperation::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let (old, new) = (ident(old_column_name), ident(new_column_name));
                rename_column(rel, &old, &new)?;
                self.rename_owner_column(&rel.schema, &rel.name, &old, &new);
                Ok(())
            }
            AlterTableOperation::RenameTable { table_name } => {
                let (RenameTableNameKind::To(n) | RenameTableNameKind::As(n)) = table_name;
                rel.name = split_name(n)?.1;
                Ok(())
            }
            AlterTableOperation::AlterColumn { column_name, op } => {
                self.alter_column(rel, &ident(column_name), op)
            }
            AlterTableOperation::AddConstraint { constraint, .. } => {
                self.add_constraint(rel, constraint)
            }
            AlterTableOperation::DropConstraint {
                name, if_exists, ..
            } => self.drop_constraint(rel, &ident(name), *if_exists),
            AlterTableOperation::RenameConstraint { old_name, new_name } => {
                let (old, new) = (ident(old_name), ident(new_name));
                if let Some(fk) = rel.foreign_keys.iter_mut().find(|f| f.name == old) {
                    fk.name = new;
                } else {
                    self.rename_key(rel, &old, &new);
                }
                Ok(())
            }
            AlterTableOperation::DropPrimaryKey { .. } => {
                rel.primary_key.clear();
                Ok(())
            }
            // Ownership, RLS, triggers, storage options … do not change the snapshot.
            _ => Ok(()),
        }
    }

    fn alter_column(
        &mut self,
        rel: &mut Relation,
        name: &str,
        op: &AlterColumnOperation,
    ) -> Result<(), String> {
        let ty = match op {
            AlterColumnOperation::SetDataType { data_type, .. } => {
                Some(self.type_ref(data_type)?.0)
            }
            _ => None,
        };
        let (schema, table) = (rel.schema.clone(), rel.name.clone());
        let col = rel
            .columns
            .iter_mut()
            .find(|c| c.name == name)
            .ok_or_else(|| format!("column {name} of {schema}.{table} does not exist"))?;
        match op {
            AlterColumnOperation::SetNotNull => col.not_null = true,
            AlterColumnOperation::DropNotNull => col.not_null = false,
            AlterColumnOperation::SetDefault { value } => col.default = Some(value.to_string()),
            AlterColumnOperation::DropDefault => col.default = None,
            AlterColumnOperation::SetDataType { .. } => {
                if let Some(t) = ty {
                    col.ty = t;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Drops a named constraint: a foreign key, or a key whose name the import saw. A CHECK's
    /// effect on NOT NULL cannot be undone and is kept.
    fn drop_constraint(
        &mut self,
        rel: &mut Relation,
        name: &str,
        if_exists: bool,
    ) -> Result<(), String> {
        if let Some(i) = rel.foreign_keys.iter().position(|f| f.name == name) {
            rel.foreign_keys.remove(i);
            return Ok(());
        }
        if self.drop_key(rel, name)
            || if_exists
            || name.ends_with("_check")
            || name.ends_with("_not_null")
        {
            return Ok(());
        }
        Err(format!(
            "constraint {name} of {}.{} is not known to the import (it was not created by these \
             scripts, or is a CHECK); its removal is ignored",
            rel.schema, rel.name
        ))
    }

    /// Foreign keys that point at a renamed table follow it.
    fn rename_references(&mut self, schema: &str, old: &str, new: &str) {
        for r in &mut self.snap.relations {
            for fk in &mut r.foreign_keys {
                if fk.ref_schema == schema && fk.ref_table == old {
                    fk.ref_table = new.to_owned();
                }
            }
        }
    }
}

fn drop_column(rel: &mut Relation, name: &str, if_exists: bool) -> Result<(), String> {
    let Some(pos) = rel.columns.iter().position(|c| c.name == name) else {
        return if if_exists {
            Ok(())
        } else {
            Err(format!(
                "column {name} of {}.{} does not exist",
                rel.schema, rel.name
            ))
        };
    };
    rel.columns.remove(pos);
    // Constraints over a dropped column go with it.
    let has = |cols: &[String]| cols.iter().any(|c| c == name);
    if has(&rel.primary_key) {
        rel.primary_key.clear();
    }
    rel.unique.retain(|u| !has(u));
    rel.foreign_keys.retain(|fk| !has(&fk.columns));
    Ok(())
}

fn rename_column(rel: &mut Relation, old: &str, new: &str) -> Result<(), String> {
    let col = rel
        .columns
        .iter_mut()
        .find(|c| c.name == old)
        .ok_or_else(|| format!("column {old} does not exist"))?;
    new.clone_into(&mut col.name);
    let rename = |cols: &mut Vec<String>| {
        for c in cols.iter_mut().filter(|c| *c == old) {
            new.clone_into(c);
        }
    };
    rename(&mut rel.primary_key);
    rel.unique.iter_mut().for_each(rename);
    for fk in &mut rel.foreign_keys {
        rename(&mut fk.columns);
    }
    Ok(())
}
