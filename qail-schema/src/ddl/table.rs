//! `CREATE TABLE` (including `INHERITS` and `PARTITION OF`), column definitions and table
//! constraints.

use sqlparser::ast::{
    ColumnDef, ColumnOption, ColumnOptionDef, CreateTable, CreateTableLikeDefaults,
    CreateTableLikeKind, Expr, GeneratedAs, Ident, IndexColumn, ObjectName, TableConstraint,
};

use super::Importer;
use super::names::{ident, object_name, split_name};
use crate::snapshot::{Column, ForeignKey, Identity, Relation, RelationKind};

impl Importer {
    pub(crate) fn create_table(&mut self, ct: &CreateTable) -> Result<(), String> {
        if ct.temporary {
            // Temporary tables live in a session's own schema; queries cannot rely on them.
            return Ok(());
        }
        let (schema, name) = split_name(&ct.name)?;
        let schema = self.creation_schema(schema);
        if self.relation_index(Some(&schema), &name).is_some() {
            return if ct.if_not_exists {
                Ok(())
            } else {
                Err(format!(
                    "table {schema}.{name} already exists; statement skipped"
                ))
            };
        }
        let mut rel = empty_relation(schema, name, RelationKind::Table);
        if ct.query.is_some() {
            self.snap.relations.push(rel);
            return Err(format!(
                "CREATE TABLE {} AS: its columns need the analyzer (not yet available); it is \
                 recorded without columns: pull the schema from a database instead",
                ct.name
            ));
        }
        if let Some(CreateTableLikeKind::Parenthesized(like) | CreateTableLikeKind::Plain(like)) =
            &ct.like
        {
            let defaults = like.defaults == Some(CreateTableLikeDefaults::Including);
            self.copy_like(&mut rel, &like.name, defaults)?;
        }
        for parent in ct.inherits.iter().flatten() {
            let p = self.relation_of(parent)?;
            for col in &self.snap.relations[p].columns {
                merge_column(
                    &mut rel.columns,
                    Column {
                        identity: None,
                        ..col.clone()
                    },
                );
            }
        }
        for cd in &ct.columns {
            match like_clause(cd) {
                Some(source) => self.copy_like(&mut rel, source, false)?,
                None => self.add_column(&mut rel, cd, true)?,
            }
        }
        for c in &ct.constraints {
            self.add_constraint(&mut rel, c)?;
        }
        let pk = rel.primary_key.clone();
        rel.unique.retain(|u| *u != pk);
        self.snap.relations.push(rel);
        Ok(())
    }

    /// `(LIKE other [INCLUDING DEFAULTS])`: the columns with their types and NOT NULL, and
    /// their defaults when asked for.
    fn copy_like(
        &mut self,
        rel: &mut Relation,
        source: &ObjectName,
        defaults: bool,
    ) -> Result<(), String> {
        let src = self.relation_of(source)?;
        for c in &self.snap.relations[src].columns {
            rel.columns.push(Column {
                default: if defaults { c.default.clone() } else { None },
                identity: None,
                generated: None,
                ..c.clone()
            });
        }
        Ok(())
    }

    /// `CREATE TABLE name PARTITION OF parent`: the parent's columns, keys and foreign keys.
    pub(crate) fn partition_of(
        &mut self,
        name: &ObjectName,
        parent: &ObjectName,
        if_not_exists: bool,
    ) -> Result<(), String> {
        let (schema, name) = split_name(name)?;
        let schema = self.creation_schema(schema);
        if self.relation_index(Some(&schema), &name).is_some() {
            return if if_not_exists {
                Ok(())
            } else {
                Err(format!("table {schema}.{name} already exists"))
            };
        }
        let p = &self.snap.relations[self.relation_of(parent)?];
        let rel = Relation {
            schema,
            name,
            kind: RelationKind::Table,
            // Note: PostgreSQL 15 does not carry identity over to partitions (only NOT NULL).
            columns: p
                .columns
                .iter()
                .map(|c| Column {
                    identity: None,
                    ..c.clone()
                })
                .collect(),
            primary_key: p.primary_key.clone(),
            unique: p.unique.clone(),
            foreign_keys: p.foreign_keys.clone(),
            changes_session: false,
        };
        self.snap.relations.push(rel);
        Ok(())
    }

