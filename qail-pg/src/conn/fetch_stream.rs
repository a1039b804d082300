//! [`Query::fetch`]: rows decoded one at a time as they are read from the socket.
//!
//! Bind + Execute + Sync are written at once and counted in `syncs`, so a stream
//! dropped early leaves nothing to undo: the next use of the connection reads and drops the
//! rest of the result up to ReadyForQuery.

use futures_core::Stream;

use super::{Statement, server_error};
use crate::Acquire;
use crate::error::Error;
use crate::proto::message::Backend;
use crate::template::{Decoder, Query, RawRow};

enum State<'q, D, A: Acquire> {
    Start(A, Box<Query<'q, D>>),
    Rows(A::Connection, Statement),
    Done,
}

/// The stream of `query`'s rows on the connection `ex` lends or the pool it names (the
/// pooled connection is held by the stream and returned when it ends or is dropped).
pub(crate) fn rows<'q, D: Decoder, A: Acquire>(
    ex: A,
    query: Query<'q, D>,
) -> impl Stream<Item = Result<D::Row, Error>> + use<'q, D, A> {
    futures_util::stream::unfold(State::Start(ex, Box::new(query)), |state| async move {
        match state {
            State::Start(ex, query) => {
                let mut conn = match ex.acquire().await {
                    Ok(conn) => conn,
                    Err(e) => return Some((Err(e), State::Done)),
                };
                match conn.start_template(query.template(), query.params()).await {
                    Ok(statement) => next_row::<D, A>(conn, statement).await,
                    Err(e) => Some((Err(e), State::Done)),
                }
            }
            State::Rows(conn, statement) => next_row::<D, A>(conn, statement).await,
            State::Done => None,
        }
    })
}

/// Reads up to the next row (decoded) or the end of the result.
async fn next_row<'q, D: Decoder, A: Acquire>(
    mut conn: A::Connection,
    statement: Statement,
) -> Option<(Result<D::Row, Error>, State<'q, D, A>)> {
    let mut error = None;
    loop {
        let message = match conn.recv().await {
            Ok(message) => message,
            Err(e) => return Some((Err(e), State::Done)),
        };
        match conn.stream.decode(message) {
            Ok(Backend::DataRow(data)) if error.is_none() => {
                let row = D::decode(&mut RawRow::new(data), statement.column_oids());
                // Note: after a decoding error the stream ends; the rest of the result is
                // drained by the connection's next use.
                return match row {
                    Ok(row) => Some((Ok(row), State::Rows(conn, statement))),
                    Err(e) => Some((Err(e), State::Done)),
                };
            }
            Ok(
                Backend::DataRow(_)
                | Backend::CommandComplete(_)
                | Backend::EmptyQueryResponse
                | Backend::PortalSuspended
                | Backend::CloseComplete,
            ) => {}
            Ok(Backend::ErrorResponse(db)) => error = Some(server_error(db)),
            Ok(Backend::ReadyForQuery(r)) => {
                conn.on_ready(r);
                return error.map(|e| (Err(e), State::Done));
            }
            Ok(_) => {
                let e = conn.protocol_error("an unexpected message in query results");
                return Some((Err(e), State::Done));
            }
            Err(e) => return Some((Err(conn.decode_error(e)), State::Done)),
        }
    }
}
