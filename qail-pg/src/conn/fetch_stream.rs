//! [`Query::fetch`]: rows decoded one at a time as they are read from the socket.
//!
//! Bind + Execute + Sync are written at once and counted in `pending_syncs`, so a stream
//! dropped early leaves nothing to undo: the next use of the connection reads and drops the
//! rest of the result up to ReadyForQuery.

use futures_core::Stream;

use super::{Connection, Statement};
use crate::error::Error;
use crate::proto::message::DataRow;
use crate::template::{Decoder, Query, RawRow};

enum State<'c, 'q, D> {
    Start(&'c mut Connection, Box<Query<'q, D>>),
    Rows(&'c mut Connection, Statement),
    Done,
}

/// The stream of `query`'s rows on `conn`.
pub(crate) fn rows<'c, 'q, D: Decoder>(
    conn: &'c mut Connection,
    query: Query<'q, D>,
) -> impl Stream<Item = Result<D::Row, Error>> + use<'c, 'q, D> {
    futures_util::stream::unfold(State::Start(conn, Box::new(query)), |state| async move {
        match state {
            State::Start(conn, query) => {
                match conn.start_template(query.template(), query.params()).await {
                    Ok(statement) => next_row::<D>(conn, statement).await,
                    Err(e) => Some((Err(e), State::Done)),
                }
            }
            State::Rows(conn, statement) => next_row::<D>(conn, statement).await,
            State::Done => None,
        }
    })
}

/// Reads up to the next row (decoded) or the end of the result.
async fn next_row<'c, 'q, D: Decoder>(
    conn: &'c mut Connection,
    statement: Statement,
) -> Option<(Result<D::Row, Error>, State<'c, 'q, D>)> {
    let mut error = None;
    loop {
        let (tag, range) = match conn.recv().await {
            Ok(frame) => frame,
            Err(e) => return Some((Err(e), State::Done)),
        };
        match tag {
            b'D' if error.is_none() => {
                let row = match DataRow::decode(conn.stream.body(range)) {
                    Ok(data) => D::decode(&mut RawRow::new(data), statement.column_oids()),
                    Err(e) => Err(conn.decode_error(e)),
                };
                // Note: after a decoding error the stream ends; the rest of the result is
                // drained by the connection's next use.
                return match row {
                    Ok(row) => Some((Ok(row), State::Rows(conn, statement))),
                    Err(e) => Some((Err(e), State::Done)),
                };
            }
            b'D' | b'C' | b'I' | b's' | b'3' => {}
            b'E' => error = Some(conn.db_error(range)),
            b'Z' => {
                if let Err(e) = conn.on_ready(range) {
                    return Some((Err(e), State::Done));
                }
                return error.map(|e| (Err(e), State::Done));
            }
            _ => {
                let e = conn.protocol_error("an unexpected message in query results");
                return Some((Err(e), State::Done));
            }
        }
    }
}
