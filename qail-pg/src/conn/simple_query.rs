//! The simple query protocol: one Query message, any number of statements, no parameters.
//!
//! See <https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-SIMPLE-QUERY>.

use super::Connection;
use super::prepare::encode_error;
use crate::error::Error;
use crate::proto::message::Query;

impl Connection {
    /// Runs one or more SQL statements separated by semicolons, discarding any rows.
    ///
    /// Statements run in order and stop at the first error, which is returned. Without an
    /// explicit transaction each statement commits on its own.
    pub async fn batch_execute(&mut self, sql: &str) -> Result<(), Error> {
        super::cancel::timed!(self, self.batch_execute_untimed(sql))
    }

    async fn batch_execute_untimed(&mut self, sql: &str) -> Result<(), Error> {
        self.ready().await?;
        Query { sql }
            .encode(self.stream.write_buf())
            .map_err(encode_error)?;
        self.pending_syncs += 1;
        self.stream.flush().await?;
        let mut error = None;
        loop {
            let (tag, range) = self.recv().await?;
            match tag {
                b'T' | b'D' | b'C' | b'I' | b'1' | b'2' | b'3' | b'n' | b'H' | b'd' | b'c' => {}
                b'G' => self.refuse_copy_in().await?,
                b'E' => error = Some(self.db_error(range)),
                b'Z' => {
                    self.on_ready(range)?;
                    break;
                }
                _ => return Err(self.protocol_error("an unexpected message in query results")),
            }
        }
        error.map_or(Ok(()), Err)
    }
}
