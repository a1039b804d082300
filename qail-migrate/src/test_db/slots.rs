//! The bound on the connections all tests of a run hold: N slots, each a lock on a file
//! (`<temp dir>/qail-test-slots/<server>/slot-<i>`) that a test holds from before its first
//! connection to after its last. The locks are the operating system's, so the bound holds
//! across test threads, test processes (cargo-nextest runs one per test) and test binaries
//! on a machine; a process that dies releases its slot with its files. A test waiting for a
//! slot holds no connection.
//!
//! A test holds its admin connection and at most `QAIL_TEST_POOL_SIZE` connections to its
//! database (one to build the template while it does), so N is the bound
//! (`QAIL_TEST_MAX_CONNECTIONS`, by default half the server's `max_connections`) divided
//! by one more than the pool size.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use qail_pg::Connection;
use sha2::{Digest, Sha256};

use super::{config, env_number, flock, trace};

/// A slot held: the admin connection, and the file whose lock is the slot.
pub(crate) struct Slot {
    // Note: fields drop in order, so the connection closes before the lock is released.
    pub(crate) conn: Connection,
    _lock: File,
}

impl Slot {
    /// Gives the slot back: closes the connection, then releases the lock.
    pub(crate) async fn release(self) {
        self.conn.close().await;
    }

    /// Closes the connection and keeps the lock: for a connection of another runtime (a
    /// connection belongs to the runtime it was opened on).
    pub(crate) async fn into_lock(self) -> Lock {
        self.conn.close().await;
        Lock(self._lock)
    }
}

/// A slot held without a connection.
pub(crate) struct Lock(File);

impl Lock {
    /// Connects to the maintenance database in the slot.
    pub(crate) async fn connect(self, server: &str) -> Result<Slot, qail_pg::Error> {
        let conn = Connection::connect_with(&config(server, None)).await?;
        Ok(Slot {
            conn,
            _lock: self.0,
        })
    }
}

/// Connections of a test at most: its admin connection and its pool.
pub(crate) fn per_test() -> usize {
    1 + env_number("QAIL_TEST_POOL_SIZE").unwrap_or(2).max(1)
}

/// The connection bound: `QAIL_TEST_MAX_CONNECTIONS`, else half the server's
/// `max_connections` as the file `known` holds it, if a test wrote it already.
fn bound(known: &Path) -> Option<usize> {
    env_number("QAIL_TEST_MAX_CONNECTIONS").or_else(|| {
        let max: usize = std::fs::read_to_string(known).ok()?.trim().parse().ok()?;
        Some(max / 2)
    })
}

/// How many slots the server's tests have (1 while the bound is not known).
pub(crate) fn count(server: &str) -> usize {
    bound(&slots_dir(server).join("max_connections")).map_or(1, |b| (b / per_test()).max(1))
}

/// Takes a free slot, waiting for one, and connects to the maintenance database; panics if
/// the server cannot be reached.
pub(crate) async fn take(server: &str) -> Slot {
    let started = Instant::now();
    let dir = slots_dir(server);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("qail::test: creating {}: {e}", dir.display()));
    let known = dir.join("max_connections");
    let bound = bound(&known);
    // Note: before the server's max_connections is known, slot 0 alone, which is a slot
    // whatever the bound turns out to be.
    let slots = bound.map_or(1, |b| (b / per_test()).max(1));
    let offset = usize::try_from(std::process::id()).unwrap_or(0);
    let mut pause = Duration::from_millis(2);
    let (slot, lock) = 'wait: loop {
        for i in 0..slots {
            let slot = (i + offset) % slots;
            let path = dir.join(format!("slot-{slot}"));
            let file = File::options()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .unwrap_or_else(|e| panic!("qail::test: opening {}: {e}", path.display()));
            let taken = flock::try_lock(&file)
                .unwrap_or_else(|e| panic!("qail::test: locking {}: {e}", path.display()));
            if taken {
                break 'wait (slot, file);
            }
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(50));
    };
    trace(format_args!(
        "slot {slot} of {slots} after {:?}",
        started.elapsed()
    ));
    let mut conn = Connection::connect_with(&config(server, None))
        .await
        .unwrap_or_else(|e| {
            panic!(
                "qail::test: cannot connect to {server} (set DATABASE_URL to a server where \
                 the user may create databases): {e}"
            )
        });
    if bound.is_none() {
        remember_max_connections(&mut conn, &known).await;
    }
    Slot { conn, _lock: lock }
}

/// Writes the server's `max_connections` where the next tests read it.
async fn remember_max_connections(conn: &mut Connection, path: &Path) {
    if let Ok(row) = conn
        .query_one("SELECT current_setting('max_connections')", &[])
        .await
    {
        let max: String = row.get(0);
        let tmp = path.with_extension(format!("{}", std::process::id()));
        if std::fs::write(&tmp, max).is_ok() {
            let _ = std::fs::rename(&tmp, path);
        }
    }
}

/// The server's slot directory: one per host, port and user the URL names.
fn slots_dir(server: &str) -> PathBuf {
    let authority = server.split("://").nth(1).unwrap_or(server);
    let authority = authority.split(['/', '?']).next().unwrap_or(authority);
    let hash = Sha256::digest(authority.as_bytes());
    let key: String = hash[..6].iter().map(|b| format!("{b:02x}")).collect();
    std::env::temp_dir().join("qail-test-slots").join(key)
}
