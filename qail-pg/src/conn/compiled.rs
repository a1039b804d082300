//! Running compiled queries ([`Template`]s).
//!
//! The first use on a connection sends Parse + Describe(statement) + Sync and compares the
//! server's ParameterDescription and RowDescription with the template's expectations before
//! the statement runs, so a statement whose tables changed under it (schema drift) never
//! executes; later uses write Bind + Execute + Sync only, with the template's pre-encoded Bind
//! prefix. A template with a user-type parameter (OID 0) is bound with the server's OID for
//! it (see [`template_statement`]). With the statement cache off, Parse, Describe, Bind,
//! Execute and Sync go in one write (the drift is then found after the statement ran, but
//! before any row is decoded). Behind a pooler in transaction mode
//! ([`Pooler::Transaction`](crate::Pooler::Transaction)) every compiled query takes that
//! one-write path, user-type parameters included, so no cycle relies on a statement an
//! earlier cycle left on a server session.

use std::borrow::Cow;

use super::prepare::{close_statement, encode_error};
use super::row_sink::RowSink;
use super::stream::release;
use super::{Connection, Statement, described_columns, server_error};
use crate::error::Error;
pub(crate) use crate::error::{is_stale, stale_in_transaction};
use crate::proto::message::{
    Backend, Bind, Describe, EncodeError, Execute, Format, Parse, Target, bind_execute_sync, sync,
};
use crate::row::Column;
use crate::template::conformance::{
    bound_types, check_bind_prefix, check_count, check_description, decoding_types,
};
use crate::template::{Arg, Template};
use crate::types::{Oid, Param};

/// The parameters of a compiled query.
pub(crate) type Params<'a> = [Arg<'a>];

impl Connection {
    /// Starts `template` with `params`: everything up to BindComplete. The caller reads the
    /// rows with [`Connection::read_rows`]. Retries once after a stale statement outside a
    /// transaction.
    ///
    /// Note: only a template already prepared on this connection takes the inline path; the
    /// first use (Parse + Describe) and the retry are boxed, so the future every query awaits
    /// (and moves) stays small.
    pub(crate) async fn start_template(
        &mut self,
        template: &'static Template,
        params: &Params<'_>,
    ) -> Result<Statement, Error> {
        self.start_template_then(template, params, &mut |_| {})
            .await
    }

    /// [`Connection::start_template`], calling `sent` with the statement once a prepared
    /// template's Bind is sent and before its reply is awaited: work done there (reserving
    /// room for the rows) overlaps with the server running the query.
    pub(crate) async fn start_template_then(
        &mut self,
        template: &'static Template,
        params: &Params<'_>,
        sent: &mut (dyn FnMut(&Statement) + Send),
    ) -> Result<Statement, Error> {
        self.ready().await?;
        self.session_changed |= template.changes_session;
        check_count(template, params.len())?;
        let Some(statement) = self.cache.get_template(template.name) else {
            return Box::pin(self.start_template_slow(template, params, None)).await;
        };
        match self.bind_template(template, &statement, params, sent).await {
            Ok(()) => Ok(statement),
            Err(e) if is_stale(&e) => {
                Box::pin(self.start_template_slow(template, params, Some(e))).await
            }
            Err(e) => Err(e),
        }
    }

    /// The first use of `template` on this connection, or the retry after `stale` (an error
    /// saying its cached statement is gone).
    async fn start_template_slow(
        &mut self,
        template: &'static Template,
        params: &Params<'_>,
        stale: Option<Error>,
    ) -> Result<Statement, Error> {
        check_bind_prefix(template)?;
        let result = match stale {
            Some(e) => Err(e),
            None => self.try_start_template(template, params).await,
        };
        match result {
            Err(e) if is_stale(&e) => {
                self.evict_template(template.name);
                if self.transaction_status == crate::TransactionStatus::Idle {
                    self.try_start_template(template, params).await
                } else {
                    Err(stale_in_transaction(e))
                }
            }
            result => result,
        }
    }

