//! Recycling or dropping the databases of passed tests off the tests' critical path.
//!
//! A test that passes marks its database passed (`COMMENT ON DATABASE … IS 'qail-test:
//! passed'`, one small catalog write) and returns; its slot — the lock that counts it
//! towards the bound — goes to the process's *dropper*, a thread that connects in that slot,
//! recycles the database for a later test (`recycle.rs`) or, when it cannot, drops it, and
//! then gives the slot back. Swept databases are dropped, not recycled. The drops of tests
//! that passed together run together, as they did when each test dropped its own, but the
//! test's thread is free for the next test. The process waits for its dropper when it exits
//! (`atexit`: after cargo test's last test, after cargo-nextest's one test), so that no drop
//! is left running on the server outside the bound, nor a passed database left behind by a
//! process that exits normally.
//!
//! A process that does not exit normally (killed, or its dropper's drop failed) leaves
//! marked databases behind, so the first test of every process also *sweeps*: it lists the
//! server's databases marked passed, whoever left them, and hands them to its dropper. The
//! mark, not the process that made it, is what makes a database droppable, so no owner's
//! liveness needs checking: a marked database is one its test is done with. A failing
//! test's database is never marked, so it is kept, as is the database of a test whose
//! process died while it ran. Two droppers (of two processes) never drop the same database:
//! each claims a database with an advisory lock on its oid before dropping it.
//!
//! What a drop costs, on PostgreSQL 15: `DROP DATABASE` discards the database's buffers, tells
//! the checkpointer to forget its files' pending fsyncs, requests an immediate checkpoint and
//! waits for one that starts after the request, then unlinks the database's files (~900 for a
//! clone of a 100-table template: 0.3–1 s on the development machine's disk). A checkpoint
//! writes every dirty buffer, then fsyncs every file written since the previous one (0.7–2 ms a
//! file there), but it absorbs forget requests every few fsyncs and skips the files they
//! cancel. So what a checkpoint costs is the files of the databases that stay alive through its
//! sync phase, and a passed database is cheapest dropped at once: the drops of tests that pass
//! together run together, each on its test's connection, and each one's forget lands while the
//! checkpoint another drop started is still syncing. Measured on the 200-test suite
//! (`bench/test-db`): drops deferred and issued 16 at a time (each on a connection of its own,
//! as slots came free) left the waiting databases alive through other drops' checkpoints, which
//! synced every clone once (182,442 files, the suite 178 s instead of 25–32 s); a dropper that
//! freed the tests' slots and shared its own slots three drops to one slot ran fewer
//! checkpoints (14–17 against 26) that synced more files (5,600–11,200 against 400–1,100), and
//! took 29–35 s against 25–32 s. Every clone still there when a checkpoint syncs adds its
//! files: passed databases must not pile up.
//! (A dropper of one slot, dropping the queue a few at a time, fell behind the tests that
//! way: 200 databases waited, and each checkpoint took seconds.)

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};

use qail_pg::Connection;
use tokio::sync::Notify;
use tokio::task::JoinSet;

use super::recycle::{self, Outcome};
use super::slots::{self, Lock};
use super::{at_exit, ident, trace};

/// The comment (`COMMENT ON DATABASE`) a passed test's database carries until a dropper
/// recycles or drops it: what makes it droppable by any process.
pub const PASSED: &str = "qail-test: passed";

/// The advisory-lock key space of the droppers' claims (first key of the two-key form).
const DROP_KEY: i32 = 0x7161_0064;

/// The names a passed test's database and only those have: `qail_t_…` (and `qail_r_…`
/// while it is being recycled), as a regular expression.
const TEST_DBS: &str = "^qail_[tr]_";

/// A database to drop: a passed test's, with the slot the test held (its connection drops
/// it, and the slot is given back after), or a swept one.
struct Job {
    name: String,
    slot: Option<Lock>,
    /// The template it was cloned from, for a passed test's: its database may be recycled.
    template: Option<String>,
}

