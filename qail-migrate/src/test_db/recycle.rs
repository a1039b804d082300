//! Recycling a passed test's database instead of dropping it: emptied back to what a fresh
//! clone of its template is, then renamed `qail_free_<crate>_<hash>_<id>` for the next test
//! of the same template to claim by renaming it to its own name.
//!
//! A clone creates ~900 files and ~12 MB of WAL, and a drop unlinks them again (about 1.2 s
//! and 0.9 s on the development machine's disk within the 200-test suite, `bench/test-db`);
//! emptying the tables a test wrote creates none.
//!
//! Recycling, in the dropper, in the test's slot:
//! 1. the test's other connections are ended and the database is renamed `qail_r_<id>`, so
//!    that nothing that still knows its name reconnects (it keeps its passed mark, so a sweep
//!    drops it if the process dies now; the dropper's claim keeps other sweeps off);
//! 2. in one transaction on it: its catalogs must be the template's (no catalog row newer
//!    than the template and the same row counts, else the same catalog fingerprint), its
//!    database fingerprint the template's record ([`super::pristine`]), and no prepared
//!    transaction or replication slot may hold it; the tables the template holds no rows in
//!    and that hold rows now (one query of `EXISTS` probes) are emptied (`DELETE`, or
//!    `TRUNCATE … CASCADE` where a trigger or rule would see the `DELETE`; see
//!    [`empty_tables`]), every sequence whose state differs is set back with `setval`, and the
//!    tables the template holds rows in must hash as they did. Any difference rolls the
//!    transaction back, and the database is dropped as before;
//! 3. under a lock per template, if fewer than N (the slot count) free databases of the
//!    template exist, its mark is removed and it is renamed `qail_free_…`; else it is dropped.
//!
//! A test claims a free database with `ALTER DATABASE … RENAME TO <its own name>`: exactly
//! one claimant's rename succeeds, the others' fail (`does not exist`) and try the next, then
//! clone. A free database is never marked passed, so no sweep drops it; the template's next
//! build (migrations changed) drops its predecessor's free databases with it.
//!
//! `QAIL_TEST_RECYCLE=0` turns recycling off: passed databases are dropped and none is
//! claimed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use qail_pg::Connection;

use super::pristine::{self, Kind, Pristine, Relation};
use super::{config, ident, trace, unique};

/// The advisory-lock key space of the count of a template's free databases.
const FREE_KEY: i32 = 0x7161_0066;

/// Each template's record, read once per process (`None`: the template has none).
static RECORDS: Mutex<Option<HashMap<String, Option<Arc<Pristine>>>>> = Mutex::new(None);

/// Whether recycling is on: unless `QAIL_TEST_RECYCLE` is `0` (or `false`, `off`).
pub(crate) fn enabled() -> bool {
    std::env::var("QAIL_TEST_RECYCLE").map_or(true, |v| {
        !matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "0" | "false" | "off"
        )
    })
}

/// The name prefix of template `tpl`'s free databases: `qail_free_<crate>_<hash>_`.
pub(crate) fn free_prefix(tpl: &str) -> String {
    let rest = tpl.strip_prefix("qail_tpl_").unwrap_or(tpl);
    format!("qail_free_{rest}_")
}

/// Renames one of template `tpl`'s free databases to `name`; whether one was claimed.
pub(crate) async fn claim(admin: &mut Connection, tpl: &str, name: &str) -> bool {
    let prefix = free_prefix(tpl);
    let rows = match admin
        .query(
            "SELECT datname::text FROM pg_database WHERE starts_with(datname::text, $1) \
             ORDER BY random()",
            &[&prefix],
        )
        .await
    {
        Ok(rows) => rows,
        Err(e) => {
            trace(format_args!("listing free databases: {e}"));
            return false;
        }
    };
    for row in rows {
        let free: String = row.get(0);
        let rename = format!("ALTER DATABASE {} RENAME TO {}", ident(&free), ident(name));
        // Note: another claimant renamed it first ("does not exist"), or something is
        // connected to it; the next one, then.
        match admin.batch_execute(&rename).await {
            Ok(()) => {
                trace(format_args!("claimed {free} as {name}"));
                return true;
            }
            Err(e) => trace(format_args!("claiming {free}: {e}")),
        }
    }
    false
}

/// What became of a passed database.
pub(crate) enum Outcome {
    /// Recycled: free for the next test.
    Free,
    /// Not recycled; it is now called this, for the caller to drop.
    Drop(String),
}

