//! Preparing statements: Parse + Describe(statement) + Sync, through the statement cache.
//!
//! See <https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-EXT-QUERY>.

use super::stream::Stream;
use super::{BoxedFuture, Connection, Statement, described_columns, server_error};
use crate::error::{Error, Kind};
use crate::proto::message::{Backend, Close, Describe, EncodeError, Parse, Target, sync};

impl Connection {
    /// Prepares `sql` and returns its parameter and column types as the server describes them.
    ///
    /// The statement is kept in the connection's statement cache, so running the same SQL
    /// with [`query`](Connection::query) afterwards does not prepare it again.
    pub async fn prepare(&mut self, sql: &str) -> Result<Statement, Error> {
        super::timeout::timed!(self, self.prepare_when_ready(sql))
    }

    /// [`Connection::prepare`] without the time-out.
    async fn prepare_when_ready(&mut self, sql: &str) -> Result<Statement, Error> {
        self.ready().await?;
        self.prepare_cached(sql).await
    }

    /// The cached statement for `sql`, preparing it on a miss. Evicted statements are
    /// closed with the next message sent.
    pub(crate) async fn prepare_cached(&mut self, sql: &str) -> Result<Statement, Error> {
        // Note: run-time SQL is not analyzed; the statement prepared may run later.
        self.session_changed = true;
        if let Some(statement) = self.cache.get(sql) {
            return Ok(statement);
        }
        if !self.cache.is_enabled() {
            return self.prepare_named(String::new(), sql).await;
        }
        let name = self.cache.next_name();
        // Note: until the description is read, a dropped future would leave the statement
        // on the server outside the cache; the next ready() closes it.
        self.unconfirmed.push(name.clone());
        let prepared = self.prepare_named(name.clone(), sql).await;
        self.unconfirmed.retain(|n| *n != name);
        let statement = prepared?;
        for evicted in self.cache.insert(sql, statement.clone()) {
            close_statement(&mut self.stream, &evicted);
        }
        Ok(statement)
    }

    /// Forgets the cached statement for `sql` and closes it on the server.
    pub(crate) fn evict(&mut self, sql: &str) {
        if let Some(name) = self.cache.remove(sql) {
            close_statement(&mut self.stream, &name);
        }
    }

    /// Prepares `sql` as statement `name`, one round trip (boxed: see [`BoxedFuture`]).
    #[inline(never)]
    pub(crate) fn prepare_named<'a>(
        &'a mut self,
        name: String,
        sql: &'a str,
    ) -> BoxedFuture<'a, Result<Statement, Error>> {
        Box::pin(self.prepare_named_now(name, sql))
    }

    async fn prepare_named_now(&mut self, name: String, sql: &str) -> Result<Statement, Error> {
        self.prepare_with_types(name, sql, &[]).await
    }

    /// Prepares `sql` as statement `name` with parameters of `types` (fewer leaves the rest
    /// to the server; 0 for one lets the server infer it), one round trip.
    pub(crate) async fn prepare_with_types(
        &mut self,
        name: String,
        sql: &str,
        types: &[crate::types::Oid],
    ) -> Result<Statement, Error> {
        self.session_changed = true;
        let buf = self.stream.write_buf();
        let mark = buf.len();
        let encoded = Parse {
            name: &name,
            query: sql,
            param_types: types,
        }
        .encode(buf)
        .and_then(|()| {
            Describe {
                target: Target::Statement,
                name: &name,
            }
            .encode(buf)
        });
        if let Err(e) = encoded {
            buf.truncate(mark);
            return Err(encode_error(e));
        }
        sync(buf);
        self.syncs.sent(1);
        self.stream.flush().await?;
        self.read_description(name).await
    }

    /// Reads ParseComplete, ParameterDescription, RowDescription or NoData, ReadyForQuery.
    pub(super) async fn read_description(&mut self, name: String) -> Result<Statement, Error> {
        let mut params = None;
        let mut columns = None;
        let mut error = None;
        loop {
            let message = self.recv().await?;
            match self.stream.decode(message) {
                Ok(Backend::ParseComplete | Backend::CloseComplete) => {}
                Ok(Backend::ParameterDescription(p)) => params = Some(p.types),
                Ok(Backend::RowDescription(d)) => columns = Some(described_columns(&d)),
                Ok(Backend::NoData) => columns = Some(Vec::new()),
                Ok(Backend::ErrorResponse(db)) => error = Some(server_error(db)),
                Ok(Backend::ReadyForQuery(r)) => {
                    self.on_ready(r);
                    break;
                }
                Ok(_) => return Err(self.protocol_error("an unexpected message while preparing")),
                Err(e) => return Err(self.decode_error(e)),
            }
        }
        if let Some(e) = error {
            return Err(e);
        }
        match (params, columns) {
            (Some(params), Some(columns)) => Ok(Statement::new(name, params, columns)),
            _ => Err(self.protocol_error("no description of the prepared statement")),
        }
    }
}

/// Queues a Close of statement `name`; it goes out with the next write.
pub(crate) fn close_statement(stream: &mut Stream, name: &str) {
    let closed = Close {
        target: Target::Statement,
        name,
    }
    .encode(stream.write_buf());
    debug_assert!(closed.is_ok(), "statement names are generated without NUL");
}

/// The error for a message that cannot be encoded; nothing was sent.
pub(crate) fn encode_error(e: EncodeError) -> Error {
    Error::with_source(Kind::Encode, "the query cannot be sent", e)
}