/// The databases waiting for the dropper, and whether its thread runs.
struct Queue {
    pending: VecDeque<Job>,
    running: bool,
}

static QUEUE: Mutex<Queue> = Mutex::new(Queue {
    pending: VecDeque::new(),
    running: false,
});
/// Signalled when the dropper's thread ends (its queue empty).
static IDLE: Condvar = Condvar::new();
/// Wakes the dropper's thread when a job is queued.
static WAKE: Notify = Notify::const_new();
/// Whether this process swept the server already.
static SWEPT: AtomicBool = AtomicBool::new(false);

/// Marks database `name` passed, so that a dropper (this process's or a later one's) recycles
/// or drops it.
pub(crate) async fn mark_passed(admin: &mut Connection, name: &str) -> Result<(), qail_pg::Error> {
    admin
        .batch_execute(&format!(
            "COMMENT ON DATABASE {} IS '{PASSED}'",
            ident(name)
        ))
        .await
}

/// On the first test of the process: lists the passed databases on the server (those of
/// processes that did not finish their drops) and hands them to the dropper.
pub(crate) async fn sweep(admin: &mut Connection, server: &str) {
    if SWEPT.swap(true, Ordering::AcqRel) {
        return;
    }
    let rows = admin
        .query(
            "SELECT datname::text FROM pg_database \
             WHERE datname ~ $1 AND shobj_description(oid, 'pg_database') = $2",
            &[&TEST_DBS, &PASSED],
        )
        .await;
    match rows {
        Ok(rows) if !rows.is_empty() => {
            trace(format_args!("sweeping {} passed databases", rows.len()));
            let jobs = rows.iter().map(|r| Job {
                name: r.get(0),
                slot: None,
                template: None,
            });
            enqueue(server, jobs);
        }
        Ok(_) => {}
        Err(e) => trace(format_args!("could not list passed databases: {e}")),
    }
}

/// Hands a passed test's database (a clone of template `template`) to the dropper, with the
/// test's slot: the test returns, and the slot is given back once the database is recycled
/// or dropped.
pub(crate) fn hand_over(server: &str, name: String, template: String, slot: Lock) {
    enqueue(
        server,
        [Job {
            name,
            slot: Some(slot),
            template: Some(template),
        }],
    );
}

/// Queues jobs, starting the dropper's thread if it does not run.
fn enqueue(server: &str, jobs: impl IntoIterator<Item = Job>) {
    let mut queue = QUEUE.lock().unwrap_or_else(|e| e.into_inner());
    queue.pending.extend(jobs);
    WAKE.notify_one();
    if queue.running || queue.pending.is_empty() {
        return;
    }
    queue.running = true;
    at_exit::wait_for_drops_once();
    let server = server.to_owned();
    let spawned = std::thread::Builder::new()
        .name("qail-test-dropper".to_owned())
        .spawn(move || work(&server));
    if let Err(e) = spawned {
        // The databases stay marked: the next process's sweep drops them.
        eprintln!("qail::test: could not start the dropper thread: {e}");
        queue.running = false;
        queue.pending.clear();
    }
}

/// Blocks until this process's dropper has recycled or dropped every database handed to it
/// (or left the ones it could not drop for a later sweep). The process calls it when it exits
/// (so a test process ends after its drops, none of them left running on the server), and a
/// test may call it.
pub fn wait_for_drops() {
    let mut queue = QUEUE.lock().unwrap_or_else(|e| e.into_inner());
    while queue.running {
        queue = IDLE.wait(queue).unwrap_or_else(|e| e.into_inner());
    }
}

/// The next job, if any.
fn pop() -> Option<Job> {
    QUEUE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .pending
        .pop_front()
}

/// Whether the queue is empty; if so the thread is marked ended (atomically with the check,
/// so that [`enqueue`] starts a new one).
fn done() -> bool {
    let mut queue = QUEUE.lock().unwrap_or_else(|e| e.into_inner());
    if queue.pending.is_empty() {
        queue.running = false;
        IDLE.notify_all();
        return true;
    }
    false
}