    /// Adds a column definition to `rel`; `merge` lets it merge with an inherited column.
    pub(crate) fn add_column(
        &mut self,
        rel: &mut Relation,
        cd: &ColumnDef,
        merge: bool,
    ) -> Result<(), String> {
        let (ty, serial) = self.type_ref(&cd.data_type)?;
        let name = ident(&cd.name);
        if !merge && rel.column(&name).is_some() {
            return Err(format!(
                "column {name} of {}.{} already exists",
                rel.schema, rel.name
            ));
        }
        let mut col = Column {
            name: name.clone(),
            ty,
            not_null: false,
            default: None,
            identity: None,
            generated: None,
        };
        if serial.is_some() {
            col.not_null = true;
            col.default = Some(self.serial_default(rel, &name));
        }
        let mut not_null_checks = Vec::new();
        for opt in &cd.options {
            self.column_option(rel, &mut col, cd, opt, &mut not_null_checks)?;
        }
        merge_column(&mut rel.columns, col);
        force_not_null(rel, &not_null_checks);
        Ok(())
    }

    /// Applies one column option to the column being defined (and to `rel` for keys).
    fn column_option(
        &mut self,
        rel: &mut Relation,
        col: &mut Column,
        cd: &ColumnDef,
        opt: &ColumnOptionDef,
        not_null_checks: &mut Vec<String>,
    ) -> Result<(), String> {
        let name = col.name.clone();
        match &opt.option {
            ColumnOption::Null => col.not_null = false,
            ColumnOption::NotNull => col.not_null = true,
            ColumnOption::Default(e) => col.default = Some(e.to_string()),
            ColumnOption::Unique {
                is_primary: true, ..
            } => {
                col.not_null = true;
                rel.primary_key = vec![name.clone()];
                self.remember_key(
                    rel,
                    opt.name.as_ref().map(ident),
                    &rel.primary_key.clone(),
                    true,
                );
            }
            ColumnOption::Unique {
                is_primary: false, ..
            } => {
                self.remember_key(
                    rel,
                    opt.name.as_ref().map(ident),
                    std::slice::from_ref(&name),
                    false,
                );
                rel.unique.push(vec![name.clone()]);
            }
            ColumnOption::ForeignKey {
                foreign_table,
                referred_columns,
                ..
            } => {
                let fk_name = opt.name.as_ref().map(ident);
                let fk = self.foreign_key(
                    rel,
                    fk_name,
                    std::slice::from_ref(&cd.name),
                    foreign_table,
                    referred_columns,
                )?;
                rel.foreign_keys.push(fk);
            }
            ColumnOption::Check(e) => not_null_checks.extend(not_null_columns(e)),
            ColumnOption::Generated {
                generated_as,
                generation_expr,
                ..
            } => generated(col, generated_as, generation_expr.as_ref()),
            _ => {}
        }
        Ok(())
    }

    fn serial_default(&self, rel: &Relation, column: &str) -> String {
        let seq = object_name(&rel.name, column, "seq");
        let seq = quote_ident(&seq);
        // pg_get_expr qualifies the sequence unless it is visible through the search_path of
        // the session that pulls, which is the snapshot's.
        if self.snap.on_search_path(&rel.schema) {
            format!("nextval('{seq}'::regclass)")
        } else {
            format!("nextval('{}.{seq}'::regclass)", quote_ident(&rel.schema))
        }
    }

    /// Applies a table constraint to `rel`.
    pub(crate) fn add_constraint(
        &mut self,
        rel: &mut Relation,
        c: &TableConstraint,
    ) -> Result<(), String> {
        match c {
            TableConstraint::PrimaryKey { name, columns, .. } => {
                let cols = index_columns(columns)?;
                force_not_null(rel, &cols);
                self.remember_key(rel, name.as_ref().map(ident), &cols, true);
                rel.primary_key = cols;
            }
            TableConstraint::Unique { name, columns, .. } => {
                let cols = index_columns(columns)?;
                self.remember_key(rel, name.as_ref().map(ident), &cols, false);
                rel.unique.push(cols);
            }
            TableConstraint::ForeignKey {
                name,
                columns,
                foreign_table,
                referred_columns,
                ..
            } => {
                let fk = self.foreign_key(
                    rel,
                    name.as_ref().map(ident),
                    columns,
                    foreign_table,
                    referred_columns,
                )?;
                rel.foreign_keys.push(fk);
            }
            TableConstraint::Check { expr, .. } => force_not_null(rel, &not_null_columns(expr)),
            _ => {}
        }
        Ok(())
    }

