//! Lock and rewrite hazards of a migration's statements on tables that already hold rows
//! (PostgreSQL 13 and later: a non-volatile `ADD COLUMN … DEFAULT` is free since 11).

use std::ops::Range;

use qail_schema::Snapshot;
use qail_schema::snapshot::{RelationKind, Volatility};

/// A hazard: where in the statement, what happens, and what to do instead.
pub(crate) struct Hazard {
    pub(crate) range: Range<usize>,
    pub(crate) message: String,
    pub(crate) hint: String,
}

/// A word of a statement, upper-cased (quoted identifiers keep their case), and its bytes.
struct Word {
    text: String,
    range: Range<usize>,
}

/// Built-in functions whose value changes per row: a default calling one rewrites the table.
const VOLATILE: &[&str] = &[
    "random",
    "gen_random_uuid",
    "uuid_generate_v1",
    "uuid_generate_v4",
    "clock_timestamp",
    "timeofday",
    "nextval",
    "txid_current",
];

/// The hazards of `stmt`; `before` is the schema before the pending migrations (its tables
/// hold rows; those created by the pending migrations are new and empty).
pub(crate) fn find(stmt: &str, before: &Snapshot) -> Vec<Hazard> {
    let w = words(stmt);
    let is = |i: usize, kw: &str| w.get(i).is_some_and(|x| x.text == kw);
    let mut out = Vec::new();
    let existing = |i: usize| -> Option<String> {
        let (schema, name, _) = name_at(&w, i)?;
        let rel = before.relation(schema.as_deref(), &name)?;
        (rel.kind == RelationKind::Table).then(|| format!("{}.{}", rel.schema, rel.name))
    };
    if is(0, "CREATE") {
        let at = if is(1, "UNIQUE") { 2 } else { 1 };
        if is(at, "INDEX") && !is(at + 1, "CONCURRENTLY") {
            let on = (at..w.len()).find(|&i| is(i, "ON"));
            let table = on.and_then(|i| existing(if is(i + 1, "ONLY") { i + 2 } else { i + 1 }));
            if let Some(table) = table {
                out.push(Hazard {
                    range: w[0].range.start..w[at].range.end,
                    message: format!(
                        "CREATE INDEX without CONCURRENTLY on {table}, which holds rows: writes \
                         to it wait until the index is built"
                    ),
                    hint: "use CREATE INDEX CONCURRENTLY, alone in a file whose first line is \
                           `-- qail:no-transaction`"
                        .to_owned(),
                });
            }
        }
        return out;
    }
    if !(is(0, "ALTER") && is(1, "TABLE")) {
        return out;
    }
    let mut i = 2;
    if is(i, "IF") && is(i + 1, "EXISTS") {
        i += 2;
    }
    if is(i, "ONLY") {
        i += 1;
    }
    let Some(table) = existing(i) else {
        return out;
    };
    for j in i..w.len() {
        let here = w[j].range.clone();
        if is(j, "TYPE") && (is(j - 1, "DATA") || is(j - 2, "COLUMN") || is(j - 2, "ALTER")) {
            out.push(Hazard {
                range: here.clone(),
                message: format!(
                    "changing a column's type rewrites {table} and its indexes under an ACCESS \
                     EXCLUSIVE lock: reads and writes wait (unless the types are binary \
                     coercible, such as a wider varchar)"
                ),
                hint: "add a column of the new type, backfill it in batches, switch the \
                       readers, then drop the old one"
                    .to_owned(),
            });
        }
        if is(j, "SET") && is(j + 1, "NOT") && is(j + 2, "NULL") {
            out.push(Hazard {
                range: here.start..w[j + 2].range.end,
                message: format!(
                    "SET NOT NULL scans all of {table} under an ACCESS EXCLUSIVE lock"
                ),
                hint: "first ADD CONSTRAINT … CHECK (col IS NOT NULL) NOT VALID, then VALIDATE \
                       CONSTRAINT in a later migration; SET NOT NULL then uses it and skips the \
                       scan"
                    .to_owned(),
            });
        }
        if is(j, "ADD") {
            // The clause ends at the next top-level comma: the statement's words up to the
            // next ADD/ALTER/DROP.
            let end = (j + 1..w.len())
                .find(|&k| ["ADD", "ALTER", "DROP"].contains(&w[k].text.as_str()))
                .unwrap_or(w.len());
            let clause = &w[j..end];
            let has = |kw: &str| clause.iter().any(|x| x.text == kw);
            let constraint = has("FOREIGN") || has("CHECK");
            let column_def = !has("CONSTRAINT") && !has("PRIMARY") && !has("UNIQUE") && !constraint;
            if constraint && !(has("NOT") && has("VALID")) {
                let what = if has("FOREIGN") {
                    "a foreign key"
                } else {
                    "a CHECK constraint"
                };
                out.push(Hazard {
                    range: here.start..clause[clause.len() - 1].range.end.min(here.end + 40),
                    message: format!(
                        "adding {what} checks every row of {table} while writes to it wait"
                    ),
                    hint: "add it NOT VALID, then VALIDATE CONSTRAINT in a later migration \
                           (which lets writes go on)"
                        .to_owned(),
                });
            }
            if column_def {
                let volatile = clause
                    .windows(2)
                    .find(|p| p[0].text == "DEFAULT" && is_volatile(&p[1].text, before));
                let serial = clause.iter().find(|x| {
                    ["SERIAL", "BIGSERIAL", "SMALLSERIAL", "STORED"].contains(&x.text.as_str())
                });
                if let Some(at) = volatile.map(|p| &p[1]).or(serial) {
                    out.push(Hazard {
                        range: at.range.clone(),
                        message: format!(
                            "a column whose default is volatile (or generated and stored) \
                             rewrites {table} under an ACCESS EXCLUSIVE lock"
                        ),
                        hint: "add the column without a default (or with a constant one), set \
                               the default after, and backfill in batches"
                            .to_owned(),
                    });
                }
            }
        }
    }
    out
}