/// The dropper's thread: runs the jobs until none is queued or running, and ends.
fn work(server: &str) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("qail::test: the dropper's runtime: {e}");
            while pop().is_some() {}
            done();
            return;
        }
    };
    rt.block_on(async {
        let mut drops = JoinSet::new();
        let mut swept = Vec::new();
        loop {
            while let Some(job) = pop() {
                match job.slot {
                    // Note: each on its own connection, all at once: the drops of the tests
                    // that passed together wait together, sharing checkpoints, as they did
                    // when each test dropped its own.
                    Some(lock) => {
                        let server = server.to_owned();
                        drops.spawn(async move {
                            match lock.connect(&server).await {
                                Ok(mut slot) => {
                                    finish(
                                        &mut slot.conn,
                                        &server,
                                        &job.name,
                                        job.template.as_deref(),
                                    )
                                    .await;
                                    slot.release().await;
                                }
                                // Note: left marked, for the next sweep.
                                Err(e) => trace(format_args!("dropping {}: {e}", job.name)),
                            }
                        });
                    }
                    None => swept.push(job.name),
                }
            }
            if !swept.is_empty() {
                let names = std::mem::take(&mut swept);
                let server = server.to_owned();
                drops.spawn(async move {
                    // Note: a slot of its own, as a test's, so that the bound holds.
                    let mut slot = slots::take(&server).await;
                    for name in names {
                        drop_one(&mut slot.conn, &name).await;
                    }
                    slot.release().await;
                });
            }
            if drops.is_empty() {
                if done() {
                    return;
                }
                continue;
            }
            tokio::select! {
                _ = drops.join_next() => {}
                () = WAKE.notified() => {}
            }
        }
    });
}

/// Recycles or drops a passed test's database, if it is still there, still marked passed,
/// and no other dropper claimed it.
async fn finish(admin: &mut Connection, server: &str, name: &str, template: Option<&str>) {
    let Some(template) = template.filter(|_| recycle::enabled()) else {
        drop_one(admin, name).await;
        return;
    };
    if !claim(admin, name).await {
        return;
    }
    let bound = slots::count(server);
    if let Outcome::Drop(now) = recycle::recycle(admin, server, name, template, bound).await {
        drop_claimed(admin, &now).await;
    }
    unclaim(admin, name).await;
}

/// Drops database `name` if it is still there, still marked passed, and no other dropper
/// claimed it.
async fn drop_one(admin: &mut Connection, name: &str) {
    if claim(admin, name).await {
        drop_claimed(admin, name).await;
        unclaim(admin, name).await;
    }
}

/// Claims database `name` for this dropper: whether it is there, marked passed, and no other
/// dropper's.
async fn claim(admin: &mut Connection, name: &str) -> bool {
    let claimed = admin
        .query_opt(
            "SELECT pg_try_advisory_lock($1, (oid::bigint - 2147483648)::int) FROM pg_database \
             WHERE datname = $2 AND shobj_description(oid, 'pg_database') = $3",
            &[&DROP_KEY, &name, &PASSED],
        )
        .await;
    match claimed {
        Ok(Some(row)) => row.get::<bool>(0),
        Ok(None) => false,
        Err(e) => {
            trace(format_args!("could not claim {name}: {e}"));
            false
        }
    }
}

/// Drops claimed database `name`.
async fn drop_claimed(admin: &mut Connection, name: &str) {
    let drop = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", ident(name));
    match admin.batch_execute(&drop).await {
        Ok(()) => trace(format_args!("dropped {name}")),
        Err(e) => eprintln!("qail::test: could not drop {name}: {e}"),
    }
}

/// Releases this dropper's claims.
async fn unclaim(admin: &mut Connection, name: &str) {
    // Note: all of the session's claims at once; it holds no other advisory lock.
    if let Err(e) = admin.batch_execute("SELECT pg_advisory_unlock_all()").await {
        trace(format_args!("releasing the claim on {name}: {e}"));
    }
}
