//! A connection on loan from the pool.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use super::{Inner, Object};
use crate::conn::Connection;

/// A connection taken from a [`Pool`](super::Pool); use it as a [`Connection`] (it derefs to
/// one). Dropping it returns it to the pool, which resets its session state (without
/// waiting for the server) or closes it when it is broken or too old.
pub struct PooledConnection {
    /// Present until the connection is returned; it holds the connection's pool slot.
    object: Option<Object>,
    pool: Arc<Inner>,
}

impl PooledConnection {
    pub(crate) fn new(object: Object, pool: Arc<Inner>) -> PooledConnection {
        PooledConnection {
            object: Some(object),
            pool,
        }
    }

    fn object(&self) -> &Object {
        self.object
            .as_ref()
            .expect("the connection stays until the connection is returned")
    }
}

impl Deref for PooledConnection {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.object().conn()
    }
}

impl DerefMut for PooledConnection {
    fn deref_mut(&mut self) -> &mut Connection {
        self.object
            .as_mut()
            .expect("the connection stays until the connection is returned")
            .conn_mut()
    }
}

impl Drop for PooledConnection {
    fn drop(&mut self) {
        if let Some(object) = self.object.take() {
            self.pool.release(object);
        }
    }
}

impl fmt::Debug for PooledConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.object {
            Some(object) => f
                .debug_struct("PooledConnection")
                .field("conn", object.conn())
                .field("age", &Object::metrics(object).age())
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
