//! Applying (or reverting) one migration, safely beside other runners.
//!
//! **In a transaction** (the default): `BEGIN`, `pg_advisory_xact_lock`, re-read the
//! migration's history row under the lock (another runner may have applied it meanwhile),
//! run the file, write the history row, `COMMIT`. The lock is released with the transaction —
//! also when the session dies — so it never outlives the runner, and never stays on a server
//! connection of a transaction-mode pooler.
//!
//! **Outside a transaction** (`-- qail:no-transaction`): no lock can be held across the
//! statements without a session, so the runner *claims* the migration instead — a history
//! row in state `running` with a fresh token, inserted in a short locked transaction — then
//! runs the statements one by one (each tagged with the token in a comment, and followed by a
//! heartbeat on the row), then marks it `applied`. A failure marks it `dirty`. Another runner
//! that finds the claim waits while the claimant shows signs of life (its statement in
//! `pg_stat_activity`, or a new heartbeat); when none shows for the claim grace, the claimant
//! died: the migration is marked dirty and reported, never silently run again.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use qail_pg::Connection;

use crate::error::{Error, ErrorKind};
use crate::history::{self, Entry, RowState, Table};
use crate::migration::{Migration, Script};
use crate::migrator::{Migrator, Step, edited};

/// Which way a migration goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Up,
    Down,
}

/// What one attempt came to.
enum Outcome {
    Done(Step),
    /// Another runner applied (or reverted) it first.
    Skipped,
    /// Another runner claimed it (a non-transactional migration in progress).
    Claimed(Entry),
}

/// Applies `m` unless another runner did; `None` when another did.
pub(crate) async fn up(
    migrator: &Migrator,
    table: &Table,
    conn: &mut Connection,
    m: &Migration,
) -> Result<Option<Step>, Error> {
    one(migrator, table, conn, m, Direction::Up).await
}

/// Reverts `m` (which has a down file) unless another runner did; `None` when another did.
pub(crate) async fn down(
    migrator: &Migrator,
    table: &Table,
    conn: &mut Connection,
    m: &Migration,
) -> Result<Option<Step>, Error> {
    one(migrator, table, conn, m, Direction::Down).await
}

async fn one(
    migrator: &Migrator,
    table: &Table,
    conn: &mut Connection,
    m: &Migration,
    direction: Direction,
) -> Result<Option<Step>, Error> {
    let script = match direction {
        Direction::Up => &m.up,
        Direction::Down => m.down.as_ref().ok_or_else(|| {
            Error::new(
                ErrorKind::Irreversible,
                format!("cannot revert `{}`: it has no .down.sql", m.up.file),
            )
        })?,
    };
    loop {
        let outcome = if script.no_transaction {
            claimed(table, conn, m, script, direction).await?
        } else {
            in_transaction(table, conn, m, script, direction).await?
        };
        match outcome {
            Outcome::Done(step) => return Ok(Some(step)),
            Outcome::Skipped => return Ok(None),
            Outcome::Claimed(entry) => wait(migrator, table, conn, m, entry).await?,
        }
    }
}

/// What to do with the migration, decided under the lock from its history row.
enum Decision {
    Go,
    Stop(Outcome),
}

async fn decide(
    table: &Table,
    conn: &mut Connection,
    m: &Migration,
    direction: Direction,
) -> Result<Decision, Error> {
    let entry = table.get(conn, m.version).await?;
    match (direction, entry) {
        (_, Some(e)) if e.state == RowState::Dirty => Err(dirty_error(&e)),
        (_, Some(e)) if e.state == RowState::Running => Ok(Decision::Stop(Outcome::Claimed(e))),
        (Direction::Up, Some(e)) if e.checksum != m.checksum() => Err(edited(m)),
        (Direction::Up, Some(_)) | (Direction::Down, None) => Ok(Decision::Stop(Outcome::Skipped)),
        (Direction::Down, Some(_)) => Ok(Decision::Go),
        (Direction::Up, None) => match table.first_dirty(conn).await? {
            Some(e) => Err(dirty_error(&e)),
            None => Ok(Decision::Go),
        },
    }
}

