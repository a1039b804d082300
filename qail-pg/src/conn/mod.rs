//! The async connection: connect, TLS, startup and authentication, query flows.
//!
//! One flow per file: [`connect`] opens the socket and negotiates TLS, [`startup`] and
//! [`auth`] run the handshake, [`simple_query`], [`prepare`] and [`query`] the queries.
//! [`Connection`] keeps the state they share: the stream, the statement cache, the server's
//! parameters, and how many Sync cycles are still unanswered.
//!
//! # Writing a flow (pipeline, COPY, templates…)
//!
//! A flow is a file in this module with an `impl Connection` block:
//!
//! 1. `self.ready().await?` — refuses a broken connection, sends bytes a dropped flow left
//!    unsent and drains the replies of dropped flows up to their ReadyForQuery.
//! 2. Encode messages with `crate::proto::message` into `self.stream.write_buf()`; on an
//!    encoding error truncate the buffer back to its length before (nothing is sent).
//! 3. For every Sync (or simple Query) written, `self.pending_syncs += 1` — before any await.
//! 4. `self.stream.flush().await?`.
//! 5. Read with `self.recv().await?` → `(tag, body_range)` (notices and ParameterStatus are
//!    handled there); decode with `Backend::decode(tag, self.stream.body(range))` or the
//!    message's own `decode`. On `E` keep `self.db_error(range)` and read on; on `Z` call
//!    `self.on_ready(range)?` (it decrements `pending_syncs`); skip `3` (CloseComplete of
//!    an evicted statement). Anything unexpected is `self.protocol_error(..)`; a decode
//!    failure `self.decode_error(e)` — both mark the connection broken.
//!
//! A future dropped anywhere in this sequence leaves the connection usable: unsent bytes stay
//! in the write buffer, unread replies are counted by `pending_syncs`. (An atomic pipeline
//! writes its one Sync last; until then `open_batch` says the next flow must end the batch.)

mod auth;
mod cache;
mod cancel;
mod compiled;
pub(crate) mod config;
mod connect;
mod copy;
mod executor;
mod fetch_stream;
mod notify;
mod pipeline;
mod prepare;
mod query;
mod reset;
mod simple_query;
mod startup;
mod statement;
mod stream;
pub(crate) mod tls;
mod trace;
mod transaction;
mod typed_query;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::time::Duration;

pub use cancel::CancelToken;
pub use copy::CopyIn;
pub use executor::Executor;
pub use notify::{Listener, Notification};
pub use pipeline::{
    Atomic, Handle, PerQuery, Pipeline, PipelineBuilder, PipelineResults, SqlQueries,
};
pub use statement::Statement;
pub use transaction::{IsolationLevel, Transaction, TransactionBuilder};

