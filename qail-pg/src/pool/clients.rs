//! [`ClientPool`]: a fixed number of shared [`Client`]s, callers spread over them in turn,
//! a broken one replaced by the caller that finds it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use crate::config::Config;
use crate::conn::{Client, Connection};
use crate::error::{Error, Kind};

/// `size` connections, each shared by any number of tasks through a [`Client`]: for
/// services whose requests run single statements and per-query pipelines, many more at once
/// than there are connections.
///
/// [`client`](ClientPool::client) hands out the clients in turn (round robin); a client
/// whose connection failed is replaced by a new connection when it is next handed out. A
/// request that needs a connection to itself (a transaction, COPY, LISTEN) takes one from a
/// [`Pool`](crate::Pool) instead.
///
/// ```no_run
/// # async fn run() -> Result<(), qail_pg::Error> {
/// let clients = qail_pg::ClientPool::connect("postgres://postgres@localhost/postgres", 4).await?;
/// let client = clients.client().await?;
/// let n = client.query_one("SELECT count(*) FROM pg_class", &[]).await?.get::<i64>(0);
/// # let _ = n;
/// # Ok(()) }
/// ```
pub struct ClientPool {
    config: Config,
    query_timeout: Option<Duration>,
    slots: Box<[Slot]>,
    next: AtomicUsize,
    closed: AtomicBool,
}

/// One client of the pool, and the lock its replacement is made under.
struct Slot {
    client: Mutex<Option<Client>>,
    replacing: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for ClientPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientPool")
            .field("size", &self.slots.len())
            .finish_non_exhaustive()
    }
}

impl ClientPool {
    /// Opens `size` shared connections (at least 1) with a libpq connection string.
    pub async fn connect(url: &str, size: usize) -> Result<ClientPool, Error> {
        ClientPool::connect_with(Config::parse(url)?, size, None).await
    }

    /// Opens `size` shared connections (at least 1) with a parsed [`Config`], each with the
    /// query time-out `query_timeout` (see [`Client`] for what it bounds). Connecting is
    /// bounded by the configuration's `connect_timeout`.
    pub async fn connect_with(
        config: Config,
        size: usize,
        query_timeout: Option<Duration>,
    ) -> Result<ClientPool, Error> {
        let pool = ClientPool {
            slots: (0..size.max(1))
                .map(|_| Slot {
                    client: Mutex::new(None),
                    replacing: tokio::sync::Mutex::new(()),
                })
                .collect(),
            config,
            query_timeout,
            next: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
        };
        for slot in &pool.slots {
            let client = pool.open().await?;
            *lock(&slot.client) = Some(client);
        }
        Ok(pool)
    }

    /// How many connections the pool keeps.
    pub fn size(&self) -> usize {
        self.slots.len()
    }

    /// The next client in turn. When its connection has failed, a new one is opened in its
    /// place first; if that fails, another healthy client is returned, or the error when
    /// there is none.
    pub async fn client(&self) -> Result<Client, Error> {
        if self.closed.load(Ordering::Acquire) {
            return Err(closed());
        }
        let start = self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len();
        let slot = &self.slots[start];
        if let Some(client) = healthy(slot) {
            return Ok(client);
        }
        match self.replace(slot).await {
            Ok(client) => Ok(client),
            Err(e) => {
                for i in 1..self.slots.len() {
                    if let Some(client) = healthy(&self.slots[(start + i) % self.slots.len()]) {
                        return Ok(client);
                    }
                }
                Err(e)
            }
        }
    }

    /// Closes the pool: no client is handed out any more, and each connection closes once
    /// the clients already handed out are dropped (queries already queued still run).
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        for slot in &self.slots {
            lock(&slot.client).take();
        }
    }

    /// Replaces the slot's broken client, unless another caller did meanwhile.
    async fn replace(&self, slot: &Slot) -> Result<Client, Error> {
        let _replacing = slot.replacing.lock().await;
        if let Some(client) = healthy(slot) {
            return Ok(client);
        }
        let client = self.open().await?;
        *lock(&slot.client) = Some(client.clone());
        Ok(client)
    }

    async fn open(&self) -> Result<Client, Error> {
        let mut conn = Connection::connect_with(&self.config).await?;
        conn.set_query_timeout(self.query_timeout);
        Client::new(conn)
    }
}

/// The slot's client when its connection is open.
fn healthy(slot: &Slot) -> Option<Client> {
    lock(&slot.client)
        .as_ref()
        .filter(|client| !client.is_closed())
        .cloned()
}

fn lock(client: &Mutex<Option<Client>>) -> std::sync::MutexGuard<'_, Option<Client>> {
    // Note: the lock is only held to clone or replace the handle, which cannot panic.
    client
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The error of a pool that was closed.
fn closed() -> Error {
    Error::new(
        Kind::Closed,
        "the client pool is closed; open a new one with ClientPool::connect",
    )
}