async fn in_transaction(
    table: &Table,
    conn: &mut Connection,
    m: &Migration,
    script: &Script,
    direction: Direction,
) -> Result<Outcome, Error> {
    own_transaction_control(script)?;
    let what = format!("applying `{}`", script.file);
    let mut tx = conn.begin().await.map_err(|e| Error::db(&what, e))?;
    history::lock(&mut tx).await?;
    if let Decision::Stop(outcome) = decide(table, &mut tx, m, direction).await? {
        tx.commit().await.map_err(|e| Error::db(&what, e))?;
        return Ok(outcome);
    }
    let started = Instant::now();
    if let Err(e) = tx.batch_execute(&script.sql).await {
        // Note: a failed rollback leaves nothing to undo: the server ends the transaction
        // when the session ends.
        let _ = tx.rollback().await;
        return Err(failed(script, e));
    }
    let duration = started.elapsed();
    let ms = millis(duration);
    let recorded = match direction {
        Direction::Up => {
            tx.execute(
                &table.sql(
                    "INSERT INTO _qail_migrations (version, name, checksum, state, duration_ms) \
                 VALUES ($1, $2, $3, 'applied', $4)",
                ),
                &[&m.version, &m.name, &m.checksum(), &ms],
            )
            .await
        }
        Direction::Down => {
            tx.execute(
                &table.sql("DELETE FROM _qail_migrations WHERE version = $1"),
                &[&m.version],
            )
            .await
        }
    };
    recorded.map_err(|e| Error::db(&what, e))?;
    tx.commit().await.map_err(|e| {
        let next = if e.is_outcome_unknown() {
            "the connection was lost while committing: run `status` to see whether it was \
             applied"
        } else {
            "nothing of it was applied; check the server's message and run again"
        };
        Error::new(
            ErrorKind::Migration,
            format!("committing `{}` failed: {e}; {next}", script.file),
        )
        .with_source(e)
    })?;
    Ok(Outcome::Done(Step {
        version: m.version,
        name: m.name.clone(),
        duration,
    }))
}

/// Refuses a file that runs in a transaction but has `BEGIN`/`COMMIT`/`ROLLBACK` of its own:
/// its `COMMIT` would end the runner's transaction early — committing the file's changes
/// without its history row and releasing the lock mid-migration.
fn own_transaction_control(script: &Script) -> Result<(), Error> {
    for (i, statement) in statements(&script.sql).iter().enumerate() {
        let mut words = statement
            .split(|c: char| c.is_whitespace() || c == ';')
            .filter(|w| !w.is_empty())
            .map(str::to_ascii_uppercase);
        let first = words.next().unwrap_or_default();
        let second = words.next().unwrap_or_default();
        let ends = match first.as_str() {
            "BEGIN" | "COMMIT" | "END" | "ABORT" => true,
            "START" => second == "TRANSACTION",
            "ROLLBACK" => second != "TO",
            _ => false,
        };
        if ends {
            return Err(Error::new(
                ErrorKind::Migration,
                format!(
                    "migration `{}` controls its own transaction (`{first}` at its statement \
                     {}), but every migration already runs in a transaction of the runner's, \
                     which that would end early; remove the statement, or make the first line \
                     `-- qail:no-transaction` to run the file statement by statement",
                    script.file,
                    i + 1
                ),
            ));
        }
    }
    Ok(())
}

