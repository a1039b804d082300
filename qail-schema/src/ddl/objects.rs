//! Schemas, views, indexes, types, domains, functions, extensions, and `DROP`.

use sqlparser::ast::{
    AlterType, AlterTypeAddValuePosition, AlterTypeOperation, ArgMode, CreateDomain,
    CreateFunction, CreateIndex, DataType, Expr, FunctionBehavior, FunctionCalledOnNull,
    FunctionDesc, Ident, ObjectName, ObjectType, SchemaName, Statement,
    UserDefinedTypeRepresentation,
};

use super::Importer;
use super::names::{ident, split_name};
use super::split::Flags;
use super::table::not_null_columns;
use crate::snapshot::{
    Extension, Field, Function, Relation, RelationKind, TypeRef, UserType, UserTypeKind, Volatility,
};

impl Importer {
    pub(crate) fn apply_object(&mut self, stmt: &Statement, flags: Flags) -> Result<(), String> {
        match stmt {
            Statement::CreateSchema { schema_name, .. } => self.create_schema(schema_name),
            Statement::CreateView {
                name,
                materialized,
                or_replace,
                if_not_exists,
                columns,
                query,
                ..
            } => {
                let view = self.create_view(name, *materialized, *or_replace || *if_not_exists)?;
                self.pending_view = view.map(|(schema, name)| super::PendingView {
                    schema,
                    name,
                    materialized: *materialized,
                    query: query.to_string(),
                    aliases: columns.iter().map(|c| ident(&c.name)).collect(),
                });
                Ok(())
            }
            Statement::CreateSequence {
                name,
                if_not_exists,
                ..
            } => self.create_sequence(name, *if_not_exists),
            Statement::CreateIndex(ix) => self.create_index(ix),
            Statement::CreateType {
                name,
                representation,
            } => self.create_type(name, representation),
            Statement::AlterType(at) => self.alter_type(at),
            Statement::CreateDomain(d) => self.create_domain(d, flags.not_null),
            Statement::CreateFunction(f) => self.create_function(f, flags),
            Statement::CreateExtension {
                name,
                schema,
                version,
                ..
            } => {
                self.create_extension(name, schema.as_ref(), version.as_ref());
                Ok(())
            }
            Statement::Drop {
                object_type,
                names,
                if_exists,
                ..
            } => names
                .iter()
                .try_for_each(|n| self.drop(*object_type, n, *if_exists)),
            Statement::DropDomain(d) => self.drop_type(&d.name, d.if_exists),
            Statement::DropFunction {
                func_desc,
                if_exists,
                ..
            } => func_desc
                .iter()
                .try_for_each(|f| self.drop_function(f, *if_exists)),
            Statement::DropExtension { names, .. } => {
                let names: Vec<String> = names.iter().map(ident).collect();
                self.snap.extensions.retain(|e| !names.contains(&e.name));
                Ok(())
            }
            // Statements that do not change what queries can see: COMMENT, GRANT, REVOKE,
            // sequences, triggers, policies, roles, DML …
            _ => Ok(()),
        }
    }

    fn create_schema(&mut self, schema_name: &SchemaName) -> Result<(), String> {
        let name = match schema_name {
            SchemaName::Simple(n) | SchemaName::NamedAuthorization(n, _) => split_name(n)?.1,
            SchemaName::UnnamedAuthorization(user) => ident(user),
        };
        self.snap.schemas.push(name);
        self.snap.schemas.sort();
        self.snap.schemas.dedup();
        Ok(())
    }

    fn create_extension(&mut self, name: &Ident, schema: Option<&Ident>, version: Option<&Ident>) {
        let schema = self.creation_schema(schema.map(ident));
        let name = ident(name);
        self.snap.extensions.retain(|e| e.name != name);
        let version = version.map(|v| v.value.clone()).unwrap_or_default();
        self.snap.extensions.push(Extension {
            name,
            schema,
            version,
        });
    }

