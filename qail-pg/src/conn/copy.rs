//! COPY FROM STDIN (a writer, or a stream of byte chunks) and COPY TO STDOUT (a stream of
//! byte chunks), text or binary: the bytes are passed through as the server reads or
//! writes them.
//!
//! A COPY FROM STDIN that is abandoned (dropped, or its source fails) is ended with
//! CopyFail: the server rolls the COPY back, so no row is written, and the connection stays
//! usable. See <https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-COPY>.

use futures_core::Stream;
use futures_util::StreamExt;

use super::{Connection, server_error};
use crate::error::{Error, Kind};
use crate::proto::message::{Backend, CopyData, CopyFail, Query, copy_done};
use crate::types::BoxError;

/// How many unsent COPY bytes are buffered before they are sent.
const SEND_AT: usize = 64 * 1024;

/// A COPY … FROM STDIN in progress; see [`Connection::copy_in`].
#[derive(Debug)]
pub struct CopyIn<'c> {
    conn: &'c mut Connection,
    /// Whether CopyDone or CopyFail was queued.
    done: bool,
}

impl Connection {
    /// Starts `COPY … FROM STDIN` (text, CSV or binary, as `sql` says); send the data with
    /// [`CopyIn::send`] and end with [`CopyIn::finish`]. Dropping the [`CopyIn`] aborts the
    /// COPY: no row is written.
    ///
    /// ```no_run
    /// # async fn run(conn: &mut qail_pg::Connection) -> Result<(), qail_pg::Error> {
    /// let mut copy = conn.copy_in("COPY harbors (id, name) FROM STDIN").await?;
    /// copy.send(b"1\tAmsterdam\n2\tRotterdam\n").await?;
    /// let rows = copy.finish().await?;
    /// assert_eq!(rows, 2);
    /// # Ok(()) }
    /// ```
    pub async fn copy_in(&mut self, sql: &str) -> Result<CopyIn<'_>, Error> {
        super::timeout::timed!(self, self.ready())?;
        self.session_changed = true;
        Query { sql }
            .encode(self.stream.write_buf())
            .map_err(super::prepare::encode_error)?;
        self.syncs.sent(1);
        let mut copy = CopyIn {
            conn: self,
            done: false,
        };
        let started = super::timeout::timed!(copy.conn, copy.start());
        // Note: whatever failed, no COPY is in progress for a drop to abort.
        started.inspect_err(|_| copy.done = true)?;
        Ok(copy)
    }

    /// Runs `COPY … FROM STDIN` with the byte chunks of `source`. When the source yields an
    /// error the COPY is aborted (no row is written) and the error is returned.
    pub async fn copy_in_stream<B, E>(
        &mut self,
        sql: &str,
        source: impl Stream<Item = Result<B, E>>,
    ) -> Result<u64, Error>
    where
        B: AsRef<[u8]>,
        E: Into<BoxError>,
    {
        let mut copy = self.copy_in(sql).await?;
        let mut source = std::pin::pin!(source);
        while let Some(chunk) = source.next().await {
            match chunk {
                Ok(bytes) => copy.send(bytes.as_ref()).await?,
                Err(e) => {
                    let e = e.into();
                    copy.fail(&format!("the COPY source failed: {e}")).await?;
                    return Err(Error::with_source(
                        Kind::Usage,
                        "the COPY source failed, so the COPY was aborted and no row was written",
                        e,
                    ));
                }
            }
        }
        copy.finish().await
    }

    /// Runs `COPY … TO STDOUT` and streams the data in the chunks the server sends (one row
    /// per chunk in text format). Dropping the stream early is safe: the rest is read and
    /// dropped before the connection's next use.
    pub fn copy_out<'c>(
        &'c mut self,
        sql: &'c str,
    ) -> impl Stream<Item = Result<Vec<u8>, Error>> + 'c {
        futures_util::stream::unfold(Some((self, Some(sql))), |state| async move {
            let (conn, sql) = state?;
            if let Some(sql) = sql
                && let Err(e) = conn.start_copy_out(sql).await
            {
                return Some((Err(e), None));
            }
            match conn.next_copy_chunk().await {
                Ok(Some(chunk)) => Some((Ok(chunk), Some((conn, None)))),
                Ok(None) => None,
                Err(e) => Some((Err(e), None)),
            }
        })
    }

    async fn start_copy_out(&mut self, sql: &str) -> Result<(), Error> {
        self.ready().await?;
        self.session_changed = true;
        Query { sql }
            .encode(self.stream.write_buf())
            .map_err(super::prepare::encode_error)?;
        self.syncs.sent(1);
        self.stream.flush().await?;
        loop {
            let message = self.recv().await?;
            match self.stream.decode(message) {
                Ok(Backend::CopyOutResponse(_)) => return Ok(()),
                Ok(Backend::ErrorResponse(db)) => {
                    self.skip_to_ready().await?;
                    return Err(server_error(db));
                }
                Ok(Backend::CopyInResponse(_)) => self.refuse_copy_in().await?,
                Ok(Backend::ReadyForQuery(r)) => {
                    self.on_ready(r);
                    return Err(not_copy("TO STDOUT", "copy_out"));
                }
                Ok(_) => {}
                Err(e) => return Err(self.decode_error(e)),
            }
        }
    }

    /// The next CopyData of a COPY TO STDOUT; `None` after ReadyForQuery.
    async fn next_copy_chunk(&mut self) -> Result<Option<Vec<u8>>, Error> {
        let mut error = None;
        loop {
            let message = self.recv().await?;
            match self.stream.decode(message) {
                Ok(Backend::CopyData(chunk)) if error.is_none() => {
                    return Ok(Some(chunk.data.to_vec()));
                }
                Ok(Backend::CopyData(_) | Backend::CopyDone | Backend::CommandComplete(_)) => {}
                Ok(Backend::ErrorResponse(db)) => error = Some(server_error(db)),
                Ok(Backend::ReadyForQuery(r)) => {
                    self.on_ready(r);
                    return error.map_or(Ok(None), Err);
                }
                Ok(_) => return Err(self.protocol_error("an unexpected message during COPY")),
                Err(e) => return Err(self.decode_error(e)),
            }
        }
    }
}