fn failed(script: &Script, e: qail_pg::Error) -> Error {
    let cause = if e.is_closed() {
        "the connection was lost while it ran, and the server rolls its transaction back"
    } else {
        "its transaction was rolled back, so nothing of it was applied"
    };
    // Note: 25001 is active_sql_transaction, what CREATE INDEX CONCURRENTLY, VACUUM and the
    // like raise in a transaction block.
    let next = if e.code() == Some("25001") {
        "A statement of it cannot run in a transaction: make the file's first line \
         `-- qail:no-transaction` (and keep such statements in files of their own)"
    } else {
        "Fix the file (or the database) and run again"
    };
    Error::new(
        ErrorKind::Migration,
        format!("migration `{}` failed: {e}; {cause}. {next}", script.file),
    )
    .with_source(e)
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// A token no other claim has: this process, the time, and a counter.
fn token() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "claim-{:x}-{nanos:x}-{:x}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

async fn claimed(
    table: &Table,
    conn: &mut Connection,
    m: &Migration,
    script: &Script,
    direction: Direction,
) -> Result<Outcome, Error> {
    let what = format!("claiming `{}` (it runs outside a transaction)", script.file);
    let token = token();
    let mut tx = conn.begin().await.map_err(|e| Error::db(&what, e))?;
    history::lock(&mut tx).await?;
    if let Decision::Stop(outcome) = decide(table, &mut tx, m, direction).await? {
        tx.commit().await.map_err(|e| Error::db(&what, e))?;
        return Ok(outcome);
    }
    let claim = match direction {
        Direction::Up => {
            tx.execute(
                &table.sql(
                    "INSERT INTO _qail_migrations \
                 (version, name, checksum, state, no_transaction, claim, heartbeat_at) \
                 VALUES ($1, $2, $3, 'running', true, $4, clock_timestamp())",
                ),
                &[&m.version, &m.name, &m.checksum(), &token],
            )
            .await
        }
        Direction::Down => {
            tx.execute(
                &table.sql(
                    "UPDATE _qail_migrations SET state = 'running', claim = $2, \
                 heartbeat_at = clock_timestamp() WHERE version = $1",
                ),
                &[&m.version, &token],
            )
            .await
        }
    };
    claim.map_err(|e| Error::db(&what, e))?;
    tx.commit().await.map_err(|e| Error::db(&what, e))?;

    let started = Instant::now();
    let statements = statements(&script.sql);
    for (i, statement) in statements.iter().enumerate() {
        // Note: the token in the statement's text is what other runners look for in
        // pg_stat_activity while it runs.
        let sql = format!("/* qail-migrate {token} */ {statement}");
        let ran = match conn.batch_execute(&sql).await {
            Ok(()) => heartbeat(table, conn, m, &token).await,
            Err(e) => Err(e),
        };
        if let Err(e) = ran {
            let failure = format!(
                "its statement {} of {} failed: {e}",
                i + 1,
                statements.len()
            );
            return Err(mark_dirty(table, conn, m, script, &token, &failure, e).await);
        }
    }
    let duration = started.elapsed();
    let finished = match direction {
        Direction::Up => {
            conn.execute(
                &table.sql(
                    "UPDATE _qail_migrations SET state = 'applied', claim = NULL, \
                 heartbeat_at = NULL, duration_ms = $3 \
                 WHERE version = $1 AND claim = $2 AND state = 'running'",
                ),
                &[&m.version, &token, &millis(duration)],
            )
            .await
        }
        Direction::Down => {
            conn.execute(
                &table.sql(
                    "DELETE FROM _qail_migrations \
                 WHERE version = $1 AND claim = $2 AND state = 'running'",
                ),
                &[&m.version, &token],
            )
            .await
        }
    };
    match finished {
        Ok(1) => Ok(Outcome::Done(Step {
            version: m.version,
            name: m.name.clone(),
            duration,
        })),
        Ok(_) => Err(Error::new(
            ErrorKind::Dirty,
            format!(
                "migration `{}` ran to its end outside a transaction, but meanwhile another \
                 runner saw no sign of this one for longer than its claim grace and marked it \
                 dirty; check that its changes are in place, then record it with `resolve` as \
                 applied (and raise the other runners' claim_grace)",
                script.file
            ),
        )),
        Err(e) => {
            let failure = format!("recording its end failed: {e}");
            Err(mark_dirty(table, conn, m, script, &token, &failure, e).await)
        }
    }
}

/// The statements of a file that runs outside a transaction, each sent on its own.
///
/// Note: PostgreSQL runs the statements of one simple-protocol Query message in an implicit
/// transaction block, where `CREATE INDEX CONCURRENTLY`, `VACUUM` or `ALTER TYPE … ADD VALUE`
/// (before 12) are refused.
fn statements(sql: &str) -> Vec<&str> {
    qail_schema::script::split(sql)
        .into_iter()
        .filter_map(|piece| sql.get(piece.range))
        .collect()
}

/// Records progress on a claim: other runners see a new heartbeat.
async fn heartbeat(
    table: &Table,
    conn: &mut Connection,
    m: &Migration,
    token: &str,
) -> Result<(), qail_pg::Error> {
    conn.execute(
        &table.sql(
            "UPDATE _qail_migrations SET heartbeat_at = clock_timestamp() \
         WHERE version = $1 AND claim = $2",
        ),
        &[&m.version, &token],
    )
    .await
    .map(drop)
}

/// Marks the claim dirty after `failure` (best effort: the connection may be gone) and
/// returns the error to report.
async fn mark_dirty(
    table: &Table,
    conn: &mut Connection,
    m: &Migration,
    script: &Script,
    token: &str,
    failure: &str,
    e: qail_pg::Error,
) -> Error {
    let marked = conn
        .execute(
            &table.sql(
                "UPDATE _qail_migrations SET state = 'dirty', error = $3, heartbeat_at = NULL \
             WHERE version = $1 AND claim = $2",
            ),
            &[&m.version, &token, &failure],
        )
        .await;
    let recorded = match marked {
        Ok(_) => "It is recorded as dirty".to_owned(),
        Err(mark) => format!(
            "It could not be recorded as dirty ({mark}); the next run finds its claim without a \
             runner and reports it dirty"
        ),
    };
    Error::new(
        ErrorKind::Dirty,
        format!(
            "migration `{}` runs outside a transaction and {failure}. The statements before \
             it stay applied, so the database may hold part of the migration. {recorded}, and \
             nothing more runs until it is resolved: fix the database by hand (finish or undo \
             what the file does), then record the outcome with `resolve` — as applied if its \
             changes are now in place, or as pending to run it again",
            script.file
        ),
    )
    .with_source(e)
}

/// The error for a history row that is dirty (or still claimed).
pub(crate) fn dirty_error(e: &Entry) -> Error {
    let why = match (&e.state, &e.error) {
        (RowState::Running, _) => {
            "is being run outside a transaction by another runner (or its runner died)".to_owned()
        }
        (_, Some(error)) => format!("ran outside a transaction and {error}"),
        (_, None) => "ran outside a transaction and did not finish".to_owned(),
    };
    let next = match e.state {
        RowState::Running => {
            "wait for it and run again; if no runner is running it, fix the database by hand \
             and record the outcome with `resolve`"
        }
        _ => {
            "fix the database by hand (finish or undo what the file does), then record the \
             outcome with `resolve` — as applied if its changes are now in place, or as \
             pending to run it again"
        }
    };
    Error::new(
        ErrorKind::Dirty,
        format!(
            "migration {} ({}) is dirty: it {why}. The database may hold part of it, and \
             nothing more runs until it is resolved: {next}",
            e.version, e.name
        ),
    )
}

/// Waits while another runner's claim on `m` shows signs of life; returns when the claim is
/// gone (applied, reverted or resolved: the caller looks again), or the error when its
/// runner died.
async fn wait(
    migrator: &Migrator,
    table: &Table,
    conn: &mut Connection,
    m: &Migration,
    claim: Entry,
) -> Result<(), Error> {
    let grace = migrator.claim_grace;
    let poll = (grace / 10).clamp(Duration::from_millis(20), Duration::from_millis(250));
    let token = claim.claim.clone().unwrap_or_default();
    let mut heartbeat = claim.heartbeat_at.clone();
    let mut alive_at = Instant::now();
    loop {
        tokio::time::sleep(poll).await;
        let Some(now) = table.get(conn, m.version).await? else {
            return Ok(());
        };
        if now.state != RowState::Running || now.claim.as_deref() != Some(token.as_str()) {
            return Ok(());
        }
        if now.heartbeat_at != heartbeat {
            heartbeat = now.heartbeat_at;
            alive_at = Instant::now();
            continue;
        }
        if active(conn, &token).await? {
            alive_at = Instant::now();
            continue;
        }
        if alive_at.elapsed() < grace {
            continue;
        }
        let what = format!("marking `{}` dirty", m.up.file);
        let error = format!(
            "its runner showed no sign of life for {grace:?} (it died, or lost its connection, \
             while running it)"
        );
        let mut tx = conn.begin().await.map_err(|e| Error::db(&what, e))?;
        history::lock(&mut tx).await?;
        let n = tx
            .execute(
                &table.sql(
                    "UPDATE _qail_migrations SET state = 'dirty', error = $3 \
                 WHERE version = $1 AND claim = $2 AND state = 'running' \
                 AND heartbeat_at::text IS NOT DISTINCT FROM $4",
                ),
                &[&m.version, &token, &error, &heartbeat],
            )
            .await
            .map_err(|e| Error::db(&what, e))?;
        tx.commit().await.map_err(|e| Error::db(&what, e))?;
        if n == 1 {
            let mut entry = now;
            entry.state = RowState::Dirty;
            entry.error = Some(error);
            return Err(dirty_error(&entry));
        }
    }
}

/// Whether a statement tagged with `token` is running on the server now.
async fn active(conn: &mut Connection, token: &str) -> Result<bool, Error> {
    let what = "looking for a claimant's statement in pg_stat_activity";
    let row = conn
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() \
             AND pid <> pg_backend_pid() AND state = 'active' AND position($1 in query) > 0)",
            &[&token],
        )
        .await
        .map_err(|e| Error::db(what, e))?;
    row.try_get(0).map_err(|e| Error::db(what, e))
}