    /// Records the view without columns and returns its name, for its columns to be typed
    /// next; `None` when `CREATE … IF NOT EXISTS` found it there.
    fn create_view(
        &mut self,
        name: &ObjectName,
        materialized: bool,
        replace: bool,
    ) -> Result<Option<(String, String)>, String> {
        let (schema, name) = split_name(name)?;
        let schema = self.creation_schema(schema);
        if let Some(i) = self.relation_index(Some(&schema), &name) {
            if !replace {
                return Err(format!(
                    "relation {schema}.{name} already exists; statement skipped"
                ));
            }
            self.snap.relations.remove(i);
        }
        let kind = if materialized {
            RelationKind::MaterializedView
        } else {
            RelationKind::View
        };
        self.snap.relations.push(Relation {
            schema: schema.clone(),
            name: name.clone(),
            kind,
            columns: Vec::new(),
            primary_key: Vec::new(),
            unique: Vec::new(),
            foreign_keys: Vec::new(),
            changes_session: false,
        });
        Ok(Some((schema, name)))
    }

    /// A unique index without predicate or expressions acts as a unique constraint.
    fn create_index(&mut self, ix: &CreateIndex) -> Result<(), String> {
        if !ix.unique || ix.predicate.is_some() {
            return Ok(());
        }
        let cols: Option<Vec<String>> = ix
            .columns
            .iter()
            .map(|c| match &c.column.expr {
                Expr::Identifier(i) => Some(ident(i)),
                _ => None,
            })
            .collect();
        let Some(cols) = cols else { return Ok(()) };
        let idx = self.relation_of(&ix.table_name)?;
        let rel = self.snap.relations[idx].clone();
        let name = match &ix.name {
            Some(n) => split_name(n)?.1,
            None => super::names::object_name(&rel.name, &cols.join("_"), "idx"),
        };
        self.remember_key(&rel, Some(name), &cols, false);
        self.snap.relations[idx].unique.push(cols);
        Ok(())
    }

    fn create_type(
        &mut self,
        name: &ObjectName,
        rep: &UserDefinedTypeRepresentation,
    ) -> Result<(), String> {
        let kind = match rep {
            UserDefinedTypeRepresentation::Enum { labels } => UserTypeKind::Enum {
                labels: labels.iter().map(|l| l.value.clone()).collect(),
            },
            UserDefinedTypeRepresentation::Composite { attributes } => {
                let mut fields = Vec::new();
                for a in attributes {
                    fields.push(Field {
                        name: ident(&a.name),
                        ty: self.type_ref(&a.data_type)?.0,
                    });
                }
                UserTypeKind::Composite { fields }
            }
        };
        self.add_type(name, kind)
    }

    pub(crate) fn create_range(
        &mut self,
        name: &ObjectName,
        subtype: &DataType,
    ) -> Result<(), String> {
        let subtype = self.type_ref(subtype)?.0;
        self.add_type(name, UserTypeKind::Range { subtype })
    }

    fn create_domain(&mut self, d: &CreateDomain, not_null: bool) -> Result<(), String> {
        let base = self.type_ref(&d.data_type)?.0;
        let checked = d.constraints.iter().any(|c| match c {
            sqlparser::ast::TableConstraint::Check { expr, .. } => {
                not_null_columns(expr).iter().any(|c| c == "value")
            }
            _ => false,
        });
        self.add_type(
            &d.name,
            UserTypeKind::Domain {
                base,
                not_null: not_null || checked,
            },
        )
    }

    fn add_type(&mut self, name: &ObjectName, kind: UserTypeKind) -> Result<(), String> {
        let (schema, name) = split_name(name)?;
        let schema = self.creation_schema(schema);
        if self.snap.user_type(Some(&schema), &name).is_some() {
            return Err(format!(
                "type {schema}.{name} already exists; statement skipped"
            ));
        }
        self.snap.types.push(UserType { schema, name, kind });
        Ok(())
    }