/// Recycles passed database `name` of template `tpl` (see the module docs), at most `bound`
/// free databases per template. `admin` is the slot's connection to the maintenance database
/// and holds the dropper's claim on `name`.
pub(crate) async fn recycle(
    admin: &mut Connection,
    server: &str,
    name: &str,
    tpl: &str,
    bound: usize,
) -> Outcome {
    let started = Instant::now();
    let Some(record) = record(admin, tpl).await else {
        trace(format_args!("not recycling {name}: {tpl} has no record"));
        return Outcome::Drop(name.to_owned());
    };
    if !record.recyclable {
        return Outcome::Drop(name.to_owned());
    }
    if free_count(admin, tpl).await >= bound {
        return Outcome::Drop(name.to_owned());
    }
    end_sessions(admin, name).await;
    let work = format!("qail_r_{}", unique());
    let rename = format!("ALTER DATABASE {} RENAME TO {}", ident(name), ident(&work));
    if let Err(e) = admin.batch_execute(&rename).await {
        trace(format_args!("not recycling {name}: {e}"));
        return Outcome::Drop(name.to_owned());
    }
    let aside = started.elapsed();
    match reset(server, &work, &record).await {
        Ok(None) => {}
        Ok(Some(reason)) => {
            trace(format_args!("not recycling {name}: {reason}"));
            return Outcome::Drop(work);
        }
        Err(e) => {
            trace(format_args!("not recycling {name}: {e}"));
            return Outcome::Drop(work);
        }
    }
    let reset_at = started.elapsed();
    end_sessions(admin, &work).await;
    let free = format!("{}{}", free_prefix(tpl), unique());
    match release(admin, tpl, &work, &free, bound).await {
        Ok(true) => {
            trace(format_args!(
                "recycled {name} as {free} in {:?} (renamed aside after {aside:?}, reset \
                 after {reset_at:?})",
                started.elapsed()
            ));
            Outcome::Free
        }
        Ok(false) => Outcome::Drop(work),
        Err(e) => {
            let _ = admin.batch_execute("ROLLBACK").await;
            trace(format_args!("not recycling {name}: {e}"));
            Outcome::Drop(work)
        }
    }
}

/// Template `tpl`'s record, read once per process.
async fn record(admin: &mut Connection, tpl: &str) -> Option<Arc<Pristine>> {
    if let Some(known) = RECORDS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .and_then(|r| r.get(tpl))
    {
        return known.clone();
    }
    let comment: Option<String> = admin
        .query_opt(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1",
            &[&tpl],
        )
        .await
        .ok()??
        .try_get(0)
        .ok()?;
    let record = comment.as_deref().and_then(Pristine::decode).map(Arc::new);
    RECORDS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(tpl.to_owned(), record.clone());
    record
}

/// How many free databases template `tpl` has (an error counts as many).
async fn free_count(admin: &mut Connection, tpl: &str) -> usize {
    admin
        .query_one(
            "SELECT count(*) FROM pg_database WHERE starts_with(datname::text, $1)",
            &[&free_prefix(tpl)],
        )
        .await
        .and_then(|r| r.try_get::<i64>(0))
        .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX))
}

/// Ends the sessions on database `db` (a passed test's connections that are still closing,
/// or a task it left running) and waits until they are gone, a few seconds at most.
async fn end_sessions(admin: &mut Connection, db: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = admin
            .query_one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE datname = $1 AND pid <> pg_backend_pid()",
                &[&db],
            )
            .await
            .and_then(|r| r.try_get::<i64>(0))
            .unwrap_or(0);
        if left == 0 || Instant::now() > deadline {
            return;
        }
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
}

/// Empties database `db` back to `record` in one transaction; `Some(reason)` when it cannot
/// be (the transaction rolled back).
async fn reset(
    server: &str,
    db: &str,
    record: &Pristine,
) -> Result<Option<String>, qail_pg::Error> {
    let started = Instant::now();
    let mut conn = Connection::connect_with(&config(server, Some(db))).await?;
    let connected = started.elapsed();
    conn.batch_execute("BEGIN; SET LOCAL lock_timeout = '5s'; SET LOCAL statement_timeout = '60s'")
        .await?;
    let outcome = reset_in(&mut conn, record).await;
    let checked = started.elapsed();
    let end = match outcome {
        Ok(None) => "COMMIT",
        _ => "ROLLBACK",
    };
    let ended = conn.batch_execute(end).await;
    trace(format_args!(
        "{db}: connected in {connected:?}, checked and emptied after {checked:?}, committed \
         after {:?}",
        started.elapsed()
    ));
    conn.close().await;
    match (outcome, ended) {
        (Ok(None), Err(e)) => Err(e),
        (outcome, _) => outcome,
    }
}