    fn foreign_key(
        &mut self,
        rel: &Relation,
        name: Option<String>,
        columns: &[Ident],
        target: &ObjectName,
        referred: &[Ident],
    ) -> Result<ForeignKey, String> {
        let columns: Vec<String> = columns.iter().map(ident).collect();
        let (schema, table) = split_name(target)?;
        let ref_schema = match schema {
            Some(s) => s,
            None if self.relation_index(None, &table).is_some() => {
                let i = self.relation_index(None, &table).expect("just found");
                self.snap.relations[i].schema.clone()
            }
            None if table == rel.name => rel.schema.clone(),
            None => {
                self.warn(format!(
                    "foreign key target {table} is not created before it is referenced"
                ));
                self.creation_schema(None)
            }
        };
        // Referenced columns left empty mean the target's primary key, filled in at the end.
        let ref_columns = if referred.is_empty() && table == rel.name && ref_schema == rel.schema {
            rel.primary_key.clone()
        } else {
            referred.iter().map(ident).collect()
        };
        let name = name.unwrap_or_else(|| object_name(&rel.name, &columns.join("_"), "fkey"));
        Ok(ForeignKey {
            name,
            columns,
            ref_schema,
            ref_table: table,
            ref_columns,
        })
    }
}

/// A relation without columns or keys.
pub(crate) fn empty_relation(schema: String, name: String, kind: RelationKind) -> Relation {
    Relation {
        schema,
        name,
        kind,
        columns: Vec::new(),
        primary_key: Vec::new(),
        unique: Vec::new(),
        foreign_keys: Vec::new(),
        changes_session: false,
    }
}

/// `GENERATED ALWAYS AS (expr) STORED`, or an identity column.
fn generated(col: &mut Column, kind: &GeneratedAs, expr: Option<&Expr>) {
    match expr {
        Some(e) => col.generated = Some(e.to_string()),
        None => {
            col.not_null = true;
            col.identity = Some(match kind {
                GeneratedAs::ByDefault => Identity::ByDefault,
                GeneratedAs::Always | GeneratedAs::ExpStored => Identity::Always,
            });
        }
    }
}

/// sqlparser reads `(LIKE source)` in PostgreSQL as a column named `like` of type `source`;
/// `LIKE` is reserved, so such a column can only be that clause.
fn like_clause(cd: &ColumnDef) -> Option<&ObjectName> {
    let named_like = cd.name.quote_style.is_none() && cd.name.value.eq_ignore_ascii_case("like");
    match &cd.data_type {
        sqlparser::ast::DataType::Custom(source, mods) if named_like && mods.is_empty() => {
            Some(source)
        }
        _ => None,
    }
}

/// Adds `col`, or merges it into an existing (inherited) column of the same name.
fn merge_column(columns: &mut Vec<Column>, col: Column) {
    match columns.iter_mut().find(|c| c.name == col.name) {
        Some(existing) => {
            existing.not_null |= col.not_null;
            if col.default.is_some() {
                existing.default = col.default;
            }
            if col.generated.is_some() {
                existing.generated = col.generated;
            }
        }
        None => columns.push(col),
    }
}

pub(crate) fn force_not_null(rel: &mut Relation, names: &[String]) {
    for c in &mut rel.columns {
        if names.contains(&c.name) {
            c.not_null = true;
        }
    }
}

/// Columns a `CHECK` expression forces to be non-null: `c IS NOT NULL`, possibly AND-ed.
pub(crate) fn not_null_columns(e: &Expr) -> Vec<String> {
    match e {
        Expr::Nested(inner) => not_null_columns(inner),
        Expr::IsNotNull(inner) => match inner.as_ref() {
            Expr::Identifier(i) => vec![ident(i)],
            Expr::Nested(x) => not_null_columns(&Expr::IsNotNull(x.clone())),
            _ => Vec::new(),
        },
        Expr::BinaryOp {
            left,
            op: sqlparser::ast::BinaryOperator::And,
            right,
        } => {
            let mut v = not_null_columns(left);
            v.extend(not_null_columns(right));
            v
        }
        _ => Vec::new(),
    }
}

fn index_columns(cols: &[IndexColumn]) -> Result<Vec<String>, String> {
    cols.iter()
        .map(|c| match &c.column.expr {
            Expr::Identifier(i) => Ok(ident(i)),
            other => Err(format!("constraint on expression {other} is not supported")),
        })
        .collect()
}

/// An identifier as PostgreSQL prints it inside a regclass literal: quoted unless it is a
/// plain lower-case name.
pub(crate) fn quote_ident(s: &str) -> String {
    let plain = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        s.to_owned()
    } else {
        format!("\"{}\"", s.replace('"', "\"\""))
    }
}
