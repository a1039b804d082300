//! Whether a compiled statement still matches the server: its Describe (parameter and result
//! column types) and the catalog's NOT NULL of the table columns it returns, compared with
//! what it was compiled against. Pure functions; `Pool::verify` (pool/verify.rs) does the
//! I/O.

use super::conformance::matches;
use super::{Compiled, NotNull};
use crate::types::Oid;
use crate::types::oid::{self, FIRST_USER_OID};

/// A result column as the server describes it, with its table column's catalog entry when
/// it is one.
#[derive(Debug, Clone)]
pub(crate) struct ServerColumn {
    pub(crate) type_oid: Oid,
    /// `(table, column, attnotnull)` of the table column it is taken from.
    pub(crate) table: Option<(String, String, bool)>,
}

/// The differences between what `compiled` expects and what the server describes, one
/// sentence each; `type_name` names a server type.
pub(crate) fn differences(
    compiled: &Compiled,
    params: &[Oid],
    columns: &[ServerColumn],
    type_name: &dyn Fn(Oid) -> String,
) -> Vec<String> {
    let template = compiled.template;
    let mut found = Vec::new();
    if params.len() != template.param_oids.len() {
        found.push(format!(
            "it now takes {} parameters, compiled with {}",
            params.len(),
            template.param_oids.len()
        ));
    }
    for (i, (&expected, &actual)) in template.param_oids.iter().zip(params).enumerate() {
        if !matches(expected, actual) {
            let wanted = match expected {
                0 => "a user-defined type".to_owned(),
                oid => type_name(oid),
            };
            found.push(format!(
                "parameter ${} is now {}, compiled as {wanted}",
                i + 1,
                type_name(actual)
            ));
        }
    }
    let expected_count = template.columns().count();
    if columns.len() != expected_count {
        found.push(format!(
            "it now returns {} columns, compiled with {expected_count}",
            columns.len()
        ));
        return found;
    }
    for ((expected, actual), not_null) in template.columns().zip(columns).zip(
        compiled
            .not_null
            .iter()
            .chain(std::iter::repeat(&NotNull::Unknown)),
    ) {
        let of = match &actual.table {
            Some((table, column, _)) if *column == expected.name => {
                format!("column `{column}` of `{table}`")
            }
            Some((table, column, _)) => {
                format!("column `{}` (`{column}` of `{table}`)", expected.name)
            }
            None => format!("column `{}`", expected.name),
        };
        let same_type = matches(expected.type_oid, actual.type_oid)
            && (expected.type_oid != 0
                || actual.type_oid < FIRST_USER_OID
                || type_name(actual.type_oid) == expected.type_name);
        if !same_type {
            found.push(format!(
                "{of} is now {}, compiled as {}",
                type_name(actual.type_oid),
                expected.type_name
            ));
        }
        if let Some((_, _, attnotnull)) = actual.table {
            match (not_null, attnotnull) {
                (NotNull::Yes, false) => {
                    found.push(format!("{of} is now nullable, compiled as NOT NULL"));
                }
                (NotNull::No, true) => {
                    found.push(format!("{of} is now NOT NULL, compiled as nullable"));
                }
                _ => {}
            }
        }
    }
    found
}

/// The name of a built-in type (user types are named by the catalog).
pub(crate) fn builtin_name(oid: Oid) -> String {
    oid::describe(oid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::Template;

    fn compiled(not_null: &'static [NotNull]) -> Compiled {
        Compiled {
            template: Template::leak_at(
                "SELECT id, email FROM users WHERE id = $1",
                &[oid::INT8],
                &[("id", oid::INT8, "int8"), ("email", oid::TEXT, "text")],
                "src/users.rs:42",
            )
            .unwrap(),
            not_null,
        }
    }

    fn column(type_oid: Oid, name: &str, not_null: bool) -> ServerColumn {
        ServerColumn {
            type_oid,
            table: Some(("users".into(), name.into(), not_null)),
        }
    }

    fn name(oid: Oid) -> String {
        if oid >= FIRST_USER_OID {
            "citext".into()
        } else {
            builtin_name(oid)
        }
    }

    #[test]
    fn a_matching_statement_has_no_differences() {
        let c = compiled(&[NotNull::Yes, NotNull::No]);
        let cols = [
            column(oid::INT8, "id", true),
            column(oid::TEXT, "email", false),
        ];
        assert!(differences(&c, &[oid::INT8], &cols, &name).is_empty());
    }

    #[test]
    fn types_and_not_null_differences_are_named() {
        let c = compiled(&[NotNull::Yes, NotNull::No]);
        let cols = [
            column(oid::INT8, "id", false),
            column(FIRST_USER_OID + 1, "email", true),
        ];
        let found = differences(&c, &[oid::INT4], &cols, &name);
        assert_eq!(
            found,
            [
                "parameter $1 is now int4, compiled as int8",
                "column `id` of `users` is now nullable, compiled as NOT NULL",
                "column `email` of `users` is now citext, compiled as text",
                "column `email` of `users` is now NOT NULL, compiled as nullable",
            ]
        );
        let found = differences(&c, &[oid::INT8], &cols[..1], &name);
        assert_eq!(found, ["it now returns 1 columns, compiled with 2"]);
    }
}
