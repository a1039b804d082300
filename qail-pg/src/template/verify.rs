//! Whether a compiled statement still matches the server: its Describe (parameter and result
//! column types) and the catalog's NOT NULL of the table columns it returns, compared with
//! what it was compiled against ([`Expectation`]). The one comparison rule of `Pool::verify`
//! and `cargo qail verify`; pure functions, the connection (pool/verify.rs) does the I/O.

use std::fmt::Write as _;

use super::conformance::matches;
use super::{Compiled, NotNull};
use crate::types::Oid;
use crate::types::oid::{self, FIRST_USER_OID};

/// What a statement was compiled against: a registered [`Compiled`] seen through
/// `From<&Compiled>`, or what a tool derives from the sources and the snapshot without
/// building them (`cargo qail verify`). Compared with the server by
/// `Connection::drifts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expectation<'a> {
    /// The SQL sent to the server, with `$n` placeholders.
    pub sql: &'a str,
    /// Parameter type OIDs; 0 for a user type.
    pub param_oids: &'a [Oid],
    /// The result columns, in order.
    pub columns: Vec<ExpectedResult<'a>>,
    /// Where the statement is written, `file:line`, named by each difference.
    pub source: &'a str,
}

/// A result column of an [`Expectation`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpectedResult<'a> {
    /// Column name.
    pub name: &'a str,
    /// Type OID; 0 for a user type (compared by `type_name`).
    pub type_oid: Oid,
    /// The type's name as the snapshot knows it (`int4`, `_text`, `mood`).
    pub type_name: &'a str,
    /// The NOT NULL-ness of the table column it is taken from unchanged.
    pub not_null: NotNull,
}

impl<'a> From<&'a Compiled> for Expectation<'a> {
    fn from(compiled: &'a Compiled) -> Expectation<'a> {
        let template = compiled.template;
        let not_null = compiled
            .not_null
            .iter()
            .copied()
            .chain(std::iter::repeat(NotNull::Unknown));
        Expectation {
            sql: template.sql(),
            param_oids: template.param_oids,
            columns: template
                .columns()
                .zip(not_null)
                .map(|(c, not_null)| ExpectedResult {
                    name: c.name,
                    type_oid: c.type_oid,
                    type_name: c.type_name,
                    not_null,
                })
                .collect(),
            source: match template.source {
                "" => template.name,
                source => source,
            },
        }
    }
}

/// A statement that no longer matches the server: its index in the list checked and each
/// difference in a sentence ("column `email` of `users` is now citext, compiled as text").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// Its index in the statements given.
    pub index: usize,
    /// The differences, one sentence each.
    pub differences: Vec<String>,
}

/// A result column as the server describes it, with its table column's catalog entry when
/// it is one.
#[derive(Debug, Clone)]
pub(crate) struct ServerColumn {
    pub(crate) type_oid: Oid,
    /// `(table, column, attnotnull)` of the table column it is taken from.
    pub(crate) table: Option<(String, String, bool)>,
}

/// The server's answer about one statement.
#[derive(Debug, Clone)]
pub(crate) enum Described {
    /// Parsed with the compiled parameter types: the parameter types the server infers when
    /// none are given (`None` when it cannot infer them alone), the parameter types of the
    /// statement as sent (the user types resolved) and its result columns.
    Accepted {
        inferred: Option<Vec<Oid>>,
        params: Vec<Oid>,
        columns: Vec<ServerColumn>,
    },
    /// Refused (a missing table, column or function): the server's message, and the
    /// parameter types it infers when none are given, if it can.
    Refused {
        message: String,
        inferred: Option<Vec<Oid>>,
    },
}