use crate::error::{DbError, Error, Kind};
use crate::proto::message::{ParameterStatus, ReadyForQuery, TransactionStatus, error_response};
use cache::StatementCache;
use config::Config;
use stream::Stream;

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
    transaction_status: TransactionStatus,
    /// Sync (or simple Query) messages written whose ReadyForQuery has not been read yet.
    pending_syncs: usize,
    /// How many of `pending_syncs` belong to a reset queued by the pool (see [`reset`]).
    reset_syncs: usize,
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
    /// Notifications received and not yet taken; never dropped.
    notifications: VecDeque<Notification>,
    /// The time-out applied to each query, if any.
    query_timeout: Option<Duration>,
    /// Where and how to send a CancelRequest for this session.
    cancel_target: Option<std::sync::Arc<cancel::Target>>,
    /// The queue of the last pipeline, empty, kept for its memory.
    spare_slots: VecDeque<pipeline::Slot>,
    /// A pooler in transaction mode sits in front of the server: nothing is kept on the
    /// server from one Sync to the next (see [`config::Pooler`]).
    pooled_transactions: bool,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("process_id", &self.process_id)
            .field("transaction_status", &self.transaction_status)
            .field("pending_syncs", &self.pending_syncs)
            .field("closed", &self.stream.is_broken())
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Connects with a libpq connection string (URL or `key=value`); unset options come from
    /// the `PG*` environment variables.
    pub async fn connect(s: &str) -> Result<Connection, Error> {
        let config = Config::parse(s)?;
        Connection::connect_with(&config).await
    }

    /// Connects with a parsed [`Config`], trying its hosts in order.
    pub async fn connect_with(config: &Config) -> Result<Connection, Error> {
        trace::connect(connect::connect(config)).await
    }

    fn new(stream: Stream, statement_cache_size: usize) -> Connection {
        Connection {
            stream,
            parameters: HashMap::new(),
            process_id: 0,
            secret_key: Vec::new(),
            transaction_status: TransactionStatus::Idle,
            pending_syncs: 0,
            reset_syncs: 0,
            open_batch: false,
            cache: StatementCache::new(statement_cache_size),
            notice_handler: None,
            unconfirmed: Vec::new(),
            notifications: VecDeque::new(),
            query_timeout: None,
            cancel_target: None,
            spare_slots: VecDeque::new(),
            pooled_transactions: false,
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
    /// ([`Pooler::Transaction`](config::Pooler::Transaction)) the size stays 0.
    pub fn set_statement_cache_size(&mut self, size: usize) {
        let size = if self.pooled_transactions { 0 } else { size };
        for name in self.cache.resize(size) {
            prepare::close_statement(&mut self.stream, &name);
        }
    }

    /// Ends the session politely (Terminate). Dropping the connection also closes it.
    pub async fn close(mut self) {
        self.stream.terminate().await;
    }

    /// Makes the connection ready for a new flow: refuses a broken one, sends what an
    /// interrupted flow left unsent, and reads the replies of interrupted flows up to their
    /// ReadyForQuery.
    pub(crate) async fn ready(&mut self) -> Result<(), Error> {
        if !self.stream.is_broken()
            && self.unconfirmed.is_empty()
            && !self.has_interrupted_flow()
            && (self.reset_syncs > 0 || self.stream.unsent() == 0)
        {
            // Note: the common case (nothing owed but a reset's replies, which the flow's
            // recv reads first), decided without a future of its own.
            return Ok(());
        }
        Box::pin(self.catch_up()).await
    }

    /// [`ready`](Self::ready) when something is owed: an error, unsent bytes, replies.
    async fn catch_up(&mut self) -> Result<(), Error> {
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
        if self.reset_syncs > 0 && !self.has_interrupted_flow() {
            // Note: only a reset's replies are owed; the flow's recv reads them first.
            return Ok(());
        }
        self.stream.flush().await?;
        while self.pending_syncs > 0 {
            self.skip_to_ready().await?;
        }
        Ok(())
    }

    /// [`ready`](Self::ready), then sends a reset queued by the pool and reads its replies:
    /// for flows that read frames without [`recv`](Self::recv) (pipelines, notifications),
    /// which would otherwise take the reset's replies for their own.
    pub(crate) async fn ready_without_reset(&mut self) -> Result<(), Error> {
        self.ready().await?;
        if self.reset_syncs > 0 {
            self.stream.flush().await?;
            self.finish_reset().await?;
        }
        Ok(())
    }

    /// Reads and discards messages up to the next ReadyForQuery.
    pub(crate) async fn skip_to_ready(&mut self) -> Result<(), Error> {
        loop {
            let (tag, range) = self.recv().await?;
            if tag == b'Z' {
                return self.on_ready(range);
            }
        }
    }

    /// Handles a ReadyForQuery body: the transaction status, one fewer pending Sync.
    pub(crate) fn on_ready(&mut self, body: std::ops::Range<usize>) -> Result<(), Error> {
        match ReadyForQuery::decode(self.stream.body(body)) {
            Ok(r) => {
                self.transaction_status = r.status;
                self.pending_syncs = self.pending_syncs.saturating_sub(1);
                Ok(())
            }
            Err(_) => Err(self.protocol_error("a malformed ReadyForQuery")),
        }
    }

    /// The next message that belongs to the current flow. Notices, parameter reports and
    /// notifications, which the server may send at any time, are handled here.
    pub(crate) async fn recv(&mut self) -> Result<(u8, std::ops::Range<usize>), Error> {
        if self.reset_syncs > 0 {
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
    #[inline]
    pub(crate) fn try_recv(&mut self) -> Result<Option<(u8, std::ops::Range<usize>)>, Error> {
        if self.reset_syncs > 0 {
            return Ok(None);
        }
        while let Some((tag, range)) = self.stream.try_frame()? {
            if !self.on_async_message(tag, range.clone())? {
                return Ok(Some((tag, range)));
            }
        }
        Ok(None)
    }

    /// Whether `tag` is a message the server may send at any time, which
    /// [`Connection::on_async_message`] handles: a cheap test for hot read loops.
    pub(crate) fn is_async_message(tag: u8) -> bool {
        matches!(tag, b'N' | b'S' | b'A')
    }

    /// Handles a message the server may send at any time (notice, parameter report,
    /// notification); false for any other message.
    #[inline]
    pub(crate) fn on_async_message(
        &mut self,
        tag: u8,
        range: std::ops::Range<usize>,
    ) -> Result<bool, Error> {
        if !matches!(tag, b'N' | b'S' | b'A') {
            return Ok(false);
        }
        self.on_unsolicited(tag, range)?;
        Ok(true)
    }

    /// Handles a notice, parameter report or notification.
    #[cold]
    fn on_unsolicited(&mut self, tag: u8, range: std::ops::Range<usize>) -> Result<bool, Error> {
        match tag {
            b'N' => self.on_notice(range)?,
            b'S' => self.on_parameter_status(range)?,
            b'A' => self.on_notification(range)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn on_notice(&mut self, range: std::ops::Range<usize>) -> Result<(), Error> {
        let notice = error_response::decode_fields(self.stream.body(range))
            .map_err(|e| self.decode_error(e))?;
        if let Some(handler) = &mut self.notice_handler {
            handler(&notice);
        } else {
            #[cfg(feature = "tracing")]
            tracing::info!(code = %notice.code, "{}", notice.message);
        }
        Ok(())
    }

    fn on_parameter_status(&mut self, range: std::ops::Range<usize>) -> Result<(), Error> {
        let (name, value) = match ParameterStatus::decode(self.stream.body(range)) {
            Ok(p) => (p.name.to_owned(), p.value.to_owned()),
            Err(e) => return Err(self.decode_error(e)),
        };
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

    /// The error for an ErrorResponse body.
    /// The parameter types of a ParameterDescription ('t') whose body is `body`.
    pub(crate) fn described_params(
        &mut self,
        body: std::ops::Range<usize>,
    ) -> Result<Vec<crate::types::Oid>, Error> {
        match crate::proto::message::ParameterDescription::decode(self.stream.body(body)) {
            Ok(p) => Ok(p.types),
            Err(e) => Err(self.decode_error(e)),
        }
    }

    /// The result columns of a RowDescription ('T'), or none for NoData ('n').
    pub(crate) fn described_columns(
        &mut self,
        tag: u8,
        body: std::ops::Range<usize>,
    ) -> Result<Vec<crate::row::Column>, Error> {
        if tag != b'T' {
            return Ok(Vec::new());
        }
        match crate::proto::message::RowDescription::decode(self.stream.body(body)) {
            Ok(d) => Ok(d
                .fields
                .iter()
                .map(crate::row::Column::from_field)
                .collect()),
            Err(e) => Err(self.decode_error(e)),
        }
    }

    pub(crate) fn db_error(&mut self, body: std::ops::Range<usize>) -> Error {
        match error_response::decode_fields(self.stream.body(body)) {
            Ok(db) => Error::with_source(Kind::Db, "the server reported an error", db),
            Err(e) => self.decode_error(e),
        }
    }
}