    /// Bind + Execute + Sync of a template prepared under its own name, up to BindComplete:
    /// the Bind starts with the template's pre-encoded prefix.
    async fn bind_template(
        &mut self,
        template: &Template,
        statement: &Statement,
        params: &Params<'_>,
        sent: &mut (dyn FnMut(&Statement) + Send),
    ) -> Result<(), Error> {
        bind_execute_sync(
            self.stream.write_buf(),
            template.bind_prefix(),
            params,
            statement.params(),
        )
        .map_err(encode_error)?;
        self.syncs.sent(1);
        self.stream.flush().await?;
        sent(statement);
        self.read_bind().await
    }

    /// Bind + Execute + Sync of a statement already prepared, up to BindComplete.
    async fn bind_prepared(
        &mut self,
        statement: &Statement,
        params: &Params<'_>,
    ) -> Result<(), Error> {
        self.write_bind(statement, params)?;
        self.syncs.sent(1);
        self.stream.flush().await?;
        self.read_bind().await
    }

    async fn try_start_template(
        &mut self,
        template: &'static Template,
        params: &Params<'_>,
    ) -> Result<Statement, Error> {
        if let Some(statement) = self.cache.get_template(template.name) {
            self.bind_prepared(&statement, params).await?;
            return Ok(statement);
        }
        let named = self.cache.is_enabled();
        let name = if named { template.name } else { "" };
        // Note: a statement that will be cached is described and checked before it runs, so
        // a statement whose tables changed under it (schema drift) never executes — a drifted
        // INSERT must not have inserted when SchemaDrift is reported. That costs one round
        // trip once per connection. Without a cache (every call prepares afresh) Parse,
        // Describe, Bind and Execute go in one write, and the drift is found after the
        // statement ran; `set_statement_cache_size(0)` documents this.
        // Note: behind a pooler in transaction mode the separate Parse + Describe + Sync would
        // leave the unnamed statement on a server session the next cycle may not get; a
        // user-type parameter is bound as OID 0 (its own binary form) either way.
        if named || (template.param_oids.contains(&0) && !self.pooled_transactions) {
            let statement = self.describe_template(template, name).await?;
            self.bind_prepared(&statement, params).await?;
            return Ok(statement);
        }
        self.write_parse_describe(template, name)?;
        let described = Statement::new(name.to_owned(), template.param_oids.to_vec(), Vec::new());
        if let Err(e) = self.write_bind(&described, params) {
            // Note: the Parse is still queued; end its cycle so the queue stays well formed.
            sync(self.stream.write_buf());
            self.syncs.sent(1);
            if named {
                self.unconfirmed.push(name.to_owned());
            }
            return Err(e);
        }
        self.syncs.sent(1);
        if named {
            self.unconfirmed.push(name.to_owned());
        }
        self.stream.flush().await?;
        let statement = self.read_template_description(template, name).await?;
        self.read_bind().await?;
        Ok(statement)
    }

    /// Parse + Describe + Sync alone: the first use of a cached template (checked before it
    /// runs), and templates with user-type parameters.
    pub(crate) async fn describe_template(
        &mut self,
        template: &'static Template,
        name: &str,
    ) -> Result<Statement, Error> {
        self.write_parse_describe(template, name)?;
        sync(self.stream.write_buf());
        self.syncs.sent(1);
        if !name.is_empty() {
            self.unconfirmed.push(name.to_owned());
        }
        self.stream.flush().await?;
        let statement = self.read_template_description(template, name).await?;
        self.skip_to_ready().await?;
        Ok(statement)
    }

