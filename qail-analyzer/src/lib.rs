//! qail-analyzer: SQL text and a [`Snapshot`] in, typed parameters and
//! result columns (or diagnostics with byte ranges into the SQL) out. No database is consulted.
//!
//! What it understands: SELECT with every join kind, LATERAL, derived tables and VALUES lists
//! with column aliases, CTEs (recursive ones with column lists, data-modifying ones), set
//! operations typed with PostgreSQL's `select_common_type`, scalar/EXISTS/IN/ANY/ALL
//! subqueries, GROUP BY (positions, aliases, primary-key dependency, GROUPING SETS, ROLLUP,
//! CUBE), window functions and named windows, FILTER, ordered-set aggregates; INSERT (VALUES,
//! SELECT, ON CONFLICT), UPDATE … FROM, DELETE … USING, RETURNING; a catalog of several
//! hundred built-in functions and operators resolved with PostgreSQL's overload rules,
//! functions in FROM (`generate_series`, `unnest … WITH ORDINALITY`, `jsonb_each`,
//! `jsonb_to_recordset(…) AS x(a int, …)`), user functions from the snapshot (STRICT, SETOF,
//! RETURNS TABLE), enums, domains (as their base type; NOT NULL domains are non-null),
//! composite types and their fields, ranges, arrays of all of these, and explicit casts,
//! which must have a path in PostgreSQL; the system catalogs and `information_schema` views
//! (built in, `pg_catalog` first on the search_path); extensions' base types, operators, casts
//! and aggregates from the snapshot (citext's `=` and `ILIKE`, pg_trgm's `%`, hstore's `->`);
//! `UPDATE … SET arr[$1] = …` and `SET col.field = …`. Inside record-valued columns (`ROW(…)`, whole-row
//! references, composite types, `array_agg` / `ARRAY(SELECT …)` of them) it reports each
//! field's type and nullability and each array's element nullability as a [`Shape`].
//!
//! Layout: `query/` analyzes statements (SELECT, FROM, grouping, INSERT, UPDATE, DELETE);
//! `expr/` types expressions (operators, predicates, casts, subqueries, constructors);
//! `call/` types function calls against the built-in catalog and the snapshot's functions;
//! `types/` holds the built-in types, casts, type names as written, overload resolution and
//! record shapes;
//! `scope`, `names`, `nullability`, `ctx` and `diag` are shared by all of them;
//! [`capture`] reads the `qail!` dialect (`{name}` captures, optional clauses, lists) into
//! plain SQL, for the macro and the language server alike.
//!
//! ```
//! use qail_schema::Snapshot;
//! let snapshot: Snapshot = serde_json::from_str(include_str!("../tests/fixtures/app.schema.json")).unwrap();
//! let a = qail_analyzer::analyze("SELECT id, name FROM harbors WHERE country = $1", &snapshot).unwrap();
//! assert_eq!(a.params[0].ty.name, "text");
//! assert_eq!(a.columns[1].name, "name");
//! assert!(!a.columns[1].nullable);
//! ```

mod call;
pub mod capture;
mod ctx;
mod diag;
mod dialect;
mod expr;
#[cfg(test)]
mod fuzz;
mod keywords;
mod names;
mod nullability;
mod parse;
mod query;
mod rewrite;
pub mod rust_type;
mod scope;
mod set_aside;
mod types;
mod views;
pub mod wire;

use std::ops::Range;

pub use diag::{Diagnostic, render};
pub use dialect::quote_ident;
pub use types::shape::{Shape, ShapeField, is_json};
pub use types::type_oid;
pub use views::{import_ddl, view_columns};

use qail_schema::snapshot::{Snapshot, TypeRef};

/// What a statement is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatementKind {
    /// `SELECT` (also `VALUES`, set operations).
    Select,
    /// `INSERT`.
    Insert,
    /// `UPDATE`.
    Update,
    /// `DELETE`.
    Delete,
    /// `MERGE`.
    Merge,
}

/// The result of analyzing one statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Analysis {
    /// Parameters `$1..$n`, in order.
    pub params: Vec<Param>,
    /// Result columns, in order; empty when the statement returns no rows.
    pub columns: Vec<OutputColumn>,
    /// Whether the statement returns rows (a SELECT, or DML with RETURNING).
    pub returns_rows: bool,
    /// The statement's kind.
    pub kind: StatementKind,
    /// Whether running the statement may change session state that outlives its
    /// transaction, which a pool's session reset must undo before the connection's next
    /// user: true for a write (INSERT, UPDATE, DELETE, MERGE, also in a WITH: a column
    /// default's `nextval` sets `currval` and `lastval`, and triggers and rules, which the
    /// snapshot does not list, run any function), a call of a built-in with session effects
    /// (`set_config`, the session advisory lock functions, `nextval`, `setval`…) and a call
    /// of any function that is not built in (its body is not known), and a read of a view or
    /// table the snapshot marks ([`Relation::changes_session`]: its query or row-level
    /// security policy calls such a function). Not seen: functions a domain's CHECK calls, and
    /// those behind an operator or a cast the snapshot's schema or extensions define.
    ///
    /// [`Relation::changes_session`]: qail_schema::snapshot::Relation::changes_session
    pub changes_session: bool,
}