impl<R: Sync> crate::template::CopyRows<'_, R> {
    /// Sends the rows with a binary COPY and returns the number written: all of them, or
    /// none (a failing row aborts the COPY). Rows are encoded into chunks of 64 KiB as they
    /// are sent.
    pub async fn execute(self, ex: impl crate::Acquire) -> Result<u64, Error> {
        use crate::template::{COPY_HEADER, COPY_TRAILER};
        let mut conn = ex.acquire().await?;
        let mut copy = conn.copy_in(self.statement().sql).await?;
        let mut chunk = Vec::with_capacity(SEND_AT + 1024);
        chunk.extend_from_slice(COPY_HEADER);
        for row in self.rows() {
            if let Err(e) = self.encode_row(row, &mut chunk) {
                copy.fail(&format!("a row could not be encoded: {e}"))
                    .await?;
                return Err(Error::with_source(
                    Kind::Encode,
                    "a COPY row could not be encoded, so the COPY was aborted and no row was written",
                    e,
                ));
            }
            if chunk.len() >= SEND_AT {
                copy.send(&chunk).await?;
                chunk.clear();
            }
        }
        chunk.extend_from_slice(COPY_TRAILER);
        copy.send(&chunk).await?;
        copy.finish().await
    }
}

impl CopyIn<'_> {
    /// Sends the COPY statement and reads up to CopyInResponse.
    async fn start(&mut self) -> Result<(), Error> {
        self.conn.stream.flush().await?;
        loop {
            let message = self.conn.recv().await?;
            match self.conn.stream.decode(message) {
                Ok(Backend::CopyInResponse(_)) => return Ok(()),
                Ok(Backend::ErrorResponse(db)) => {
                    self.done = true;
                    self.conn.skip_to_ready().await?;
                    return Err(server_error(db));
                }
                Ok(Backend::ReadyForQuery(r)) => {
                    self.done = true;
                    self.conn.on_ready(r);
                    return Err(not_copy("FROM STDIN", "copy_in"));
                }
                Ok(_) => {}
                Err(e) => return Err(self.conn.decode_error(e)),
            }
        }
    }

    /// Sends a chunk of COPY data (any split of the rows is fine). Data is buffered and sent
    /// in chunks of 64 KiB.
    pub async fn send(&mut self, data: &[u8]) -> Result<(), Error> {
        CopyData { data }
            .encode(self.conn.stream.write_buf())
            .map_err(super::prepare::encode_error)?;
        if self.conn.stream.unsent() >= SEND_AT {
            let conn = &mut *self.conn;
            super::timeout::timed!(conn, conn.stream.flush())?;
        }
        Ok(())
    }

    /// Ends the COPY; returns the number of rows written. Sending the last data and reading
    /// the server's answer are bounded by the query time-out.
    pub async fn finish(mut self) -> Result<u64, Error> {
        copy_done(self.conn.stream.write_buf());
        self.done = true;
        let conn = &mut *self.conn;
        super::timeout::timed!(conn, finish_copy(conn))
    }

    /// Aborts the COPY with `reason` (the server's error repeats it): no row is written.
    pub async fn fail(mut self, reason: &str) -> Result<(), Error> {
        self.queue_fail(reason);
        let conn = &mut *self.conn;
        super::timeout::timed!(conn, fail_untimed(conn))
    }

    fn queue_fail(&mut self, reason: &str) {
        let reason = reason.replace('\0', " ");
        let queued = CopyFail { message: &reason }.encode(self.conn.stream.write_buf());
        debug_assert!(queued.is_ok(), "NUL bytes were replaced");
        self.done = true;
    }
}

/// [`CopyIn::fail`] without the time-out.
async fn fail_untimed(conn: &mut Connection) -> Result<(), Error> {
    conn.stream.flush().await?;
    // Note: the server answers with an error (57014) that only confirms the abort.
    conn.skip_to_ready().await
}

/// Sends the end of the COPY and reads its outcome: the rows written, or the error.
async fn finish_copy(conn: &mut Connection) -> Result<u64, Error> {
    conn.stream.flush().await?;
    let mut rows = 0;
    let mut error = None;
    loop {
        let message = conn.recv().await?;
        match conn.stream.decode(message) {
            Ok(Backend::CommandComplete(done)) => rows = done.rows().unwrap_or(0),
            Ok(Backend::ErrorResponse(db)) => error = Some(server_error(db)),
            Ok(Backend::ReadyForQuery(r)) => {
                conn.on_ready(r);
                break;
            }
            Ok(_) => return Err(conn.protocol_error("an unexpected message after COPY")),
            Err(e) => return Err(conn.decode_error(e)),
        }
    }
    error.map_or(Ok(rows), Err)
}

impl Drop for CopyIn<'_> {
    fn drop(&mut self) {
        if !self.done && !self.conn.is_closed() {
            self.queue_fail("the COPY was abandoned before it finished, so no row was written");
        }
    }
}

fn not_copy(direction: &str, method: &str) -> Error {
    Error::new(
        Kind::Usage,
        format!(
            "{method} needs a `COPY … {direction}` statement; the statement ran as a plain query"
        ),
    )
}