    /// Queues the template's Parse (pre-encoded when named) and a Describe of it.
    pub(crate) fn write_parse_describe(
        &mut self,
        template: &Template,
        name: &str,
    ) -> Result<(), Error> {
        let buf = self.stream.write_buf();
        let mark = buf.len();
        let parse: Cow<'_, [u8]> = if name.is_empty() {
            let mut bytes = Vec::new();
            Parse {
                name,
                query: template.sql(),
                param_types: template.param_oids,
            }
            .encode(&mut bytes)
            .map_err(encode_error)?;
            Cow::Owned(bytes)
        } else {
            Cow::Borrowed(template.parse())
        };
        buf.extend_from_slice(&parse);
        let described = Describe {
            target: Target::Statement,
            name,
        }
        .encode(buf);
        if let Err(e) = described {
            buf.truncate(mark);
            return Err(encode_error(e));
        }
        Ok(())
    }

    /// Queues Bind + Execute + Sync; on an encoding error nothing is queued.
    pub(crate) fn write_bind<P: Param>(
        &mut self,
        statement: &Statement,
        params: &[P],
    ) -> Result<(), Error> {
        self.write_bind_execute(statement.name(), statement.params(), params)?;
        sync(self.stream.write_buf());
        Ok(())
    }

    /// Queues Bind + Execute of statement `name` (without Sync); on an encoding error nothing
    /// is queued.
    pub(crate) fn write_bind_execute<P: Param>(
        &mut self,
        name: &str,
        types: &[Oid],
        params: &[P],
    ) -> Result<(), Error> {
        let buf = self.stream.write_buf();
        let mark = buf.len();
        if let Err(e) = bind_named(buf, name, types, params) {
            buf.truncate(mark);
            return Err(encode_error(e));
        }
        Ok(())
    }

    /// Reads ParseComplete, ParameterDescription and RowDescription/NoData; checks them against
    /// the template and caches the statement. On an error or a drift, reads to ReadyForQuery.
    async fn read_template_description(
        &mut self,
        template: &'static Template,
        name: &str,
    ) -> Result<Statement, Error> {
        let mut params = None;
        loop {
            let message = self.recv().await?;
            let columns = match self.stream.decode(message) {
                Ok(Backend::ParseComplete | Backend::CloseComplete) => continue,
                Ok(Backend::ParameterDescription(p)) => {
                    params = Some(p.types);
                    continue;
                }
                Ok(Backend::RowDescription(d)) => described_columns(&d),
                Ok(Backend::NoData) => Vec::new(),
                Ok(Backend::ErrorResponse(db)) => {
                    self.unconfirmed.retain(|n| n != name);
                    self.skip_to_ready().await?;
                    return Err(server_error(db));
                }
                Ok(_) => return Err(self.protocol_error("an unexpected message while preparing")),
                Err(e) => return Err(self.decode_error(e)),
            };
            let Some(params) = params.take() else {
                return Err(self.protocol_error("a RowDescription before the parameters"));
            };
            return self.confirm(template, name, params, columns).await;
        }
    }

    /// Checks a described template; caches it, or closes it and reports the drift.
    async fn confirm(
        &mut self,
        template: &'static Template,
        name: &str,
        params: Vec<Oid>,
        columns: Vec<Column>,
    ) -> Result<Statement, Error> {
        self.unconfirmed.retain(|n| n != name);
        if let Err(drift) = check_drift(template, &params, &columns) {
            if !name.is_empty() {
                close_statement(&mut self.stream, name);
            }
            self.skip_to_ready().await?;
            return Err(drift);
        }
        let statement = template_statement(template, name, params, columns);
        if !name.is_empty() {
            for evicted in self.cache.insert_template(template.name, statement.clone()) {
                close_statement(&mut self.stream, &evicted);
            }
        }
        Ok(statement)
    }

    /// Reads up to BindComplete; on an error reads to ReadyForQuery and returns it.
    async fn read_bind(&mut self) -> Result<(), Error> {
        loop {
            let message = match self.try_recv()? {
                Some(found) => found,
                None => self.recv().await?,
            };
            // Note: matched in place and consumed by every arm (see `read_rows`).
            match self.stream.decode(message) {
                Ok(reply @ Backend::BindComplete) => {
                    release(reply);
                    return Ok(());
                }
                Ok(reply @ Backend::CloseComplete) => release(reply),
                Ok(Backend::ErrorResponse(db)) => {
                    self.skip_to_ready().await?;
                    return Err(server_error(db));
                }
                Ok(other) => {
                    drop(other);
                    return Err(self.protocol_error("an unexpected message before BindComplete"));
                }
                Err(e) => return Err(self.decode_error(e)),
            }
        }
    }

    /// Reads DataRows up to ReadyForQuery, handing each to `sink` as query 0; returns the
    /// rows affected when `counts` (the count in the command tag, which is parsed only then),
    /// else the number of rows handed to `sink`. After the first error from the sink, the
    /// remaining rows are read and dropped. Before the first row the sink learns how many
    /// rows are already buffered ([`RowSink::expect`]).
    pub(crate) async fn read_rows(
        &mut self,
        statement: &Statement,
        counts: bool,
        sink: &mut (dyn RowSink + Send),
    ) -> Result<u64, Error> {
        let mut affected = 0;
        let mut rows = 0;
        let mut error = None;
        let mut first = true;
        loop {
            let message = match self.try_recv()? {
                Some(found) => found,
                None => self.recv().await?,
            };
            // Note: the decoded reply is matched in place, and every arm consumes it, so no
            // arm copies the message or calls its drop glue on the hot path (DataRow).
            match self.stream.decode(message) {
                Ok(reply @ Backend::DataRow(data)) => {
                    release(reply);
                    if error.is_some() {
                        continue;
                    }
                    if first {
                        first = false;
                        let buffered = 1 + self.stream.buffered_rows();
                        sink.expect(buffered.max(statement.rows_hint()));
                    }
                    rows += 1;
                    if let Err(e) = sink.row(0, data, statement) {
                        error = Some(e);
                    }
                }
                Ok(reply @ Backend::CommandComplete(done)) => {
                    release(reply);
                    if counts {
                        affected = done.rows().unwrap_or(0);
                    }
                }
                Ok(
                    reply @ (Backend::EmptyQueryResponse
                    | Backend::PortalSuspended
                    | Backend::CloseComplete),
                ) => release(reply),
                Ok(Backend::ErrorResponse(db)) => error = Some(server_error(db)),
                Ok(reply @ Backend::ReadyForQuery(r)) => {
                    release(reply);
                    self.on_ready(r);
                    break;
                }
                Ok(other) => {
                    drop(other);
                    return Err(self.protocol_error("an unexpected message in query results"));
                }
                Err(e) => return Err(self.decode_error(e)),
            }
        }
        if error.is_none() {
            statement.set_rows_hint(rows);
        }
        error.map_or(Ok(if counts { affected } else { rows }), Err)
    }

    /// Forgets every cached statement without closing them: for after `DISCARD ALL` or
    /// `DEALLOCATE ALL`, which closed them on the server (the pool's reset).
    #[allow(dead_code, reason = "called by the pool's reset")]
    pub(crate) fn forget_statements(&mut self) {
        self.cache.clear();
        self.unconfirmed.clear();
    }

    /// Forgets a cached template and closes its statement with the next write.
    pub(crate) fn evict_template(&mut self, name: &'static str) {
        if self.cache.remove_template(name) {
            close_statement(&mut self.stream, name);
        }
    }
}