/// A parameter `$n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// The type PostgreSQL infers for it.
    pub ty: TypeRef,
    /// Whether passing NULL is meaningful here (a nullable INSERT/SET target, `IS NOT DISTINCT
    /// FROM $1`, `$1 IS NULL`, a COALESCE argument); otherwise NULL would only make the
    /// predicate NULL, so the parameter is typed as required.
    pub nullable: bool,
    /// The NOT NULL column this parameter is the value of, in an INSERT (`VALUES ($1)`,
    /// `SELECT $1`) or an UPDATE (`SET col = $1`): why it cannot be NULL.
    pub column: Option<String>,
}

/// Where a result column comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ColumnSource {
    /// Schema of the table or view.
    pub schema: String,
    /// Table or view name.
    pub table: String,
    /// Column name.
    pub column: String,
}

/// A result column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputColumn {
    /// Column name as PostgreSQL reports it, without a `!`, `?` or `: Type` alias suffix.
    pub name: String,
    /// PostgreSQL type.
    pub ty: TypeRef,
    /// Whether the column can be NULL.
    pub nullable: bool,
    /// The table column it is taken from unchanged, if any.
    pub source: Option<ColumnSource>,
    /// Rust type from an alias `AS "name: path::Type"`.
    pub rust_type: Option<String>,
    /// Why the column is nullable (empty when it is not), e.g. `right side of LEFT JOIN
    /// harbors AS origin`.
    pub why: Vec<String>,
    /// The bytes of the SQL the column comes from: its select-list (or RETURNING) item with
    /// the alias, the `*` it was expanded from, the first row's expression of a VALUES list,
    /// the first branch's item of a set operation. Diagnostics about the column point here.
    pub range: Range<usize>,
    /// What is known inside the value when it is a record or an array of records (the
    /// server reports only `record` / `record[]`): see [`Shape`].
    pub shape: Option<Shape>,
}

/// Analyzes one SQL statement against a snapshot.
///
/// Returns the parameter and column types, or every diagnostic found (each with a byte
/// range into `sql` and a fix; print them with [`render`]).
pub fn analyze(sql: &str, snapshot: &Snapshot) -> Result<Analysis, Vec<Diagnostic>> {
    if let Some(too_deep) = call_nesting_limit(sql) {
        return Err(vec![too_deep]);
    }
    let mut rewritten = rewrite::rewrite(sql);
    let mut aside = set_aside::set_aside(&mut rewritten.sql);
    let statements = parse::statements(&rewritten.sql, &mut aside.json_table)
        .map_err(|e| vec![diag::syntax_error(sql, &e.to_string())])?;
    let statement = match statements.as_slice() {
        [one] => one,
        [] => {
            return Err(vec![whole(
                sql,
                "empty statement",
                "write one SQL statement",
            )]);
        }
        _ => {
            return Err(vec![whole(
                sql,
                "more than one statement",
                "write one statement per query; use batch_execute for scripts",
            )]);
        }
    };
    let target = snapshot.target().map_err(|e| {
        vec![whole(
            sql,
            &e,
            "write a range such as \"15..=18\" or \"16\"",
        )]
    })?;
    let mut cx = ctx::Ctx::new(sql, snapshot, target);
    for (range, form) in &rewritten.numbers {
        // Note: PostgreSQL 16 added underscores and 0x/0o/0b integers (SQL:2023).
        let since = qail_catalog::Versions::span(16, qail_catalog::NEWEST);
        if !since.covers(target) {
            let (message, hint) = diag::version_gap(form, since, target);
            cx.error(range.clone(), message, Some(hint));
        }
    }
    cx.variadic = rewritten.variadic;
    cx.json_predicates = rewritten.json_predicates.clone();
    cx.conflict_predicates = rewritten.conflict_predicates.iter().cloned().collect();
    cx.element_targets = rewritten.element_targets.clone();
    cx.keyed_targets = rewritten.keyed_targets.clone();
    cx.overriding = rewritten.overriding.clone();
    cx.aside = aside;
    let out = query::statement(&mut cx, statement);
    for bound in &rewritten.subscripts {
        type_set_aside(&mut cx, bound.clone(), "int4", "an array subscript");
    }
    for s in &rewritten.samples {
        sample(&mut cx, s);
    }
    let analysis = cx.finish(out)?;
    match unseen_parameter(sql, analysis.params.len()) {
        Some(unseen) => Err(vec![unseen]),
        None => Ok(analysis),
    }
}