#[cfg(test)]
mod tests {
    use crate::migration::Script;

    #[test]
    fn a_file_with_its_own_commit_is_refused() {
        let refused = |sql: &str| {
            super::own_transaction_control(&Script::new("1_a.sql".into(), sql.into())).is_err()
        };
        assert!(refused("BEGIN;\nCREATE TABLE t ();\nCOMMIT;\n"));
        assert!(refused("CREATE TABLE t ();\ncommit"));
        assert!(refused("START TRANSACTION; CREATE TABLE t (); END;"));
        assert!(!refused(
            "CREATE TABLE t ();\nSAVEPOINT a;\nROLLBACK TO a;\nRELEASE a;"
        ));
        assert!(!refused(
            "DO $$ BEGIN PERFORM 1; END $$;\n\
             CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; END;"
        ));
    }

    #[test]
    fn a_non_transactional_file_is_sent_statement_by_statement() {
        let sql = "-- qail:no-transaction\nCREATE INDEX CONCURRENTLY i ON t (a);\n\
                   CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; END;\n\
                   INSERT INTO t VALUES ('a;b', $$;$$);\n-- the end;\nVACUUM t";
        assert_eq!(
            super::statements(sql),
            [
                "CREATE INDEX CONCURRENTLY i ON t (a)",
                "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; END",
                "INSERT INTO t VALUES ('a;b', $$;$$)",
                "VACUUM t",
            ]
        );
    }
}