/// The statement of a described template, once [`check_description`] accepted it: bound
/// and decoded with the types [`bound_types`] and [`decoding_types`] give.
pub(crate) fn template_statement(
    template: &Template,
    name: &str,
    params: Vec<Oid>,
    columns: Vec<Column>,
) -> Statement {
    let column_oids = decoding_types(template, columns.iter().map(Column::type_oid));
    Statement::decoding_as(
        name.to_owned(),
        bound_types(template, params),
        columns,
        column_oids,
    )
}

/// [`check_description`] of a description read by the connection.
pub(crate) fn check_drift(
    template: &Template,
    params: &[Oid],
    columns: &[Column],
) -> Result<(), Error> {
    check_description(template, params, columns.iter().map(Column::type_oid))
}

/// Encodes Bind (of statement `name`, parameter types `types`, binary results) and Execute
/// (without Sync); on an error the buffer may hold part of them.
pub(crate) fn bind_named<P: Param>(
    buf: &mut Vec<u8>,
    name: &str,
    types: &[Oid],
    params: &[P],
) -> Result<(), EncodeError> {
    Bind {
        portal: "",
        statement: name,
        params,
        param_types: types,
        result_format: Format::Binary,
    }
    .encode(buf)?;
    Execute {
        portal: "",
        max_rows: 0,
    }
    .encode(buf)
}
