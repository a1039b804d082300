//! Running a statement with parameters: Bind (binary) + Execute + Sync, rows in binary.
//!
//! See <https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-EXT-QUERY>.

use super::{Connection, Statement, server_error};
use crate::error::{Error, Kind};
use crate::proto::message::{Backend, CopyFail, Describe, Parse, Target, TransactionStatus, sync};
use crate::row::Row;
use crate::types::{Encode, Oid};

/// A parameter list: `&[&1i32, &"text"]`.
type Params<'a> = [&'a (dyn Encode + Sync)];

impl Connection {
    /// Runs `sql` with `params` and returns every row.
    ///
    /// The statement is prepared once per connection (cached by SQL text); parameters and
    /// results travel in binary format. Behind a pooler in transaction mode
    /// ([`Pooler::Transaction`](crate::Pooler::Transaction)) it is prepared unnamed in the same
    /// write as its execution, each parameter typed by its value
    /// ([`Encode::type_oid`]; `None` leaves the type to the server).
    pub async fn query(&mut self, sql: &str, params: &Params<'_>) -> Result<Vec<Row>, Error> {
        let mut rows = Vec::new();
        self.run(sql, params, Some(&mut rows)).await?;
        Ok(rows)
    }

    /// Runs `sql` and returns its only row; an error when it returns none or several.
    pub async fn query_one(&mut self, sql: &str, params: &Params<'_>) -> Result<Row, Error> {
        exactly_one(self.query(sql, params).await?)
    }

    /// Runs `sql` and returns its row, if any; an error when it returns several.
    pub async fn query_opt(
        &mut self,
        sql: &str,
        params: &Params<'_>,
    ) -> Result<Option<Row>, Error> {
        at_most_one(self.query(sql, params).await?)
    }

    /// Runs `sql` and returns the number of rows it affected (0 for statements without a count).
    pub async fn execute(&mut self, sql: &str, params: &Params<'_>) -> Result<u64, Error> {
        self.run(sql, params, None).await
    }

    async fn run(
        &mut self,
        sql: &str,
        params: &Params<'_>,
        rows: Option<&mut Vec<Row>>,
    ) -> Result<u64, Error> {
        let span = super::trace::query_span(self, || sql);
        super::timeout::timed!(
            self,
            super::trace::query(span, self.run_untimed(sql, params, rows), |n| *n)
        )
    }

    async fn run_untimed(
        &mut self,
        sql: &str,
        params: &Params<'_>,
        mut rows: Option<&mut Vec<Row>>,
    ) -> Result<u64, Error> {
        self.ready().await?;
        self.session_changed = true;
        if self.pooled_transactions {
            return self.run_unnamed(sql, params, rows).await;
        }
        let statement = self.prepare_cached(sql).await?;
        check_param_count(&statement, params)?;
        let result = self
            .bind_execute(&statement, params, rows.as_deref_mut())
            .await;
        match result {
            Err(e) if self.is_stale(&e) => {
                // Note: the cached statement vanished (DISCARD ALL) or its result type
                // changed (ALTER TABLE); outside a transaction it is safe to prepare again.
                self.evict(sql);
                if let Some(rows) = rows.as_deref_mut() {
                    rows.clear();
                }
                let statement = self.prepare_cached(sql).await?;
                check_param_count(&statement, params)?;
                self.bind_execute(&statement, params, rows).await
            }
            Err(e) if super::compiled::is_stale(&e) => {
                // Note: inside a transaction the error aborted it; retrying cannot help, but
                // the next transaction must not meet the same stale statement.
                self.evict(sql);
                Err(super::compiled::stale_in_transaction(e))
            }
            result => result,
        }
    }

    /// Behind a pooler in transaction mode: Parse (the parameters typed by their values) +
    /// Describe + Bind + Execute + Sync of the unnamed statement in one write, so the whole
    /// cycle runs on one server session.
    async fn run_unnamed(
        &mut self,
        sql: &str,
        params: &Params<'_>,
        rows: Option<&mut Vec<Row>>,
    ) -> Result<u64, Error> {
        let types: Vec<Oid> = params.iter().map(|p| p.type_oid()).collect();
        let buf = self.stream.write_buf();
        let mark = buf.len();
        let encoded = Parse {
            name: "",
            query: sql,
            param_types: &types,
        }
        .encode(buf)
        .and_then(|()| {
            Describe {
                target: Target::Statement,
                name: "",
            }
            .encode(buf)
        });
        if let Err(e) = encoded {
            buf.truncate(mark);
            return Err(super::prepare::encode_error(e));
        }
        if let Err(e) = self.write_bind_execute("", &types, params) {
            self.stream.write_buf().truncate(mark);
            return Err(e);
        }
        sync(self.stream.write_buf());
        self.syncs.sent(1);
        self.stream.flush().await?;
        let statement = loop {
            let message = self.recv().await?;
            match self.stream.decode(message) {
                Ok(Backend::ParseComplete | Backend::ParameterDescription(_)) => {}
                Ok(Backend::RowDescription(d)) => {
                    break Statement::new(String::new(), types, super::described_columns(&d));
                }
                Ok(Backend::NoData) => break Statement::new(String::new(), types, Vec::new()),
                Ok(Backend::ErrorResponse(db)) => {
                    let e = server_error(db);
                    self.skip_to_ready().await?;
                    return Err(e);
                }
                Ok(_) => return Err(self.protocol_error("an unexpected message while preparing")),
                Err(e) => return Err(self.decode_error(e)),
            }
        };
        self.read_results(&statement, rows).await
    }