/// The transaction's statements; see [`reset`].
async fn reset_in(
    conn: &mut Connection,
    record: &Pristine,
) -> Result<Option<String>, qail_pg::Error> {
    let (database, held) = pristine::database(conn).await?;
    if held {
        return Ok(Some(
            "a prepared transaction or a replication slot holds it".into(),
        ));
    }
    if database != record.database {
        return Ok(Some("its database settings changed".into()));
    }
    let (counts, newer) = pristine::untouched(conn, &record.xid).await?;
    let quick = counts == record.counts && !newer;
    if !quick && pristine::catalogs(conn).await? != record.catalogs {
        return Ok(Some(
            "its catalogs changed (DDL, privileges or comments)".into(),
        ));
    }
    let relations = pristine::relations(conn).await?;
    let seeded: HashMap<i64, &str> = record
        .seeded
        .iter()
        .map(|(oid, hash)| (*oid, hash.as_str()))
        .collect();
    let empty: Vec<&Relation> = relations
        .iter()
        .filter(|r| r.kind == Kind::Table && !seeded.contains_key(&r.oid))
        .collect();
    let holding = pristine::nonempty(conn, &empty).await?;
    let dirty: Vec<&Relation> = empty
        .iter()
        .zip(holding)
        .filter(|(_, rows)| *rows)
        .map(|(t, _)| *t)
        .collect();
    let how = empty_tables(conn, &dirty).await?;
    let now = pristine::sequences(conn, &relations).await?;
    if now.len() != record.sequences.len() {
        return Ok(Some("its sequences differ".into()));
    }
    let moved: Vec<String> = now
        .iter()
        .zip(&record.sequences)
        .filter(|(now, then)| now != then)
        .map(|(_, then)| format!("({}, {}, {})", then.oid, then.last_value, then.is_called))
        .collect();
    if !moved.is_empty() {
        conn.batch_execute(&format!(
            "SELECT count(pg_catalog.setval(o::oid::regclass, v, c)) FROM (VALUES {}) s(o, v, c)",
            moved.join(", ")
        ))
        .await?;
    }
    let tables: Vec<&Relation> = record
        .seeded
        .iter()
        .filter_map(|(oid, _)| relations.iter().find(|r| r.oid == *oid))
        .collect();
    if tables.len() != record.seeded.len() {
        return Ok(Some("its seeded tables differ".into()));
    }
    let hashes = pristine::contents(conn, &tables).await?;
    let same = hashes
        .iter()
        .zip(&record.seeded)
        .all(|(now, (_, then))| now == then);
    if !same || hashes.len() != record.seeded.len() {
        return Ok(Some(
            "the rows of a table the template holds rows in changed".into(),
        ));
    }
    trace(format_args!(
        "reset: catalogs {}, {} tables emptied{how}, {} sequences set",
        if quick {
            "untouched"
        } else {
            "as the template's"
        },
        dirty.len(),
        moved.len()
    ));
    Ok(None)
}