    fn alter_type(&mut self, at: &AlterType) -> Result<(), String> {
        let (schema, name) = split_name(&at.name)?;
        let found = self
            .snap
            .types
            .iter_mut()
            .find(|t| t.name == name && schema.as_ref().is_none_or(|s| *s == t.schema));
        let Some(ty) = found else {
            return Err(format!("type {} does not exist at this point", at.name));
        };
        match (&at.operation, &mut ty.kind) {
            (AlterTypeOperation::Rename(r), _) => {
                let old = (
                    ty.schema.clone(),
                    std::mem::replace(&mut ty.name, ident(&r.new_name)),
                );
                let new = ty.name.clone();
                self.rename_type_refs(&old.0, &old.1, &new);
            }
            (AlterTypeOperation::AddValue(add), UserTypeKind::Enum { labels }) => {
                let value = add.value.value.clone();
                if labels.contains(&value) {
                    return if add.if_not_exists {
                        Ok(())
                    } else {
                        Err(format!("label {value} already exists"))
                    };
                }
                let at = match &add.position {
                    None => labels.len(),
                    Some(AlterTypeAddValuePosition::Before(l)) => position(labels, &l.value)?,
                    Some(AlterTypeAddValuePosition::After(l)) => position(labels, &l.value)? + 1,
                };
                labels.insert(at, value);
            }
            (AlterTypeOperation::RenameValue(r), UserTypeKind::Enum { labels }) => {
                let i = position(labels, &r.from.value)?;
                labels[i].clone_from(&r.to.value);
            }
            _ => return Err(format!("ALTER TYPE {}: the type is not an enum", at.name)),
        }
        Ok(())
    }

    fn create_function(&mut self, f: &CreateFunction, flags: Flags) -> Result<(), String> {
        let (schema, name) = split_name(&f.name)?;
        let schema = self.creation_schema(schema);
        let FunctionArgs {
            args,
            names: arg_names,
            defaults,
            mut out_columns,
        } = self.function_args(f)?;
        let mut returns_set = flags.setof;
        let returns = match &f.return_type {
            Some(DataType::Table(Some(cols))) => {
                returns_set = true;
                for c in cols {
                    out_columns.push(Field {
                        name: ident(&c.name),
                        ty: self.type_ref(&c.data_type)?.0,
                    });
                }
                TypeRef::builtin("record")
            }
            Some(t) => self.type_ref(t)?.0,
            None if out_columns.len() == 1 => out_columns[0].ty.clone(),
            None if !out_columns.is_empty() => TypeRef::builtin("record"),
            None => TypeRef::builtin("void"),
        };
        let strict = matches!(
            f.called_on_null,
            Some(FunctionCalledOnNull::Strict | FunctionCalledOnNull::ReturnsNullOnNullInput)
        );
        let volatility = match f.behavior {
            Some(FunctionBehavior::Immutable) => Volatility::Immutable,
            Some(FunctionBehavior::Stable) => Volatility::Stable,
            _ => Volatility::Volatile,
        };
        let func = Function {
            schema,
            name,
            args,
            arg_names,
            defaults,
            variadic: flags.variadic,
            returns,
            out_columns,
            returns_set,
            strict,
            volatility,
            extension: None,
            aggregate: false,
        };
        let same =
            |g: &Function| g.schema == func.schema && g.name == func.name && g.args == func.args;
        if let Some(i) = self.snap.functions.iter().position(same) {
            if !f.or_replace {
                return Err(format!(
                    "function {}.{} already exists with the same arguments",
                    func.schema, func.name
                ));
            }
            self.snap.functions.remove(i);
        }
        self.snap.functions.push(func);
        Ok(())
    }

    /// Input argument types, how many have defaults, and OUT/INOUT columns.
    fn function_args(&mut self, f: &CreateFunction) -> Result<FunctionArgs, String> {
        let mut args = Vec::new();
        let mut names = Vec::new();
        let mut out_columns = Vec::new();
        let mut defaults = 0_u32;
        for a in f.args.iter().flatten() {
            let ty = self.type_ref(&a.data_type)?.0;
            if matches!(a.mode, None | Some(ArgMode::In | ArgMode::InOut)) {
                args.push(ty.clone());
                names.push(a.name.as_ref().map(ident).unwrap_or_default());
                if a.default_expr.is_some() {
                    defaults = defaults.saturating_add(1);
                }
            }
            if matches!(a.mode, Some(ArgMode::Out | ArgMode::InOut)) {
                let name = a.name.as_ref().map(ident).unwrap_or_default();
                out_columns.push(Field { name, ty });
            }
        }
        if names.iter().all(String::is_empty) {
            names.clear();
        }
        Ok(FunctionArgs {
            args,
            names,
            defaults,
            out_columns,
        })
    }

