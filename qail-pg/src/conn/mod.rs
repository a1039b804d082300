//! The async connection: connect, TLS, startup and authentication, query flows.
//!
//! One flow per file: [`connect`] opens the socket, negotiates TLS, runs the startup
//! handshake and authentication (and sends cancel requests), [`simple_query`], [`prepare`]
//! and [`query`] run the queries, [`timeout`] bounds them.
//! [`Connection`] keeps the state they share: the stream, the statement cache, the server's
//! parameters, and how many Sync cycles are still unanswered.
//! [`client`] shares one connection among many tasks: an I/O task owns it and runs their
//! queries through the [`pipeline`] engine.
//!
//! # Writing a flow (pipeline, COPY, templates…)
//!
//! A flow is a file in this module with an `impl Connection` block:
//!
//! 1. `self.ready().await?` — refuses a broken connection, sends bytes a dropped flow left
//!    unsent and drains the replies of dropped flows up to their ReadyForQuery.
//! 2. Encode messages with `crate::proto::message` into `self.stream.write_buf()`; on an
//!    encoding error truncate the buffer back to its length before (nothing is sent).
//! 3. For every Sync (or simple Query) written, `self.syncs.sent(1)` — before any await.
//! 4. `self.stream.flush().await?`.
//! 5. Read with `self.recv().await?` (notices, parameter reports and notifications are
//!    handled there) and match `self.stream.decode(message)`, a [`Backend`] borrowing from
//!    the read buffer. On an ErrorResponse keep [`server_error`]`(db)` and read on; on
//!    ReadyForQuery call `self.on_ready(r)` (it answers one of `syncs`); skip CloseComplete
//!    (of an evicted statement). Anything unexpected is `self.protocol_error(..)`; a decode
//!    failure `self.decode_error(e)` — both mark the connection broken.
//!
//! A future dropped anywhere in this sequence leaves the connection usable: unsent bytes stay
//! in the write buffer, unread replies are counted by `syncs`. (An atomic pipeline writes its
//! one Sync last; until then `open_batch` says the next flow must end the batch.)

mod cache;
mod client;
mod compiled;
pub(crate) mod connect;
mod copy;
mod describe_all;
mod executor;
mod fetch_stream;
mod notify;
mod pipeline;
mod prepare;
mod query;
mod reset;
mod row_sink;
mod simple_query;
mod spare_rows;
mod statement;
mod stream;
mod syncs;
mod timeout;
mod trace;
mod transaction;
mod typed_query;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::pin::Pin;
use std::time::Duration;

pub use client::Client;
pub use connect::CancelToken;
pub use copy::CopyIn;
pub use executor::{Executor, RunTarget, Runner};
pub use notify::{Listener, Notification};
pub use pipeline::{
    Atomic, Handle, PerQuery, Pipeline, PipelineBuilder, PipelineResults, QueryOutput, SqlQueries,
};
pub use statement::Statement;
pub use transaction::{IsolationLevel, Transaction, TransactionBuilder};

use crate::config::Config;
use crate::error::{DbError, Error, Kind};
use crate::proto::ProtocolVersion;
use crate::proto::message::{Backend, ReadyForQuery, RowDescription, TransactionStatus};
use cache::StatementCache;
use stream::{Received, Stream};
use syncs::Syncs;

/// A future boxed as `dyn Future` by a non-inlined function of qail-pg, for a cold path.
///
/// Note: an async function's code is compiled where its future is polled, once per code
/// unit (of qail-pg and of the program) that polls it. Behind `dyn Future` made in qail-pg it
/// is compiled once, here: connecting, opening a pool, the pool's acquire, catching up after
/// an interrupted flow, skipping to the end of a failed cycle, preparing a statement, the
/// cancel after a time-out. Each costs one allocation when it runs, which these paths
/// (rare, or a round trip of their own) do not notice.
pub(crate) type BoxedFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A callback that receives the server's notices (NoticeResponse).
type NoticeHandler = Box<dyn FnMut(&DbError) + Send>;

