//! Describing many statements in one round trip: for each, Parse (the unnamed statement) +
//! Describe(statement) + Sync, all written before the first reply is read. Each statement
//! has its own Sync, so one the server refuses gets its error and the next are still
//! described.
//!
//! See <https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-PIPELINING>.

use super::{Connection, Statement};
use crate::error::{Error, Kind};
use crate::proto::message::{Describe, Parse, Target, sync};
use crate::types::Oid;

impl Connection {
    /// The server's description of each of `statements` (SQL and parameter types), in
    /// order: `Err` for a statement the server refuses (a missing table, a missing
    /// function, …). The outer `Err` is a connection failure.
    pub(crate) async fn describe_all(
        &mut self,
        statements: &[(&str, &[Oid])],
    ) -> Result<Vec<Result<Statement, Error>>, Error> {
        self.ready().await?;
        let buf = self.stream.write_buf();
        let mark = buf.len();
        for (sql, oids) in statements {
            let encoded = Parse {
                name: "",
                query: sql,
                param_types: oids,
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
                return Err(Error::new(
                    Kind::Usage,
                    format!("the statement `{sql}` cannot be sent: {e}"),
                ));
            }
            sync(buf);
        }
        self.syncs.sent(statements.len());
        self.stream.flush().await?;
        let mut described = Vec::with_capacity(statements.len());
        for _ in statements {
            let one = self.read_description(String::new()).await;
            if self.is_closed() {
                return Err(one.err().unwrap_or_else(|| {
                    Error::new(Kind::Closed, "the connection closed while describing")
                }));
            }
            described.push(one);
        }
        Ok(described)
    }
}
