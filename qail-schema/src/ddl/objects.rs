//! Schemas, views, indexes, types, domains, functions, extensions, and `DROP`.

use sqlparser::ast::{
    AlterType, AlterTypeAddValuePosition, AlterTypeOperation, ArgMode, CreateDomain,
    CreateFunction, CreateIndex, DataType, Expr, FunctionBehavior, FunctionCalledOnNull,
    FunctionDesc, ObjectName, ObjectType, SchemaName, Statement, UserDefinedTypeRepresentation,
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
            Statement::CreateSchema { schema_name, .. } => {
                let name = match schema_name {
                    SchemaName::Simple(n) | SchemaName::NamedAuthorization(n, _) => {
                        split_name(n)?.1
                    }
                    SchemaName::UnnamedAuthorization(user) => ident(user),
                };
                self.snap.schemas.push(name);
                self.snap.schemas.sort();
                self.snap.schemas.dedup();
                Ok(())
            }
            Statement::CreateView {
                name,
                materialized,
                or_replace,
                if_not_exists,
                ..
            } => self.create_view(name, *materialized, *or_replace || *if_not_exists),
            Statement::CreateIndex(ix) => self.create_index(ix),
            Statement::CreateType {
                name,
                representation,
            } => self.create_type(name, representation),
            Statement::AlterType(at) => self.alter_type(at),
            Statement::CreateDomain(d) => self.create_domain(d, flags.not_null),
            Statement::CreateFunction(f) => self.create_function(f, flags.setof),
            Statement::CreateExtension {
                name,
                schema,
                version,
                ..
            } => {
                let schema = self.creation_schema(schema.as_ref().map(ident));
                let name = ident(name);
                self.snap.extensions.retain(|e| e.name != name);
                let version = version
                    .as_ref()
                    .map(|v| v.value.clone())
                    .unwrap_or_default();
                self.snap.extensions.push(Extension {
                    name,
                    schema,
                    version,
                });
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

    fn create_view(
        &mut self,
        name: &ObjectName,
        materialized: bool,
        replace: bool,
    ) -> Result<(), String> {
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
        let what = if materialized {
            "materialized view"
        } else {
            "view"
        };
        let message = format!(
            "{what} {schema}.{name}: view columns need the analyzer (not yet available); it is \
             recorded without columns, so queries on it cannot be checked: pull the schema from \
             a database with `cargo qail schema pull` to get its columns"
        );
        self.snap.relations.push(Relation {
            schema,
            name,
            kind,
            columns: Vec::new(),
            primary_key: Vec::new(),
            unique: Vec::new(),
            foreign_keys: Vec::new(),
        });
        Err(message)
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
            (AlterTypeOperation::Rename(r), _) => ty.name = ident(&r.new_name),
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

    fn create_function(&mut self, f: &CreateFunction, setof: bool) -> Result<(), String> {
        let (schema, name) = split_name(&f.name)?;
        let schema = self.creation_schema(schema);
        let mut args = Vec::new();
        let mut out_columns = Vec::new();
        let mut defaults = 0_u32;
        for a in f.args.iter().flatten() {
            let ty = self.type_ref(&a.data_type)?.0;
            if matches!(a.mode, None | Some(ArgMode::In | ArgMode::InOut)) {
                args.push(ty.clone());
                if a.default_expr.is_some() {
                    defaults = defaults.saturating_add(1);
                }
            }
            if matches!(a.mode, Some(ArgMode::Out | ArgMode::InOut)) {
                let name = a.name.as_ref().map(ident).unwrap_or_default();
                out_columns.push(Field { name, ty });
            }
        }
        let mut returns_set = setof;
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
            defaults,
            variadic: false,
            returns,
            out_columns,
            returns_set,
            strict,
            volatility,
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

    fn drop(&mut self, kind: ObjectType, n: &ObjectName, if_exists: bool) -> Result<(), String> {
        match kind {
            ObjectType::Table | ObjectType::View | ObjectType::MaterializedView => {
                match self.relation_of(n) {
                    Ok(i) => {
                        self.snap.relations.remove(i);
                        Ok(())
                    }
                    Err(_) if if_exists => Ok(()),
                    Err(e) => Err(e),
                }
            }
            ObjectType::Type => self.drop_type(n, if_exists),
            ObjectType::Schema => {
                let (_, name) = split_name(n)?;
                self.snap.schemas.retain(|s| *s != name);
                self.snap.relations.retain(|r| r.schema != name);
                self.snap.types.retain(|t| t.schema != name);
                self.snap.functions.retain(|f| f.schema != name);
                Ok(())
            }
            _ => Ok(()),
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