    fn drop(&mut self, kind: ObjectType, n: &ObjectName, if_exists: bool) -> Result<(), String> {
        match kind {
            ObjectType::Table
            | ObjectType::View
            | ObjectType::MaterializedView
            | ObjectType::Sequence => match self.relation_of(n) {
                Ok(i) => {
                    let gone = self.snap.relations.remove(i);
                    self.drop_references(|s, t| s == gone.schema && t == gone.name);
                    Ok(())
                }
                Err(_) if if_exists => Ok(()),
                Err(e) => Err(e),
            },
            ObjectType::Type => self.drop_type(n, if_exists),
            ObjectType::Index => self.drop_index(n),
            ObjectType::Schema => {
                let (_, name) = split_name(n)?;
                self.snap.schemas.retain(|s| *s != name);
                self.snap.relations.retain(|r| r.schema != name);
                self.snap.types.retain(|t| t.schema != name);
                self.snap.functions.retain(|f| f.schema != name);
                self.drop_references(|s, _| s == name);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Foreign keys pointing at dropped relations go with them (`DROP … CASCADE`).
    fn drop_references(&mut self, gone: impl Fn(&str, &str) -> bool) {
        for r in &mut self.snap.relations {
            r.foreign_keys
                .retain(|fk| !gone(&fk.ref_schema, &fk.ref_table));
        }
    }

    /// Every reference to a renamed type follows it.
    fn rename_type_refs(&mut self, schema: &str, old: &str, new: &str) {
        let fix = |t: &mut TypeRef| {
            if t.schema == schema && t.name == old {
                new.clone_into(&mut t.name);
            }
        };
        for r in &mut self.snap.relations {
            r.columns.iter_mut().for_each(|c| fix(&mut c.ty));
        }
        for t in &mut self.snap.types {
            match &mut t.kind {
                UserTypeKind::Composite { fields } => {
                    fields.iter_mut().for_each(|f| fix(&mut f.ty))
                }
                UserTypeKind::Domain { base: x, .. } | UserTypeKind::Range { subtype: x } => fix(x),
                UserTypeKind::Enum { .. } => {}
            }
        }
        for f in &mut self.snap.functions {
            f.args.iter_mut().for_each(fix);
            fix(&mut f.returns);
            f.out_columns.iter_mut().for_each(|c| fix(&mut c.ty));
        }
    }

    fn drop_type(&mut self, n: &ObjectName, if_exists: bool) -> Result<(), String> {
        let (schema, name) = split_name(n)?;
        let schema = match schema {
            Some(s) => Some(s),
            None => self.snap.user_type(None, &name).map(|t| t.schema.clone()),
        };
        let before = self.snap.types.len();
        self.snap
            .types
            .retain(|t| !(t.name == name && Some(&t.schema) == schema.as_ref()));
        if before == self.snap.types.len() && !if_exists {
            return Err(format!("type {n} does not exist at this point"));
        }
        Ok(())
    }

    fn drop_function(&mut self, f: &FunctionDesc, if_exists: bool) -> Result<(), String> {
        let (schema, name) = split_name(&f.name)?;
        let args = match &f.args {
            Some(a) => Some(
                a.iter()
                    .filter(|a| !matches!(a.mode, Some(ArgMode::Out)))
                    .map(|a| self.type_ref(&a.data_type).map(|t| t.0))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            None => None,
        };
        let path = self.path.clone();
        let before = self.snap.functions.len();
        self.snap.functions.retain(|g| {
            let schema_ok = match &schema {
                Some(s) => g.schema == *s,
                None => path.contains(&g.schema),
            };
            !(schema_ok && g.name == name && args.as_ref().is_none_or(|a| *a == g.args))
        });
        if before == self.snap.functions.len() && !if_exists {
            return Err(format!("function {} does not exist at this point", f.name));
        }
        Ok(())
    }
}

fn position(labels: &[String], label: &str) -> Result<usize, String> {
    labels
        .iter()
        .position(|l| l == label)
        .ok_or_else(|| format!("enum label {label} does not exist"))
}

/// A `CREATE FUNCTION`'s arguments: input types and names, how many inputs have defaults,
/// and the OUT arguments.
struct FunctionArgs {
    args: Vec<TypeRef>,
    names: Vec<String>,
    defaults: u32,
    out_columns: Vec<Field>,
}