/// The first `$n` written in `sql` (outside quotes and comments) beyond the `seen`
/// parameters the analysis typed: a parameter in a part of the statement the analyzer did
/// not read. Refused, so no statement is ever sent with fewer parameters than it has.
fn unseen_parameter(sql: &str, seen: usize) -> Option<Diagnostic> {
    use qail_schema::script::lex::{block_comment_end, dollar_quote_end, quoted_end};
    let b = sql.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let next = match b[i] {
            b'\'' => quoted_end(b, i, b'\'', i > 0 && matches!(b[i - 1], b'e' | b'E')),
            b'"' => quoted_end(b, i, b'"', false),
            b'-' if b.get(i + 1) == Some(&b'-') => b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |n| i + n),
            b'/' if b.get(i + 1) == Some(&b'*') => block_comment_end(b, i),
            b'$' => match dollar_quote_end(sql, i) {
                Some(end) => end,
                None => {
                    let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                    let n: usize = sql[i + 1..i + 1 + digits].parse().unwrap_or(0);
                    if n > seen {
                        return Some(Diagnostic {
                            message: format!(
                                "parameter ${n} is in a part of the statement qail does not type"
                            ),
                            range: i..i + 1 + digits,
                            hint: Some(
                                "write the value in a clause qail reads, or report this form to \
                                 the qail project"
                                    .into(),
                            ),
                        });
                    }
                    i + 1 + digits
                }
            },
            c if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 => {
                // Note: `a$1` is one identifier, not a parameter.
                i + b[i..]
                    .iter()
                    .take_while(|c| {
                        c.is_ascii_alphanumeric() || **c == b'_' || **c == b'$' || **c >= 0x80
                    })
                    .count()
            }
            _ => i + 1,
        };
        i = next.max(i + 1);
    }
    None
}

/// A TABLESAMPLE clause removed before parsing: its method must exist (`tsm_system_rows`'s
/// and `tsm_system_time`'s only with the extension in the snapshot), and its argument and
/// seed are typed as the method's parameters (`real` for SYSTEM and BERNOULLI, `bigint` for
/// SYSTEM_ROWS, `double precision` for SYSTEM_TIME and REPEATABLE), as the server does.
fn sample(cx: &mut ctx::Ctx, s: &rewrite::Sample) {
    let method = cx.sql[s.method.clone()].to_ascii_lowercase();
    let (ty, extension) = match method.as_str() {
        "system" | "bernoulli" => ("float4", None),
        "system_rows" => ("int8", Some("tsm_system_rows")),
        "system_time" => ("float8", Some("tsm_system_time")),
        _ => {
            cx.error(
                s.method.clone(),
                format!("tablesample method {method} does not exist"),
                Some(
                    "use SYSTEM or BERNOULLI (or SYSTEM_ROWS, SYSTEM_TIME with their extensions)"
                        .into(),
                ),
            );
            return;
        }
    };
    if let Some(ext) = extension
        && !cx.snap.extensions.iter().any(|e| e.name == ext)
    {
        cx.error(
            s.method.clone(),
            format!("tablesample method {method} does not exist"),
            Some(format!(
                "it comes with the extension {ext}: CREATE EXTENSION {ext}, then run `cargo qail schema pull`"
            )),
        );
        return;
    }
    if s.args.len() != 1 || s.args[0].is_empty() {
        let n = s.args.iter().filter(|a| !a.is_empty()).count();
        cx.error(
            s.range.clone(),
            format!("tablesample method {method} requires 1 argument, not {n}"),
            Some("write one argument in the parentheses".into()),
        );
        return;
    }
    type_set_aside(cx, s.args[0].clone(), ty, "a TABLESAMPLE argument");
    if let Some(seed) = &s.seed {
        type_set_aside(cx, seed.clone(), "float8", "a REPEATABLE seed");
    }
}

/// Types an expression removed before parsing (a subscript of a SET target, `SET
/// scores[$1] = …`, or a TABLESAMPLE argument) as the type `ty` PostgreSQL gives it. Parsed
/// from the SQL with everything else blanked, so its ranges stay true.
fn type_set_aside(cx: &mut ctx::Ctx, bound: Range<usize>, ty: &str, what: &str) {
    match cx.parse_aside(&bound) {
        Ok(e) => {
            let want = types::builtin(ty);
            expr::expect(
                cx,
                &scope::Scope::default(),
                &e,
                &want,
                expr::Fit::Implicit,
                what,
            );
        }
        Err(e) => cx.error(
            bound,
            format!("{what}: {e}"),
            Some(format!("write an expression of type {ty}")),
        ),
    }
}