/// An open session with a PostgreSQL server.
///
/// ```no_run
/// # async fn run() -> Result<(), qail_pg::Error> {
/// let mut conn = qail_pg::Connection::connect("postgres://postgres@localhost/postgres").await?;
/// let rows = conn.query("SELECT $1::int4 + 1", &[&41i32]).await?;
/// assert_eq!(rows[0].get::<i32>(0), 42);
/// # Ok(()) }
/// ```
pub struct Connection {
    stream: Stream,
    parameters: HashMap<String, String>,
    process_id: i32,
    secret_key: Vec<u8>,
    /// The protocol version requested, then the one the server agreed to.
    protocol_version: ProtocolVersion,
    transaction_status: TransactionStatus,
    /// Sync (or simple Query) messages written whose ReadyForQuery has not been read yet,
    /// those of a reset queued by the pool (see [`reset`]) among them.
    syncs: Syncs,
    /// An atomic pipeline's messages, or a pipeline's Parse + Describe of a new template,
    /// are queued or sent but not their Sync: the server holds an implicit transaction open.
    /// A flow that finds it set (the pipeline was dropped) abandons the batch first, so it is
    /// rolled back and its replies are read (see [`pipeline`]).
    open_batch: bool,
    cache: StatementCache,
    notice_handler: Option<NoticeHandler>,
    /// Named statements whose Parse was sent by a flow that did not see its outcome; closed
    /// by the next [`Connection::ready`] so none is left behind on the server.
    unconfirmed: Vec<String>,
    /// Notifications received and not yet taken, bounded (see [`notify`]).
    notifications: notify::Queue,
    /// The time-out applied to each query, if any.
    query_timeout: Option<Duration>,
    /// Whether [`Connection::skip_to_ready`] dropped an ErrorResponse since it was last
    /// cleared: after a time-out, the cancelled statement failed (rather than completed).
    discarded_error: bool,
    /// Where and how to send a CancelRequest for this session.
    cancel_target: Option<std::sync::Arc<connect::Target>>,
    /// The queue of the last pipeline, empty, kept for its memory.
    spare_slots: VecDeque<pipeline::Slot>,
    /// The row vector the next `fetch_all` fills (see [`spare_rows`]).
    spare_rows: spare_rows::SpareRows,
    /// The vector of results the next pipeline's `rows` fills, for the same reason.
    spare_results: spare_rows::SpareRows,
    /// A pooler in transaction mode sits in front of the server: nothing is kept on the
    /// server from one Sync to the next (see [`Pooler`](crate::Pooler)).
    pooled_transactions: bool,
    /// Whether session state may have changed since the connection was opened or last reset
    /// (see [`reset`]): set when run-time SQL, or a template marked
    /// [`changes_session`](crate::Template::changes_session), is sent, or when the server
    /// reports a setting's new value; cleared when [`Reset::Session`](crate::pool::Reset)'s
    /// statements are queued.
    session_changed: bool,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("process_id", &self.process_id)
            .field("transaction_status", &self.transaction_status)
            .field("pending_syncs", &self.syncs.pending())
            .field("closed", &self.stream.is_broken())
            .finish_non_exhaustive()
    }
}

/// How long [`Connection::close`] waits for the socket to take Terminate when no query
/// time-out is set.
const CLOSE_LIMIT: Duration = Duration::from_secs(5);

impl Connection {
    /// Connects with a libpq connection string (URL or `key=value`); unset options come from
    /// the `PG*` environment variables.
    pub async fn connect(s: &str) -> Result<Connection, Error> {
        let config = Config::parse(s)?;
        Connection::connect_with(&config).await
    }

    /// Connects with a parsed [`Config`], trying its hosts in order.
    pub async fn connect_with(config: &Config) -> Result<Connection, Error> {
        Connection::open(config).await
    }

