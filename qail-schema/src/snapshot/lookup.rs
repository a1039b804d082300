//! Normalization and name lookup over a [`Snapshot`].

use super::{Function, Relation, Snapshot, Source, UserType};

impl Snapshot {
    /// Sorts every list into its canonical order (see the field docs) and removes duplicates,
    /// so equal schemas compare equal and serialize byte-identically. Column order and enum
    /// label order are meaningful and kept.
    pub fn sort(&mut self) {
        self.schemas.sort();
        self.schemas.dedup();
        for rel in &mut self.relations {
            rel.unique.sort();
            rel.unique.dedup();
            rel.foreign_keys.sort_by(|a, b| a.name.cmp(&b.name));
        }
        self.relations
            .sort_by(|a, b| (&a.schema, &a.name).cmp(&(&b.schema, &b.name)));
        self.types
            .sort_by(|a, b| (&a.schema, &a.name).cmp(&(&b.schema, &b.name)));
        self.functions
            .sort_by(|a, b| (&a.schema, &a.name, &a.args).cmp(&(&b.schema, &b.name, &b.args)));
        self.extensions.sort_by(|a, b| a.name.cmp(&b.name));
        self.base_types
            .sort_by(|a, b| (&a.schema, &a.name).cmp(&(&b.schema, &b.name)));
        self.operators.sort_by(|a, b| {
            (&a.schema, &a.name, &a.left, &a.right).cmp(&(&b.schema, &b.name, &b.left, &b.right))
        });
        self.casts
            .sort_by(|a, b| (&a.from, &a.to).cmp(&(&b.from, &b.to)));
        self.sources.sort_by(|a, b| {
            (&a.schema, &a.table, &a.column).cmp(&(&b.schema, &b.table, &b.column))
        });
        if let Some(rules) = &mut self.rules {
            rules.sort_by(|a, b| {
                (&a.schema, &a.table, &a.name).cmp(&(&b.schema, &b.table, &b.name))
            });
        }
        if let Some(indexes) = &mut self.indexes {
            indexes.sort_by(|a, b| (&a.schema, &a.name).cmp(&(&b.schema, &b.name)));
        }
    }

    /// Where a relation (`column` `None`) or a column is defined, when the snapshot records
    /// it (built from DDL files).
    pub fn source(&self, schema: &str, table: &str, column: Option<&str>) -> Option<&Source> {
        let key = (schema, table, column);
        self.sources
            .binary_search_by(|s| (&*s.schema, &*s.table, s.column.as_deref()).cmp(&key))
            .ok()
            .map(|i| &self.sources[i])
    }

    /// Finds a table, view or materialized view. With a schema, only that schema is looked
    /// in; without one, the schemas of the search_path in order, like PostgreSQL does.
    pub fn relation(&self, schema: Option<&str>, name: &str) -> Option<&Relation> {
        self.resolve(schema, |s| {
            self.relations
                .iter()
                .find(|r| r.schema == s && r.name == name)
        })
    }

    /// Finds a user-defined type (enum, composite, domain, range) the same way as
    /// [`Snapshot::relation`].
    pub fn user_type(&self, schema: Option<&str>, name: &str) -> Option<&UserType> {
        self.resolve(schema, |s| {
            self.types.iter().find(|t| t.schema == s && t.name == name)
        })
    }

    /// Every user function called `name` that a call could resolve to: with a schema, that
    /// schema's; without, those of every search_path schema, in search_path order (overload
    /// resolution picks among them by argument types).
    pub fn functions_named(&self, schema: Option<&str>, name: &str) -> Vec<&Function> {
        let in_schema = |s: &str| -> Vec<&Function> {
            self.functions
                .iter()
                .filter(|f| f.schema == s && f.name == name)
                .collect()
        };
        match schema {
            Some(s) => in_schema(s),
            None => self.effective_search_path().flat_map(in_schema).collect(),
        }
    }

    /// The base type (not built in) a scalar type reference names, if the snapshot has it.
    pub fn base_type(&self, t: &super::TypeRef) -> Option<&super::BaseType> {
        (t.array_dims == 0)
            .then(|| {
                self.base_types
                    .iter()
                    .find(|b| b.schema == t.schema && b.name == t.name)
            })
            .flatten()
    }

    /// The context of the cast from `from` to `to` among the snapshot's casts, if any.
    pub fn cast_context(
        &self,
        from: &super::TypeRef,
        to: &super::TypeRef,
    ) -> Option<super::CastContext> {
        self.casts
            .iter()
            .find(|c| c.from == *from && c.to == *to)
            .map(|c| c.context)
    }

    /// The schemas an unqualified name is looked up in, in order — PostgreSQL's rule:
    /// `pg_catalog` first unless the search_path lists it (then where it lists it), then the
    /// search_path. The one statement of that rule; every lookup by unqualified name follows it.
    pub fn effective_search_path(&self) -> impl Iterator<Item = &str> {
        let implicit =
            (!self.search_path.iter().any(|s| s == "pg_catalog")).then_some("pg_catalog");
        implicit
            .into_iter()
            .chain(self.search_path.iter().map(String::as_str))
    }

    /// Whether unqualified names find objects of `schema` ([`Snapshot::effective_search_path`]).
    pub fn on_search_path(&self, schema: &str) -> bool {
        self.effective_search_path().any(|s| s == schema)
    }

    /// Whether a schema of this name is covered by the snapshot.
    pub fn has_schema(&self, name: &str) -> bool {
        self.schemas.iter().any(|s| s == name)
    }

    fn resolve<'a, T>(
        &'a self,
        schema: Option<&str>,
        find: impl Fn(&str) -> Option<&'a T>,
    ) -> Option<&'a T> {
        match schema {
            Some(s) => find(s),
            None => self.effective_search_path().find_map(find),
        }
    }
}

impl Relation {
    /// The column called `name`, if any.
    pub fn column(&self, name: &str) -> Option<&super::Column> {
        self.columns.iter().find(|c| c.name == name)
    }
}

// Note: the samples are built from DDL, so these tests need feature `ddl` (on by default).
#[cfg(test)]
mod tests {
    use crate::ddl::from_sql;

    #[test]
    fn lookups_follow_the_search_path() {
        let (mut s, _) = from_sql(&[(
            "t.sql".to_owned(),
            "CREATE SCHEMA app;
             CREATE TABLE app.t (a int); CREATE TABLE public.t (b int);
             CREATE TYPE app.mood AS ENUM ('x');
             CREATE FUNCTION app.f(int) RETURNS int LANGUAGE sql AS 'SELECT 1';
             CREATE FUNCTION public.f(text) RETURNS int LANGUAGE sql AS 'SELECT 1';"
                .to_owned(),
        )]);
        assert_eq!(s.relation(None, "t").unwrap().columns[0].name, "b");
        assert_eq!(s.relation(Some("app"), "t").unwrap().columns[0].name, "a");
        assert!(s.user_type(None, "mood").is_none());
        assert_eq!(s.functions_named(None, "f").len(), 1);
        s.search_path = vec!["app".to_owned(), "public".to_owned()];
        assert_eq!(s.relation(None, "t").unwrap().columns[0].name, "a");
        assert!(s.user_type(None, "mood").is_some());
        let fs = s.functions_named(None, "f");
        assert_eq!((fs.len(), fs[0].schema.as_str()), (2, "app"));
        assert!(s.relation(Some("nope"), "t").is_none());
    }
}