/// How deep function calls may nest. Note: sqlparser retries a call's arguments another way
/// when they fail to parse, so a syntax error inside calls nested `n` deep costs about `2^n`
/// attempts (0.3 s at 16, 5 s at 20, in a release build); deeper nesting is refused before it
/// is parsed, so a typo never stalls a build.
const MAX_CALL_NESTING: usize = 16;

/// A call nested deeper than [`MAX_CALL_NESTING`] (a `(` right after a name, outside quotes
/// and comments), reported at its `(`.
fn call_nesting_limit(sql: &str) -> Option<Diagnostic> {
    use qail_schema::script::lex::{block_comment_end, dollar_quote_end, quoted_end};
    let b = sql.as_bytes();
    let mut open: Vec<bool> = Vec::new();
    let mut calls = 0;
    let mut after_name = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = match c {
            b'\'' => quoted_end(b, i, b'\'', false),
            b'"' => quoted_end(b, i, b'"', false),
            b'$' => dollar_quote_end(sql, i).unwrap_or(i + 1),
            b'-' if b.get(i + 1) == Some(&b'-') => b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |n| i + n),
            b'/' if b.get(i + 1) == Some(&b'*') => block_comment_end(b, i),
            b'(' => {
                open.push(after_name);
                calls += usize::from(after_name);
                if calls > MAX_CALL_NESTING {
                    return Some(Diagnostic {
                        message: format!(
                            "function calls nest more than {MAX_CALL_NESTING} deep here"
                        ),
                        range: i..i + 1,
                        hint: Some(
                            "compute the inner calls in a subquery or a CTE and refer to its \
                             columns, or close a parenthesis left open"
                                .into(),
                        ),
                    });
                }
                i + 1
            }
            b')' => {
                if open.pop() == Some(true) {
                    calls -= 1;
                }
                i + 1
            }
            _ => i + 1,
        };
        if !c.is_ascii_whitespace() {
            after_name = c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
        }
        i = next.max(i + 1);
    }
    None
}

fn whole(sql: &str, message: &str, hint: &str) -> Diagnostic {
    Diagnostic {
        message: message.into(),
        range: 0..sql.len(),
        hint: Some(hint.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A typo inside calls nested deeper than the limit is refused at once, not parsed for
    /// minutes; nesting up to the limit still analyzes.
    #[test]
    fn calls_nested_too_deep_are_refused_before_parsing() {
        let deep = format!("SELECT {}1{}", "abs(".repeat(17), ")".repeat(17));
        let errors = analyze(&deep, &Snapshot::new()).unwrap_err();
        assert!(
            errors[0].message.contains("nest more than 16"),
            "{errors:?}"
        );
        assert_eq!(errors[0].range.start, "SELECT ".len() + 16 * 4 + 3);
        let unclosed = format!("SELECT {}x y", "f(a, ".repeat(38));
        assert!(analyze(&unclosed, &Snapshot::new()).is_err());
        let fine = format!("SELECT {}1{} AS n", "abs(".repeat(16), ")".repeat(16));
        assert!(analyze(&fine, &Snapshot::new()).is_ok());
        let quoted = format!("SELECT '{}' AS t", "f(".repeat(40));
        assert!(analyze(&quoted, &Snapshot::new()).is_ok());
    }

    /// A `$n` in a clause the analyzer does not type is refused at that `$n`, never dropped
    /// (the server would count it); `$n` inside strings, comments and names is no parameter.
    #[test]
    fn a_parameter_the_analysis_did_not_see_is_refused() {
        assert!(unseen_parameter("SELECT $1 -- $2\n, '$3', \"$4\", a$5, $$ $6 $$", 1).is_none());
        let sql = "SELECT 1 FROM t WHERE a = $1 /* $9 */ LIMIT $2";
        let unseen = unseen_parameter(sql, 1).expect("$2 was not seen");
        assert_eq!(&sql[unseen.range], "$2");
        assert!(unseen_parameter(sql, 2).is_none());
    }

    #[test]
    fn deep_nesting_is_a_diagnostic_not_a_crash() {
        let sql = format!("SELECT {}1{}", "(".repeat(500), ")".repeat(500));
        let errors = analyze(&sql, &Snapshot::new()).unwrap_err();
        assert!(
            errors[0].message.contains("recursion limit"),
            "{:?}",
            errors[0]
        );
    }
}