    /// The connection's setup (host list, TLS, authentication, the session check) as one
    /// boxed future (see [`BoxedFuture`]).
    #[inline(never)]
    fn open(config: &Config) -> BoxedFuture<'_, Result<Connection, Error>> {
        Box::pin(trace::connect(config, connect::connect(config)))
    }

    fn new(stream: Stream, statement_cache_size: usize) -> Connection {
        Connection {
            stream,
            parameters: HashMap::new(),
            process_id: 0,
            secret_key: Vec::new(),
            protocol_version: ProtocolVersion::V3_0,
            transaction_status: TransactionStatus::Idle,
            syncs: Syncs::default(),
            open_batch: false,
            cache: StatementCache::new(statement_cache_size),
            notice_handler: None,
            unconfirmed: Vec::new(),
            notifications: notify::Queue::default(),
            query_timeout: None,
            discarded_error: false,
            cancel_target: None,
            spare_slots: VecDeque::new(),
            spare_rows: spare_rows::SpareRows::default(),
            spare_results: spare_rows::SpareRows::default(),
            pooled_transactions: false,
            session_changed: false,
        }
    }

    /// A run-time parameter the server reported (`server_version`, `TimeZone`, …).
    pub fn parameter_status(&self, name: &str) -> Option<&str> {
        self.parameters.get(name).map(String::as_str)
    }

    /// The transaction status reported by the last ReadyForQuery.
    pub fn transaction_status(&self) -> TransactionStatus {
        self.transaction_status
    }

    /// The server process ID serving this connection.
    pub fn process_id(&self) -> i32 {
        self.process_id
    }

    /// The protocol version of the session: `max_protocol_version` when the server speaks
    /// it, else the older one the server offered (3.0 before PostgreSQL 18).
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.protocol_version
    }

    /// Whether the connection is broken (a read or write failed, or the server broke the
    /// protocol) and must be discarded.
    pub fn is_closed(&self) -> bool {
        self.stream.is_broken()
    }

    /// Sets a callback for the server's notices (`RAISE NOTICE`, warnings…). Without one,
    /// notices are logged through `tracing` when that feature is on, else dropped.
    pub fn set_notice_handler(&mut self, handler: impl FnMut(&DbError) + Send + 'static) {
        self.notice_handler = Some(Box::new(handler));
    }

    /// Sets how many prepared statements the run-time statement cache keeps (default 256).
    /// Statements evicted are closed on the server with the next message sent.
    ///
    /// With a cache, a compiled query is described and checked against the server once per
    /// connection before it first runs, so a query whose tables changed (schema drift) is
    /// reported without having run. Size 0 prepares every call afresh in the same write as
    /// its execution: faster for one-off statements, but a drifted statement has already run
    /// when the drift is reported. Behind a pooler in transaction mode
    /// ([`Pooler::Transaction`](crate::Pooler::Transaction)) the size stays 0.
    pub fn set_statement_cache_size(&mut self, size: usize) {
        let size = if self.pooled_transactions { 0 } else { size };
        for name in self.cache.resize(size) {
            prepare::close_statement(&mut self.stream, &name);
        }
    }

    /// Ends the session politely (Terminate). Dropping the connection also closes it.
    pub async fn close(mut self) {
        // Note: a vanished peer can leave the socket unable to take even Terminate; give up
        // after the query time-out (or CLOSE_LIMIT) and drop the socket.
        let limit = self.query_timeout.unwrap_or(CLOSE_LIMIT);
        let _ = tokio::time::timeout(limit, self.stream.terminate()).await;
    }

    /// Makes the connection ready for a new flow: refuses a broken one, sends what an
    /// interrupted flow left unsent, and reads the replies of interrupted flows up to their
    /// ReadyForQuery.
    pub(crate) async fn ready(&mut self) -> Result<(), Error> {
        if !self.stream.is_broken()
            && self.unconfirmed.is_empty()
            && !self.has_interrupted_flow()
            && (self.syncs.resetting() || self.stream.unsent() == 0)
        {
            // Note: the common case (nothing owed but a reset's replies, which the flow's
            // recv reads first), decided without a future of its own.
            return Ok(());
        }
        self.catch_up().await
    }

    /// [`ready`](Self::ready) when something is owed: an error, unsent bytes, replies.
    #[inline(never)]
    fn catch_up(&mut self) -> BoxedFuture<'_, Result<(), Error>> {
        Box::pin(self.catch_up_now())
    }

    async fn catch_up_now(&mut self) -> Result<(), Error> {
        if self.stream.is_broken() {
            return Err(Error::new(
                Kind::Closed,
                "the connection is closed after an earlier failure; open a new connection",
            ));
        }
        self.abandon_batch();
        for name in std::mem::take(&mut self.unconfirmed) {
            prepare::close_statement(&mut self.stream, &name);
        }
        if self.syncs.resetting() && !self.has_interrupted_flow() {
            // Note: only a reset's replies are owed; the flow's recv reads them first.
            return Ok(());
        }
        self.stream.flush().await?;
        self.drain().await
    }

    /// Reads and discards the replies of every cycle owed, up to the last ReadyForQuery.
    /// Cancel safe: each cycle is accounted for as its ReadyForQuery is read.
    async fn drain(&mut self) -> Result<(), Error> {
        while self.syncs.pending() > 0 {
            self.skip_to_ready().await?;
        }
        Ok(())
    }

    /// [`ready`](Self::ready), then sends a reset queued by the pool and reads its replies:
    /// for flows that read frames without [`recv`](Self::recv) (pipelines, notifications),
    /// which would otherwise take the reset's replies for their own.
    pub(crate) async fn ready_without_reset(&mut self) -> Result<(), Error> {
        self.ready().await?;
        if self.syncs.resetting() {
            self.stream.flush().await?;
            self.finish_reset().await?;
        }
        Ok(())
    }

    /// Reads and discards messages up to the next ReadyForQuery (after an error: a cold path).
    #[inline(never)]
    pub(crate) fn skip_to_ready(&mut self) -> BoxedFuture<'_, Result<(), Error>> {
        Box::pin(self.skip_to_ready_now())
    }

    async fn skip_to_ready_now(&mut self) -> Result<(), Error> {
        loop {
            let message = self.recv().await?;
            match self.stream.decode(message) {
                Ok(Backend::ReadyForQuery(r)) => {
                    self.on_ready(r);
                    return Ok(());
                }
                Ok(Backend::ErrorResponse(_)) => self.discarded_error = true,
                Ok(_) => {}
                Err(e) => return Err(self.decode_error(e)),
            }
        }
    }

    /// Handles a ReadyForQuery: the transaction status, one cycle answered.
    #[inline]
    pub(crate) fn on_ready(&mut self, ready: ReadyForQuery) {
        self.transaction_status = ready.status;
        self.syncs.on_ready_for_query();
        self.stream.end_cycle();
        if self.syncs.pending() == 0 {
            self.stream.settled();
        }
    }

    /// The next message that belongs to the current flow, to decode with
    /// [`Stream::decode`]. Notices, parameter reports and notifications, which the server
    /// may send at any time, are handled here.
    pub(crate) async fn recv(&mut self) -> Result<Received, Error> {
        if self.syncs.resetting() {
            Box::pin(self.finish_reset()).await?;
        }
        loop {
            if let Some(found) = self.try_recv()? {
                return Ok(found);
            }
            self.stream.fill().await?;
        }
    }

    /// [`recv`](Self::recv) without waiting: the next message of the current flow if it is
    /// already in the read buffer (and no reset's replies come first), else `None`. Lets a
    /// flow read the messages that arrived together without awaiting once per message.
    /// Always inlined, as [`Stream::try_frame`] is: it runs once per message.
    #[inline(always)]
    pub(crate) fn try_recv(&mut self) -> Result<Option<Received>, Error> {
        if self.syncs.resetting() {
            return Ok(None);
        }
        while let Some(message) = self.stream.try_frame()? {
            if !message.is_asynchronous() {
                return Ok(Some(message));
            }
            self.on_async(message)?;
        }
        Ok(None)
    }

    /// Handles a message the server may send at any time ([`Received::is_asynchronous`]):
    /// a notice, a parameter report or a notification.
    #[cold]
    pub(crate) fn on_async(&mut self, message: Received) -> Result<(), Error> {
        match self.stream.decode(message) {
            Ok(Backend::NoticeResponse(notice)) => self.on_notice(&notice),
            Ok(Backend::ParameterStatus(p)) => {
                // Note: a reported setting changed in a flow, by whatever statement.
                self.session_changed = true;
                let (name, value) = (p.name.to_owned(), p.value.to_owned());
                self.on_parameter_status(name, value)?;
            }
            Ok(Backend::NotificationResponse(n)) => {
                let notification = notify::Notification::from_message(n);
                self.notifications.push(notification);
            }
            Ok(other) => {
                let what = other.name();
                return Err(self.protocol_error(&format!("a {what} out of turn")));
            }
            Err(e) => return Err(self.decode_error(e)),
        }
        Ok(())
    }

    fn on_notice(&mut self, notice: &DbError) {
        if let Some(handler) = &mut self.notice_handler {
            handler(notice);
        } else {
            #[cfg(feature = "tracing")]
            tracing::info!(code = %notice.code, "{}", notice.message);
        }
    }

    fn on_parameter_status(&mut self, name: String, value: String) -> Result<(), Error> {
        if name == "client_encoding" && value != "UTF8" {
            self.stream.set_broken();
            return Err(Error::new(
                Kind::Protocol,
                format!(
                    "the server switched client_encoding to {value}; qail-pg only speaks UTF8, \
                     so do not change client_encoding; the connection is closed"
                ),
            ));
        }
        self.parameters.insert(name, value);
        Ok(())
    }

    /// A protocol error that breaks the connection: the server sent `what`.
    pub(crate) fn protocol_error(&mut self, what: &str) -> Error {
        self.stream.set_broken();
        Error::new(
            Kind::Protocol,
            format!(
                "the server sent {what}, which the protocol does not allow here; \
                 the connection is closed, open a new one"
            ),
        )
    }

    /// A malformed message breaks the connection.
    pub(crate) fn decode_error(&mut self, e: crate::proto::message::DecodeError) -> Error {
        self.stream.set_broken();
        Error::with_source(
            Kind::Protocol,
            "the server sent an invalid message; the connection is closed",
            e,
        )
    }
}

/// The result columns of a RowDescription.
pub(crate) fn described_columns(description: &RowDescription<'_>) -> Vec<crate::row::Column> {
    description
        .fields
        .iter()
        .map(crate::row::Column::from_field)
        .collect()
}

/// The error for an ErrorResponse.
pub(crate) fn server_error(db: Box<DbError>) -> Error {
    // Note: unsized in place, so `Error::as_db_error` finds the DbError itself.
    let source: Box<dyn std::error::Error + Send + Sync> = db;
    Error::with_source(Kind::Db, "the server reported an error", source)
}
