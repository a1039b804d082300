//! The simple query protocol: one Query message, any number of statements, no parameters.
//!
//! See <https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-SIMPLE-QUERY>.

use super::prepare::encode_error;
use super::{Connection, server_error};
use crate::error::Error;
use crate::proto::message::{Backend, Query};

impl Connection {
    /// Runs one or more SQL statements separated by semicolons, discarding any rows.
    ///
    /// Statements run in order and stop at the first error, which is returned. Without an
    /// explicit transaction each statement commits on its own.
    pub async fn batch_execute(&mut self, sql: &str) -> Result<(), Error> {
        self.session_changed = true;
        super::timeout::timed!(self, self.batch_execute_untimed(sql))
    }

    /// An empty query: one round trip that says whether the session answers, and changes
    /// nothing in it.
    pub(crate) async fn ping(&mut self) -> Result<(), Error> {
        super::timeout::timed!(self, self.batch_execute_untimed(""))
    }

    async fn batch_execute_untimed(&mut self, sql: &str) -> Result<(), Error> {
        self.ready().await?;
        Query { sql }
            .encode(self.stream.write_buf())
            .map_err(encode_error)?;
        self.syncs.sent(1);
        self.stream.flush().await?;
        let mut error = None;
        loop {
            let message = self.recv().await?;
            match self.stream.decode(message) {
                Ok(
                    Backend::RowDescription(_)
                    | Backend::DataRow(_)
                    | Backend::CommandComplete(_)
                    | Backend::EmptyQueryResponse
                    | Backend::ParseComplete
                    | Backend::BindComplete
                    | Backend::CloseComplete
                    | Backend::NoData
                    | Backend::CopyOutResponse(_)
                    | Backend::CopyData(_)
                    | Backend::CopyDone,
                ) => {}
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
        error.map_or(Ok(()), Err)
    }
}