/// Empties `tables`; says how.
///
/// `DELETE`, the referencing tables first, when no trigger or rule of theirs would run:
/// `TRUNCATE` gives a table and each of its indexes new files, and must take along every
/// table that references one it empties (`CASCADE`), written or not: on the 100-table chain
/// of `tests/test-db/run`, `TRUNCATE t1 CASCADE` took 0.5–0.6 s and made 500 files, the
/// `DELETE`s of the rows a test wrote 1–3 ms and none. A `DELETE` that fails (a cycle of
/// foreign keys) or leaves rows (row-level security) is rolled back to a savepoint, and the
/// tables are truncated instead.
async fn empty_tables(
    conn: &mut Connection,
    tables: &[&Relation],
) -> Result<&'static str, qail_pg::Error> {
    if tables.is_empty() {
        return Ok("");
    }
    let oids: Vec<String> = tables.iter().map(|t| t.oid.to_string()).collect();
    let oids = oids.join(", ");
    let guarded: bool = conn
        .query_one(
            &format!(
                "SELECT EXISTS (SELECT FROM pg_catalog.pg_trigger \
                                WHERE tgrelid IN ({oids}) AND NOT tgisinternal) \
                     OR EXISTS (SELECT FROM pg_catalog.pg_rewrite WHERE ev_class IN ({oids}))"
            ),
            &[],
        )
        .await?
        .try_get(0)?;
    if !guarded {
        let edges: Vec<(i64, i64)> = conn
            .query(
                &format!(
                    "SELECT conrelid::bigint, confrelid::bigint FROM pg_catalog.pg_constraint \
                     WHERE contype = 'f' AND conrelid IN ({oids}) AND confrelid IN ({oids})"
                ),
                &[],
            )
            .await?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<Result<_, qail_pg::Error>>()?;
        let deletes: Vec<String> = referencing_first(tables, &edges)
            .iter()
            .map(|t| format!("DELETE FROM ONLY {}", t.name))
            .collect();
        conn.batch_execute("SAVEPOINT qail_recycle").await?;
        let deleted = match conn.batch_execute(&deletes.join("; ")).await {
            Ok(()) => !pristine::nonempty(conn, tables).await?.contains(&true),
            Err(e) => {
                trace(format_args!("emptying with DELETE: {e}"));
                false
            }
        };
        if deleted {
            return Ok(" (DELETE)");
        }
        conn.batch_execute("ROLLBACK TO SAVEPOINT qail_recycle")
            .await?;
    }
    let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    conn.batch_execute(&format!("TRUNCATE {} CASCADE", names.join(", ")))
        .await?;
    Ok(" (TRUNCATE)")
}

/// `tables` ordered so that a table referencing another (`edges`: referencing, referenced)
/// comes before it; the tables of a cycle come last, in their order.
fn referencing_first<'a>(tables: &[&'a Relation], edges: &[(i64, i64)]) -> Vec<&'a Relation> {
    let mut left: Vec<&Relation> = tables.to_vec();
    let mut out = Vec::with_capacity(left.len());
    loop {
        // Note: a table goes when no table still left references it.
        let next = left.iter().position(|t| {
            !edges.iter().any(|&(from, to)| {
                to == t.oid && from != t.oid && left.iter().any(|l| l.oid == from)
            })
        });
        match next {
            Some(i) => out.push(left.remove(i)),
            None => break,
        }
    }
    out.extend(left);
    out
}

/// Unmarks `work` and renames it `free`, unless template `tpl` has `bound` free databases
/// already; whether it did.
async fn release(
    admin: &mut Connection,
    tpl: &str,
    work: &str,
    free: &str,
    bound: usize,
) -> Result<bool, qail_pg::Error> {
    let key = template_key(tpl);
    admin.batch_execute("BEGIN").await?;
    admin
        .execute("SELECT pg_advisory_xact_lock($1, $2)", &[&FREE_KEY, &key])
        .await?;
    if free_count(admin, tpl).await >= bound {
        admin.batch_execute("ROLLBACK").await?;
        return Ok(false);
    }
    admin
        .batch_execute(&format!(
            "COMMENT ON DATABASE {0} IS NULL; ALTER DATABASE {0} RENAME TO {1}; COMMIT",
            ident(work),
            ident(free)
        ))
        .await?;
    Ok(true)
}

/// The second advisory-lock key of template `tpl`: the last 7 hex digits of its hash.
fn template_key(tpl: &str) -> i32 {
    let tail = tpl.get(tpl.len().saturating_sub(7)..).unwrap_or("0");
    i32::from_str_radix(tail, 16).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_databases_are_named_by_their_template() {
        assert_eq!(
            free_prefix("qail_tpl_0123abcd_0011223344556677"),
            "qail_free_0123abcd_0011223344556677_"
        );
        assert_eq!(
            template_key("qail_tpl_0123abcd_001122334455667f"),
            0x455_667f
        );
    }

    #[test]
    fn referencing_tables_are_emptied_first() {
        let t = |oid: i64| Relation {
            oid,
            name: format!("t{oid}"),
            kind: Kind::Table,
        };
        let (a, b, c) = (t(1), t(2), t(3));
        let oids = |order: Vec<&Relation>| order.iter().map(|r| r.oid).collect::<Vec<_>>();
        // c references b, b references a and itself.
        assert_eq!(
            oids(referencing_first(&[&a, &b, &c], &[(3, 2), (2, 1), (2, 2)])),
            [3, 2, 1]
        );
        // A cycle stays at the end.
        assert_eq!(
            oids(referencing_first(&[&a, &b, &c], &[(1, 2), (2, 1), (3, 1)])),
            [3, 1, 2]
        );
    }
}