fn is_volatile(word: &str, snap: &Snapshot) -> bool {
    let name = word.to_lowercase();
    VOLATILE.contains(&name.as_str())
        || snap
            .functions
            .iter()
            .any(|f| f.name == name && f.volatility == Volatility::Volatile)
}

/// The (maybe qualified) name at word `i`: schema, name, index after it.
fn name_at(w: &[Word], i: usize) -> Option<(Option<String>, String, usize)> {
    let first = w.get(i)?;
    let fold = |x: &Word| {
        if x.text.starts_with('"') {
            x.text.trim_matches('"').to_owned()
        } else {
            x.text.to_lowercase()
        }
    };
    match w.get(i + 1) {
        Some(second) if second.text == "." => {
            let third = w.get(i + 2)?;
            Some((Some(fold(first)), fold(third), i + 3))
        }
        _ => Some((None, fold(first), i + 1)),
    }
}

/// The words and dots of `sql` outside strings and comments (`(` and `,` are skipped).
fn words(sql: &str) -> Vec<Word> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'-' && b.get(i + 1) == Some(&b'-') {
            i = sql[i..].find('\n').map_or(b.len(), |n| i + n);
        } else if c == b'\'' {
            i = qail_schema::script::lex::quoted_end(b, i, b'\'', false);
        } else if c == b'$' {
            i = qail_schema::script::lex::dollar_quote_end(sql, i).unwrap_or(i + 1);
        } else if c == b'"' {
            let end = qail_schema::script::lex::quoted_end(b, i, b'"', false);
            out.push(Word {
                text: sql[i..end].to_owned(),
                range: i..end,
            });
            i = end;
        } else if c == b'.' {
            out.push(Word {
                text: ".".to_owned(),
                range: i..i + 1,
            });
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$') {
                i += 1;
            }
            out.push(Word {
                text: sql[start..i].to_uppercase(),
                range: start..i,
            });
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    fn found(ddl: &str, stmt: &str) -> Vec<String> {
        let (snap, _) = qail_schema::ddl::from_sql(&[("m.sql".to_owned(), ddl.to_owned())]);
        super::find(stmt, &snap)
            .into_iter()
            .map(|h| stmt[h.range].to_owned())
            .collect()
    }

    #[test]
    fn hazards_on_existing_tables_only() {
        let ddl = "CREATE TABLE users (id int PRIMARY KEY, email text);";
        assert_eq!(
            found(ddl, "CREATE INDEX users_email ON users (email)"),
            ["CREATE INDEX"]
        );
        assert!(
            found(
                ddl,
                "CREATE INDEX CONCURRENTLY users_email ON users (email)"
            )
            .is_empty()
        );
        assert!(found(ddl, "CREATE INDEX t_a ON fresh (a)").is_empty());
        assert_eq!(
            found(ddl, "ALTER TABLE users ALTER COLUMN email TYPE varchar(80)"),
            ["TYPE"]
        );
        assert_eq!(
            found(ddl, "ALTER TABLE users ALTER email SET NOT NULL"),
            ["SET NOT NULL"]
        );
        assert_eq!(
            found(
                ddl,
                "ALTER TABLE users ADD COLUMN token uuid DEFAULT gen_random_uuid()"
            ),
            ["gen_random_uuid"]
        );
        assert!(
            found(
                ddl,
                "ALTER TABLE users ADD COLUMN at timestamptz DEFAULT now()"
            )
            .is_empty()
        );
        assert_eq!(
            found(ddl, "ALTER TABLE users ADD CONSTRAINT c CHECK (id > 0)").len(),
            1
        );
        assert!(
            found(
                ddl,
                "ALTER TABLE users ADD CONSTRAINT c CHECK (id > 0) NOT VALID"
            )
            .is_empty()
        );
    }
}