/// The differences between what `expected` was compiled against and what the server
/// describes, one sentence each; `type_name` names a server type.
pub(crate) fn differences(
    expected: &Expectation<'_>,
    described: &Described,
    type_name: &dyn Fn(Oid) -> String,
) -> Vec<String> {
    let mut found = Vec::new();
    let (inferred, params, columns) = match described {
        Described::Accepted {
            inferred,
            params,
            columns,
        } => (inferred.as_deref(), Some(params.as_slice()), Some(columns)),
        Described::Refused { inferred, .. } => (inferred.as_deref(), None, None),
    };
    if let Some(inferred) = inferred
        && inferred.len() != expected.param_oids.len()
    {
        found.push(format!(
            "it now takes {} parameters, compiled with {}",
            inferred.len(),
            expected.param_oids.len()
        ));
    }
    for (i, &wanted) in expected.param_oids.iter().enumerate() {
        // Note: a built-in parameter type is sent with the Parse, so the statement as sent
        // reports it back unchanged; what the schema makes of `$n` is the type the server
        // infers without it (a column compared with `$1` changed from int4 to int8). A user
        // type is sent as 0 and resolved by the server either way.
        let actual = match wanted {
            0 => params.and_then(|p| p.get(i)),
            _ => inferred.and_then(|p| p.get(i)),
        };
        if let Some(&actual) = actual
            && !matches(wanted, actual)
        {
            let wanted = match wanted {
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
    if let Described::Refused { message, .. } = described {
        found.push(format!("the server refuses it ({message})"));
    }
    let Some(columns) = columns else {
        return found;
    };
    if columns.len() != expected.columns.len() {
        found.push(format!(
            "it now returns {} columns, compiled with {}",
            columns.len(),
            expected.columns.len()
        ));
        return found;
    }
    for (expected, actual) in expected.columns.iter().zip(columns) {
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
            match (expected.not_null, attnotnull) {
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

/// The drifted statements, each as its SQL (cut at 80 characters) and then one line per
/// difference ending with the statement's `file:line`:
///
/// ```text
/// `SELECT id, email FROM users WHERE id = $1`:
///   column `email` of `users` is now citext, compiled as text: src/users.rs:42
/// ```
pub fn report(statements: &[Expectation<'_>], drifts: &[Drift]) -> String {
    let mut out = String::new();
    for drift in drifts {
        let Some(statement) = statements.get(drift.index) else {
            continue;
        };
        let sql: String = statement.sql.chars().take(80).collect();
        let _ = writeln!(out, "`{sql}`:");
        for difference in &drift.differences {
            let _ = writeln!(out, "  {difference}: {}", statement.source);
        }
    }
    out
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

    fn accepted(inferred: &[Oid], columns: &[ServerColumn]) -> Described {
        Described::Accepted {
            inferred: Some(inferred.to_vec()),
            params: vec![oid::INT8],
            columns: columns.to_vec(),
        }
    }

    #[test]
    fn a_registered_statement_is_seen_as_what_it_was_compiled_against() {
        let c = compiled(&[NotNull::Yes]);
        let e = Expectation::from(&c);
        assert_eq!(e.sql, "SELECT id, email FROM users WHERE id = $1");
        assert_eq!(e.source, "src/users.rs:42");
        assert_eq!(e.columns.len(), 2);
        assert_eq!(e.columns[0].not_null, NotNull::Yes);
        // A registry entry with fewer NOT NULL flags than columns compares nothing more.
        assert_eq!(e.columns[1].not_null, NotNull::Unknown);
        assert_eq!(e.columns[1].type_name, "text");
    }

    #[test]
    fn a_matching_statement_has_no_differences() {
        let c = compiled(&[NotNull::Yes, NotNull::No]);
        let cols = [
            column(oid::INT8, "id", true),
            column(oid::TEXT, "email", false),
        ];
        let e = Expectation::from(&c);
        assert!(differences(&e, &accepted(&[oid::INT8], &cols), &name).is_empty());
    }

    #[test]
    fn types_and_not_null_differences_are_named() {
        let c = compiled(&[NotNull::Yes, NotNull::No]);
        let e = Expectation::from(&c);
        let cols = [
            column(oid::INT8, "id", false),
            column(FIRST_USER_OID + 1, "email", true),
        ];
        let found = differences(&e, &accepted(&[oid::INT4], &cols), &name);
        assert_eq!(
            found,
            [
                "parameter $1 is now int4, compiled as int8",
                "column `id` of `users` is now nullable, compiled as NOT NULL",
                "column `email` of `users` is now citext, compiled as text",
                "column `email` of `users` is now NOT NULL, compiled as nullable",
            ]
        );
        let found = differences(&e, &accepted(&[oid::INT8], &cols[..1]), &name);
        assert_eq!(found, ["it now returns 1 columns, compiled with 2"]);
    }

    #[test]
    fn a_parameter_is_compared_with_what_the_server_infers() {
        let c = compiled(&[]);
        let e = Expectation::from(&c);
        let cols = [
            column(oid::INT8, "id", true),
            column(oid::TEXT, "email", true),
        ];
        // Parsed with the compiled types the statement still works; the schema says uuid.
        let found = differences(&e, &accepted(&[oid::UUID], &cols), &name);
        assert_eq!(found, ["parameter $1 is now uuid, compiled as int8"]);
        // The server cannot infer it alone: nothing to compare.
        let unknown = Described::Accepted {
            inferred: None,
            params: vec![oid::INT8],
            columns: cols.to_vec(),
        };
        assert!(differences(&e, &unknown, &name).is_empty());
        // Refused with the compiled types: both are said.
        let refused = Described::Refused {
            message: "operator does not exist: uuid = bigint".into(),
            inferred: Some(vec![oid::UUID]),
        };
        assert_eq!(
            differences(&e, &refused, &name),
            [
                "parameter $1 is now uuid, compiled as int8",
                "the server refuses it (operator does not exist: uuid = bigint)",
            ]
        );
    }

    #[test]
    fn the_report_names_each_difference_with_its_file_and_line() {
        let c = compiled(&[]);
        let e = [Expectation::from(&c)];
        let drifts = [Drift {
            index: 0,
            differences: vec!["parameter $1 is now uuid, compiled as int8".into()],
        }];
        assert_eq!(
            report(&e, &drifts),
            "`SELECT id, email FROM users WHERE id = $1`:\n  parameter $1 is now uuid, \
             compiled as int8: src/users.rs:42\n"
        );
    }
}
