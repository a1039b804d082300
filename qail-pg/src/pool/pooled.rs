//! A connection on loan from the pool.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use tokio::sync::OwnedSemaphorePermit;

use super::{Entry, Inner};
use crate::conn::Connection;

/// A connection taken from a [`Pool`](super::Pool); use it as a [`Connection`] (it derefs to
/// one). Dropping it returns it to the pool, which resets its session state (without
/// waiting for the server) or closes it when it is broken or too old.
pub struct PooledConnection {
    /// Present until the connection is returned or discarded.
    entry: Option<Entry>,
    /// The pool slot this connection occupies.
    permit: Option<OwnedSemaphorePermit>,
    pool: Arc<Inner>,
}

impl PooledConnection {
    pub(crate) fn new(
        entry: Entry,
        permit: OwnedSemaphorePermit,
        pool: Arc<Inner>,
    ) -> PooledConnection {
        PooledConnection {
            entry: Some(entry),
            permit: Some(permit),
            pool,
        }
    }

    /// Closes the connection, which failed its health check, instead of returning it; gives
    /// back its slot to reuse.
    pub(crate) fn discard(mut self) -> OwnedSemaphorePermit {
        if let Some(entry) = self.entry.take() {
            self.pool.destroy(entry, true);
        }
        self.permit
            .take()
            .expect("the permit stays until the connection is returned")
    }

    fn entry(&self) -> &Entry {
        self.entry
            .as_ref()
            .expect("the connection stays until the connection is returned")
    }
}

impl Deref for PooledConnection {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        &self.entry().conn
    }
}

impl DerefMut for PooledConnection {
    fn deref_mut(&mut self) -> &mut Connection {
        &mut self
            .entry
            .as_mut()
            .expect("the connection stays until the connection is returned")
            .conn
    }
}

impl Drop for PooledConnection {
    fn drop(&mut self) {
        if let (Some(entry), Some(permit)) = (self.entry.take(), self.permit.take()) {
            self.pool.release(entry, permit);
        }
    }
}

impl fmt::Debug for PooledConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.entry {
            Some(entry) => f
                .debug_struct("PooledConnection")
                .field("conn", &entry.conn)
                .field("age", &entry.created.elapsed())
                .finish(),
            None => f.write_str("PooledConnection(returned)"),
        }
    }
}

impl crate::conn::Executor for PooledConnection {
    fn connection(&mut self) -> &mut Connection {
        self
    }
}
