//! Transactions: BEGIN … COMMIT/ROLLBACK, savepoints for nested transactions, and
//! rollback on drop.
//!
//! A [`Transaction`] dropped without [`commit`](Transaction::commit) or
//! [`rollback`](Transaction::rollback) — also when a future holding it is dropped — queues a
//! ROLLBACK (or ROLLBACK TO SAVEPOINT) that goes out with the connection's next use, before
//! anything else: `Drop` cannot wait for the server, but the connection's queue keeps order.

use std::ops::{Deref, DerefMut};

use super::{Connection, Executor, server_error};
use crate::TransactionStatus;
use crate::error::{Error, Kind};
use crate::proto::message::{Backend, Query};

/// The isolation level of a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationLevel {
    /// `READ UNCOMMITTED` (PostgreSQL runs it as READ COMMITTED).
    ReadUncommitted,
    /// `READ COMMITTED`, PostgreSQL's default.
    ReadCommitted,
    /// `REPEATABLE READ`.
    RepeatableRead,
    /// `SERIALIZABLE`.
    Serializable,
}

impl IsolationLevel {
    fn sql(self) -> &'static str {
        match self {
            IsolationLevel::ReadUncommitted => " ISOLATION LEVEL READ UNCOMMITTED",
            IsolationLevel::ReadCommitted => " ISOLATION LEVEL READ COMMITTED",
            IsolationLevel::RepeatableRead => " ISOLATION LEVEL REPEATABLE READ",
            IsolationLevel::Serializable => " ISOLATION LEVEL SERIALIZABLE",
        }
    }
}

/// Options for a new transaction; see [`Connection::build_transaction`].
#[derive(Debug)]
pub struct TransactionBuilder<'c> {
    conn: &'c mut Connection,
    isolation: Option<IsolationLevel>,
    read_only: Option<bool>,
    deferrable: Option<bool>,
}

impl<'c> TransactionBuilder<'c> {
    /// Sets the isolation level.
    pub fn isolation_level(mut self, level: IsolationLevel) -> Self {
        self.isolation = Some(level);
        self
    }

    /// Makes the transaction `READ ONLY` (true) or `READ WRITE` (false).
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = Some(read_only);
        self
    }

    /// Makes the transaction `DEFERRABLE` (true) or `NOT DEFERRABLE` (false); it matters only
    /// for serializable read-only transactions.
    pub fn deferrable(mut self, deferrable: bool) -> Self {
        self.deferrable = Some(deferrable);
        self
    }

    /// Starts the transaction.
    pub async fn begin(self) -> Result<Transaction<'c>, Error> {
        let mut sql = String::from("BEGIN");
        if let Some(level) = self.isolation {
            sql.push_str(level.sql());
        }
        match self.read_only {
            Some(true) => sql.push_str(" READ ONLY"),
            Some(false) => sql.push_str(" READ WRITE"),
            None => {}
        }
        match self.deferrable {
            Some(true) => sql.push_str(" DEFERRABLE"),
            Some(false) => sql.push_str(" NOT DEFERRABLE"),
            None => {}
        }
        let conn = self.conn;
        super::timeout::timed!(conn, conn.ready())?;
        if conn.transaction_status != TransactionStatus::Idle {
            return Err(Error::new(
                Kind::Usage,
                "a transaction is already open on this connection; call begin() on the \
                 Transaction for a savepoint, or commit or roll back the open one first",
            ));
        }
        Transaction::start(conn, 0, &sql).await
    }
}

/// An open transaction (or savepoint, when nested). Run queries on it as on the connection
/// (it dereferences to [`Connection`] and is an [`Executor`]); it rolls back when dropped
/// without [`commit`](Transaction::commit).
#[derive(Debug)]
pub struct Transaction<'c> {
    conn: &'c mut Connection,
    /// 0 for the transaction, n for the n-th nested savepoint.
    depth: u32,
    /// Whether COMMIT or ROLLBACK was queued; else dropping queues a rollback.
    done: bool,
}

