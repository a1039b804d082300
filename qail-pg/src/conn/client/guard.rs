//! What a shared client refuses: statements that need the connection to themselves.
//!
//! A transaction block would take in every other task's queries written after its BEGIN;
//! COPY streams data the next query cannot interleave with; LISTEN delivers notifications
//! to whoever reads next; DISCARD and DEALLOCATE drop the statements the other tasks' queries
//! are bound to. Such a statement is refused before anything is written, with an error
//! saying to take a connection from a pool. A statement that opens a transaction block in a
//! way this check misses ends the client's session instead (see [`io`](super::io)).

use crate::error::{Error, Kind};

/// The first keywords refused, upper case.
const REFUSED: &[&str] = &[
    "BEGIN",
    "START",
    "COMMIT",
    "END",
    "ROLLBACK",
    "ABORT",
    "SAVEPOINT",
    "RELEASE",
    "PREPARE",
    "COPY",
    "LISTEN",
    "UNLISTEN",
    "DECLARE",
    "DISCARD",
    "DEALLOCATE",
];

/// Refuses `sql` when it needs a connection to itself.
pub(crate) fn check(sql: &str) -> Result<(), Error> {
    let word = first_keyword(sql);
    match REFUSED.iter().find(|r| r.eq_ignore_ascii_case(word)) {
        None => Ok(()),
        Some(refused) => Err(Error::new(
            Kind::Usage,
            format!(
                "{refused} needs a connection to itself, and a shared Client runs other tasks' \
                 queries on its connection between yours; take a connection from a Pool \
                 (pool.acquire()) and use begin(), copy_in or listen there"
            ),
        )),
    }
}

/// The first word of `sql`, after blanks, comments and opening parentheses.
fn first_keyword(sql: &str) -> &str {
    let mut rest = sql;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
        if let Some(after) = rest.strip_prefix("--") {
            rest = after.split_once('\n').map_or("", |(_, next)| next);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = skip_block_comment(after);
        } else {
            break;
        }
    }
    let end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    &rest[..end]
}

/// What follows a block comment whose `/*` was just read; block comments nest.
fn skip_block_comment(mut rest: &str) -> &str {
    let mut depth = 1usize;
    while depth > 0 {
        let Some(close) = rest.find("*/") else {
            return "";
        };
        match rest.find("/*") {
            Some(open) if open < close => {
                depth += 1;
                rest = &rest[open + 2..];
            }
            _ => {
                depth -= 1;
                rest = &rest[close + 2..];
            }
        }
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transaction_copy_and_listen_are_refused() {
        for sql in [
            "BEGIN",
            "  begin isolation level serializable",
            "START TRANSACTION",
            "-- a comment\ncommit",
            "/* a /* nested */ comment */ ROLLBACK",
            "COPY t FROM STDIN",
            "listen jobs",
            "DISCARD ALL",
        ] {
            let e = check(sql).unwrap_err();
            assert!(e.to_string().contains("pool.acquire()"), "{sql}: {e}");
        }
    }

    #[test]
    fn queries_pass() {
        for sql in [
            "SELECT 1",
            "(SELECT 1) UNION (SELECT 2)",
            "WITH x AS (SELECT 1) SELECT * FROM x",
            "INSERT INTO begin_log VALUES (1)",
            "UPDATE t SET a = 1",
            "/* unclosed",
            "",
        ] {
            check(sql).unwrap();
        }
    }
}