    fn is_stale(&self, e: &Error) -> bool {
        super::compiled::is_stale(e) && self.transaction_status == TransactionStatus::Idle
    }

    /// Binds and executes a prepared statement; rows are appended to `rows` when given.
    pub(crate) async fn bind_execute(
        &mut self,
        statement: &Statement,
        params: &Params<'_>,
        rows: Option<&mut Vec<Row>>,
    ) -> Result<u64, Error> {
        self.session_changed = true;
        self.write_bind(statement, params)?;
        self.syncs.sent(1);
        self.stream.flush().await?;
        self.read_results(statement, rows).await
    }

    /// Reads BindComplete, DataRows, CommandComplete, ReadyForQuery.
    async fn read_results(
        &mut self,
        statement: &Statement,
        mut rows: Option<&mut Vec<Row>>,
    ) -> Result<u64, Error> {
        let mut affected = 0;
        let mut error = None;
        loop {
            let message = self.recv().await?;
            match self.stream.decode(message) {
                Ok(
                    Backend::BindComplete
                    | Backend::CloseComplete
                    | Backend::EmptyQueryResponse
                    | Backend::PortalSuspended
                    | Backend::CopyData(_)
                    | Backend::CopyDone
                    | Backend::CopyOutResponse(_),
                ) => {}
                Ok(Backend::DataRow(data)) => {
                    if let Some(rows) = rows.as_deref_mut() {
                        match Row::new(statement.shared_columns().clone(), data) {
                            Ok(row) => rows.push(row),
                            Err(e) => return Err(self.decode_error(e)),
                        }
                    }
                }
                Ok(Backend::CommandComplete(done)) => affected = done.rows().unwrap_or(0),
                Ok(Backend::CopyInResponse(_)) => self.refuse_copy_in().await?,
                Ok(Backend::ErrorResponse(db)) => error = Some(server_error(db)),
                Ok(Backend::ReadyForQuery(r)) => {
                    self.on_ready(r);
                    break;
                }
                Ok(_) => return Err(self.protocol_error("an unexpected message in query results")),
                Err(e) => return Err(self.decode_error(e)),
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok(affected),
        }
    }

    /// Answers a CopyInResponse with CopyFail: COPY FROM STDIN needs the COPY API.
    pub(crate) async fn refuse_copy_in(&mut self) -> Result<(), Error> {
        let failed = CopyFail {
            message: "COPY FROM STDIN is not supported by this call; use the COPY API",
        }
        .encode(self.stream.write_buf());
        debug_assert!(failed.is_ok(), "the message is a constant without NUL");
        self.stream.flush().await
    }
}

fn check_param_count(statement: &Statement, params: &Params<'_>) -> Result<(), Error> {
    let expected = statement.params().len();
    if params.len() == expected {
        return Ok(());
    }
    Err(Error::new(
        Kind::Usage,
        format!(
            "the statement has {expected} parameters but {} values were given; pass one value \
             per $n placeholder",
            params.len()
        ),
    ))
}

/// The only row of `rows` (`query_one`); an error when there are none or several.
pub(crate) fn exactly_one(rows: Vec<Row>) -> Result<Row, Error> {
    at_most_one(rows)?.ok_or_else(|| {
        Error::new(
            Kind::RowCount,
            "query_one expected exactly one row, but the query returned none; use query_opt \
             when the row may be missing",
        )
    })
}

/// The row of `rows`, if any (`query_opt`); an error when there are several.
pub(crate) fn at_most_one(mut rows: Vec<Row>) -> Result<Option<Row>, Error> {
    if rows.len() > 1 {
        return Err(Error::new(
            Kind::RowCount,
            format!(
                "expected at most one row, but the query returned {}; add a WHERE or \
                 LIMIT 1, or use query",
                rows.len()
            ),
        ));
    }
    Ok(rows.pop())
}