impl Connection {
    /// Starts a transaction with the server's default options.
    pub async fn begin(&mut self) -> Result<Transaction<'_>, Error> {
        self.build_transaction().begin().await
    }

    /// Options for a transaction: isolation level, read only, deferrable.
    ///
    /// ```no_run
    /// # async fn run(conn: &mut qail_pg::Connection) -> Result<(), qail_pg::Error> {
    /// use qail_pg::IsolationLevel;
    /// let tx = conn
    ///     .build_transaction()
    ///     .isolation_level(IsolationLevel::Serializable)
    ///     .read_only(true)
    ///     .begin()
    ///     .await?;
    /// tx.commit().await?;
    /// # Ok(()) }
    /// ```
    pub fn build_transaction(&mut self) -> TransactionBuilder<'_> {
        TransactionBuilder {
            conn: self,
            isolation: None,
            read_only: None,
            deferrable: None,
        }
    }

    /// Queues a simple query whose reply the next [`Connection::ready`] drains.
    fn queue_simple(&mut self, sql: &str) -> Result<(), Error> {
        // Note: a ROLLBACK queued after a dropped atomic pipeline must not join its batch.
        self.abandon_batch();
        Query { sql }
            .encode(self.stream.write_buf())
            .map_err(super::prepare::encode_error)?;
        self.syncs.sent(1);
        Ok(())
    }

    /// Reads the replies of one simple query; returns its last command tag.
    async fn read_simple(&mut self) -> Result<String, Error> {
        let mut tag_seen = String::new();
        let mut error = None;
        loop {
            let message = self.recv().await?;
            match self.stream.decode(message) {
                Ok(Backend::CommandComplete(done)) => match done.tag() {
                    Ok(done) => tag_seen = done.to_owned(),
                    Err(e) => return Err(self.decode_error(e)),
                },
                Ok(Backend::ErrorResponse(db)) => error = Some(server_error(db)),
                Ok(Backend::ReadyForQuery(r)) => {
                    self.on_ready(r);
                    break;
                }
                // Note: CloseComplete of a statement closed with this command's write.
                Ok(Backend::EmptyQueryResponse | Backend::CloseComplete) => {}
                Ok(_) => {
                    return Err(self.protocol_error("an unexpected reply to a transaction command"));
                }
                Err(e) => return Err(self.decode_error(e)),
            }
        }
        error.map_or(Ok(tag_seen), Err)
    }
}

impl<'c> Transaction<'c> {
    /// Runs the statement that opens the transaction or savepoint. The transaction exists
    /// before it is sent: a future dropped meanwhile leaves a rollback queued.
    async fn start(conn: &'c mut Connection, depth: u32, sql: &str) -> Result<Self, Error> {
        let mut tx = Transaction {
            conn,
            depth,
            done: false,
        };
        tx.run(sql, false).await?;
        Ok(tx)
    }

    /// Runs one simple statement of the transaction's own under the query time-out; `ends`
    /// when it commits or rolls back, so that from the moment it is queued, dropping the
    /// transaction queues no rollback.
    async fn run(&mut self, sql: &str, ends: bool) -> Result<String, Error> {
        let Transaction { conn, done, .. } = self;
        let conn = &mut **conn;
        super::timeout::timed!(conn, run_untimed(conn, sql, ends.then_some(done)))
    }

    fn savepoint(&self) -> String {
        format!("qail_savepoint_{}", self.depth)
    }

    /// Starts a nested transaction: a savepoint, released on commit and rolled back to on
    /// rollback or drop.
    pub async fn begin(&mut self) -> Result<Transaction<'_>, Error> {
        let depth = self.depth + 1;
        let sql = format!("SAVEPOINT qail_savepoint_{depth}");
        Transaction::start(self.conn, depth, &sql).await
    }

    /// Commits the transaction (releases the savepoint).
    ///
    /// When an earlier statement failed, PostgreSQL rolls the transaction back instead; that
    /// is an error here.
    pub async fn commit(mut self) -> Result<(), Error> {
        let sql = match self.depth {
            0 => "COMMIT".to_owned(),
            _ => format!("RELEASE SAVEPOINT {}", self.savepoint()),
        };
        let tag = self.run(&sql, true).await?;
        if tag == "ROLLBACK" {
            return Err(Error::new(
                Kind::Db,
                "the transaction was rolled back, not committed, because a statement in it \
                 failed; handle that statement's error and run the transaction again",
            ));
        }
        Ok(())
    }

    /// Rolls the transaction back (to the savepoint, for a nested one).
    pub async fn rollback(mut self) -> Result<(), Error> {
        let sql = self.rollback_sql();
        self.run(&sql, true).await.map(drop)
    }

    fn rollback_sql(&self) -> String {
        match self.depth {
            0 => "ROLLBACK".to_owned(),
            _ => format!(
                "ROLLBACK TO SAVEPOINT {0}; RELEASE SAVEPOINT {0}",
                self.savepoint()
            ),
        }
    }

    /// The connection the transaction runs on.
    pub fn connection(&mut self) -> &mut Connection {
        self.conn
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if self.done || self.conn.is_closed() {
            return;
        }
        let sql = self.rollback_sql();
        // Note: the ROLLBACK goes out with the next use; a failure to encode it is
        // impossible for this constant text, and would leave the pool's reset to end it.
        let _ = self.conn.queue_simple(&sql);
    }
}

impl Deref for Transaction<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn
    }
}

impl DerefMut for Transaction<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.conn
    }
}

impl Executor for Transaction<'_> {
    fn connection(&mut self) -> &mut Connection {
        self.conn
    }
}

/// [`Transaction::run`] without the time-out: sets `ends_at` once the statement is queued.
async fn run_untimed(
    conn: &mut Connection,
    sql: &str,
    ends_at: Option<&mut bool>,
) -> Result<String, Error> {
    conn.ready().await?;
    conn.queue_simple(sql)?;
    if let Some(done) = ends_at {
        *done = true;
    }
    conn.stream.flush().await?;
    conn.read_simple().await
}
