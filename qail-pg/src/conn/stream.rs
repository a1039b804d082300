//! The socket with its read and write buffers: whole messages in, whole messages out.
//!
//! Both directions are cancel safe: a write interrupted by a dropped future keeps its
//! unsent bytes in the buffer and the next [`Stream::flush`] sends them; reads only ever
//! append to the read buffer, and a message is consumed only once it is complete.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
#[cfg(unix)]
use tokio::net::UnixStream;

use crate::error::DbError;
use crate::error::{Error, Kind};
use crate::proto::message::{
    Backend, DataRow, DecodeError, Frame, Phase, claimed_body_len, error_response, frame,
    max_body_len,
};

/// A connected socket: plain TCP, a Unix socket, or TLS over TCP.
pub(crate) enum Socket {
    Tcp(TcpStream),
    #[cfg(unix)]
    Unix(UnixStream),
    #[cfg(feature = "tls")]
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl AsyncRead for Socket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Socket::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            #[cfg(unix)]
            Socket::Unix(s) => Pin::new(s).poll_read(cx, buf),
            #[cfg(feature = "tls")]
            Socket::Tls(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Socket::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            #[cfg(unix)]
            Socket::Unix(s) => Pin::new(s).poll_write(cx, buf),
            #[cfg(feature = "tls")]
            Socket::Tls(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Socket::Tcp(s) => Pin::new(s).poll_flush(cx),
            #[cfg(unix)]
            Socket::Unix(s) => Pin::new(s).poll_flush(cx),
            #[cfg(feature = "tls")]
            Socket::Tls(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Socket::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            #[cfg(unix)]
            Socket::Unix(s) => Pin::new(s).poll_shutdown(cx),
            #[cfg(feature = "tls")]
            Socket::Tls(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

/// A complete backend message in the read buffer, consumed from the received bytes but not
/// decoded: [`Stream::decode`] makes a [`Backend`] of it, borrowing from the buffer. Valid
/// until the stream next reads from the socket.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Received {
    tag: u8,
    /// The body's bounds within the read buffer.
    start: usize,
    end: usize,
}

impl Received {
    /// Whether the server may send this message at any time (a notice, a parameter report,
    /// a notification): no flow's reply, so it is handled where it is read.
    #[inline]
    pub(crate) fn is_asynchronous(self) -> bool {
        Backend::is_asynchronous(self.tag)
    }

    /// Whether this is a DataRow: the reply a result loop sees most.
    #[inline(always)]
    pub(crate) fn is_data_row(self) -> bool {
        self.tag == DataRow::TAG
    }
}

/// Drops a reply that owns nothing (a DataRow, a CommandComplete, a BindComplete, …) without
/// calling [`Backend`]'s drop glue, which the compiler emits for every message a reply loop
/// matches (it cannot tell the variant) and does not inline there: the hot arms of those
/// loops end with this, so typed replies cost what matching the raw tag did.
#[inline(always)]
pub(crate) fn release(reply: Backend<'_>) {
    debug_assert!(matches!(
        reply,
        Backend::DataRow(_)
            | Backend::CommandComplete(_)
            | Backend::BindComplete
            | Backend::ParseComplete
            | Backend::CloseComplete
            | Backend::PortalSuspended
            | Backend::EmptyQueryResponse
            | Backend::NoData
            | Backend::ReadyForQuery(_)
    ));
    // Note: these variants hold only borrowed or Copy data: forgetting one frees nothing.
    std::mem::forget(reply);
}

/// The read buffer's size when a connection opens: room for the replies of queries that
/// return a few rows. A first buffer of 64 KiB left 68 KiB more of the heap resident in a
/// process running point queries, whose reads fill a few hundred bytes.
const FIRST_READ_SIZE: usize = 16 * 1024;

/// The least free space offered to each read once a read has filled all the space it was
/// offered (the server had more to send than fitted): the buffer grows to this once, and
/// large results are read in chunks of this size.
const READ_SIZE: usize = 64 * 1024;

/// The size of a fresh write buffer.
const WRITE_SIZE: usize = 8 * 1024;

/// The least free space offered to a read; less, and the unconsumed bytes move to the front.
const MIN_READ: usize = 16 * 1024;

/// The largest read or write buffer kept between messages.
const MAX_IDLE_CAPACITY: usize = 1024 * 1024;

/// The most bytes a wait asks to have arrived before it wakes ([`Stream::receive_sending`]).
///
/// Note: Linux grows the receive buffer to hold twice the mark and, when it must, clamps the
/// TCP window to the mark for the rest of the connection (`tcp_set_rcvlowat`); a mark of a
/// quarter of the initial receive buffer (128 KiB) never needs either.
const MAX_WAKE_AT: usize = 16 * 1024;

/// The fewest bytes a wait asks for before it sets a mark at all: below this the wait wakes
/// at the first byte.
///
/// Note: a mark saves wake-ups only when the replies owed come in several packets, and
/// changing it costs a system call. A few queries in flight (a shared client at low
/// concurrency: 1 to 4, owing 6 to 42 bytes) come back in one or two packets, and a mark
/// that followed their count changed at nearly every request (0.82 `setsockopt` per
/// request at `/db`, c=16, in `bench/web`); the tail of a long pipeline wakes at most a few
/// times more.
const MIN_WAKE_AT: usize = 64;

/// The bytes a cycle must receive before [`Stream::end_cycle`] moves the read buffer: glibc's
/// default trim threshold (128 KiB). Rows decoded from fewer bytes rarely leave that much to
/// give back to the kernel.
const MOVE_AFTER: usize = 2 * READ_SIZE;

/// The socket, its buffers and whether it failed.
///
/// The read buffer is always initialized to its full length: `read_buf[read_pos..read_end]`
/// holds the bytes received and not consumed yet, `read_buf[read_end..]` is free space the
/// socket reads into. Consuming a message only advances `read_pos`; bytes are moved to the
/// front only when the free space at the end runs short.
///
/// The read buffer grows only as bytes arrive: a message's claimed length is checked against
/// its type's limit ([`Phase`]) as soon as its header is in, and never reserves memory for
/// bytes that have not come (see [`Stream::make_room`]).
pub(crate) struct Stream {
    socket: Socket,
    read_buf: Vec<u8>,
    /// Start of the bytes of `read_buf` not consumed yet.
    read_pos: usize,
    /// End of the bytes received.
    read_end: usize,
    /// Bytes received since the last ReadyForQuery ([`Stream::end_cycle`]).
    cycle_received: usize,
    /// Whether the last read filled all the free space it was offered.
    read_was_full: bool,
    /// The bytes a cycle must receive for [`Stream::end_cycle`] to move the read buffer:
    /// [`MOVE_AFTER`] at first, then an eighth more than the cycle that last moved it.
    move_at: usize,
    write_buf: Vec<u8>,
    /// How much of `write_buf` the socket has taken.
    written: usize,
    broken: bool,
    /// Which length limits apply to the server's messages.
    phase: Phase,
    /// The largest the read buffer has been, for tests that it stays bounded.
    #[cfg(test)]
    peak_read_capacity: usize,
    /// The FATAL or PANIC error the server sent, if it did: its last words before closing,
    /// reported with the error the close causes.
    last_words: Option<Box<DbError>>,
    /// Bytes the socket has taken since the connection opened.
    sent_total: u64,
    /// The value of `sent_total` when every cycle sent had been answered last
    /// ([`Stream::settled`]); more, and a request is in flight.
    settled_at: u64,
    /// The TCP socket's receive low-water mark ([`wake`]): the bytes that must be waiting
    /// before a read wakes. 1 (the default) except during a wait that asked for more.
    wake_at: usize,
}

impl Stream {
    pub(crate) fn new(socket: Socket) -> Stream {
        Stream {
            socket,
            read_buf: vec![0; FIRST_READ_SIZE],
            read_pos: 0,
            read_end: 0,
            cycle_received: 0,
            read_was_full: false,
            move_at: MOVE_AFTER,
            write_buf: Vec::with_capacity(WRITE_SIZE),
            written: 0,
            broken: false,
            phase: Phase::Startup,
            #[cfg(test)]
            peak_read_capacity: FIRST_READ_SIZE,
            last_words: None,
            sent_total: 0,
            settled_at: 0,
            wake_at: 1,
        }
    }

    /// The startup handshake is over (the first ReadyForQuery was read): from now on the
    /// message types that may be large get their large limits.
    pub(crate) fn start_session(&mut self) {
        self.phase = Phase::Session;
    }

    /// The read and write buffers' capacities, and the largest the read buffer has been.
    #[cfg(test)]
    pub(crate) fn capacities(&self) -> (usize, usize, usize) {
        (
            self.read_buf.capacity(),
            self.write_buf.capacity(),
            self.peak_read_capacity,
        )
    }

    /// The TCP socket underneath, if the connection is over TCP (with or without TLS).
    #[cfg(test)]
    pub(crate) fn tcp(&self) -> Option<&TcpStream> {
        match &self.socket {
            Socket::Tcp(tcp) => Some(tcp),
            #[cfg(feature = "tls")]
            Socket::Tls(tls) => Some(tls.get_ref().0),
            #[cfg(unix)]
            Socket::Unix(_) => None,
        }
    }

    /// Whether a read or write failed; the connection cannot be used again.
    pub(crate) fn is_broken(&self) -> bool {
        self.broken
    }

    /// Marks the stream unusable (after a protocol violation).
    pub(crate) fn set_broken(&mut self) {
        self.broken = true;
    }

    /// The buffer messages are encoded into; [`Stream::flush`] sends it.
    pub(crate) fn write_buf(&mut self) -> &mut Vec<u8> {
        &mut self.write_buf
    }

    /// Sends everything in the write buffer.
    pub(crate) async fn flush(&mut self) -> Result<(), Error> {
        while self.written < self.write_buf.len() {
            match self.socket.write(&self.write_buf[self.written..]).await {
                Ok(0) => return Err(self.io_error(io::ErrorKind::WriteZero.into())),
                Ok(n) => {
                    self.written += n;
                    self.sent_total += n as u64;
                }
                Err(e) => return Err(self.io_error(e)),
            }
        }
        self.write_buf.clear();
        self.written = 0;
        if self.write_buf.capacity() > MAX_IDLE_CAPACITY {
            // Note: give back the memory of an unusually large message (a big parameter).
            self.write_buf = Vec::with_capacity(WRITE_SIZE);
        }
        if let Err(e) = self.socket.flush().await {
            return Err(self.io_error(e));
        }
        Ok(())
    }

    /// Waits for the next complete message, valid for [`Stream::decode`] until the next call.
    pub(crate) async fn next_frame(&mut self) -> Result<Received, Error> {
        loop {
            if let Some(found) = self.take_frame()? {
                return Ok(found);
            }
            std::future::poll_fn(|cx| self.poll_fill(cx, 1)).await?;
        }
    }

    /// Sends the write buffer while waiting for more bytes of replies: writes and reads
    /// progress together, so a large batch cannot deadlock with a server that stops reading
    /// until its replies are read. Ready once bytes were received; the caller takes the
    /// complete messages ([`Stream::try_frame`]) and may append to the write buffer before
    /// the next call.
    ///
    /// `owed` is a lower bound on the bytes the server will still send for what has been
    /// written (beyond the unconsumed bytes already received): over TCP, a wait for replies
    /// wakes only once that many have arrived (or the connection ends), not at every packet.
    /// The caller must be sure of it: more than will come, and the wait never ends.
    pub(crate) async fn receive_sending(&mut self, owed: usize) -> Result<(), Error> {
        let wake_at = owed.saturating_sub(self.read_end - self.read_pos).max(1);
        std::future::poll_fn(|cx| self.poll_progress(cx, wake_at)).await
    }

    /// Waits until the socket delivers more bytes (at least one) into the read buffer.
    pub(crate) async fn fill(&mut self) -> Result<(), Error> {
        std::future::poll_fn(|cx| self.poll_fill(cx, 1)).await
    }

    /// Told at each ReadyForQuery: after a cycle that received more than [`MOVE_AFTER`] bytes,
    /// and an eighth more than the cycle that last moved the read buffer, allocates the read
    /// buffer afresh, while the rows decoded from those bytes are still alive, when it holds
    /// nothing unread.
    ///
    /// Note: why. The rows of a large result are thousands of small allocations (strings,
    /// JSON maps) and one large one (the row vector), all freed by the caller together. With
    /// nothing alive above them, freeing the large one makes glibc merge them all into the
    /// top of the heap and return it to the kernel (above its 128 KiB trim threshold), and
    /// the next result faults every page of it back in: about 180 page faults per query of
    /// 1,000 ten-column rows. The fresh buffer lands above those rows and stays alive, so the
    /// memory they free is reused by the next result instead. It is moved again only when a
    /// result outgrows that one by more than results of one query vary, and so could leave
    /// more than the trim threshold of rows above it: a connection running results of about
    /// one size moves it once.
    pub(crate) fn end_cycle(&mut self) {
        let received = std::mem::take(&mut self.cycle_received);
        if received > self.move_at && self.read_pos == self.read_end {
            self.move_at = received + received / 8;
            self.read_pos = 0;
            self.read_end = 0;
            self.read_buf = vec![0; self.read_buf.len()];
        }
    }

    /// The complete message at the front of the received bytes, consumed, if there is one;
    /// `None` when more bytes must be read first.
    #[inline(always)]
    pub(crate) fn try_frame(&mut self) -> Result<Option<Received>, Error> {
        self.take_frame()
    }

    /// How many complete DataRow messages follow one another at the front of the received
    /// bytes (not consumed): a lower bound on the rows of a result still to read.
    pub(crate) fn buffered_rows(&self) -> usize {
        self.buffered(DataRow::TAG)
    }

    /// How many complete messages with tag `tag` follow one another at the front of the
    /// received bytes (not consumed).
    fn buffered(&self, tag: u8) -> usize {
        let mut pending = self
            .read_buf
            .get(self.read_pos..self.read_end)
            .unwrap_or_default();
        // Note: the limit is looked up once, not per message: this runs over every row of a
        // result already received.
        let limit = max_body_len(tag, self.phase);
        let mut count = 0;
        while let [first, a, b, c, d, ..] = *pending
            && first == tag
        {
            // The bounds `claimed_body_len` checks; a message outside them ends the count
            // (and is refused when it is taken).
            let claimed = u32::from_be_bytes([a, b, c, d]) as usize;
            if !(4..=limit.saturating_add(4)).contains(&claimed) {
                break;
            }
            let Some(rest) = pending.get(1 + claimed..) else {
                break;
            };
            count += 1;
            pending = rest;
        }
        count
    }

    /// Consumes the complete message at the front of the received bytes, if there is one.
    ///
    /// Note: every reply of a query passes here, so a complete, valid message other than an
    /// ErrorResponse is framed inline, with the checks `frame` makes (a length of at least 4,
    /// a body within its type's limit); the rest (an incomplete or invalid message, an
    /// error) goes through [`Stream::take_frame_slow`]. Always inlined: a reply loop that
    /// called it would save and restore its registers once per message.
    #[inline(always)]
    fn take_frame(&mut self) -> Result<Option<Received>, Error> {
        let pending = self
            .read_buf
            .get(self.read_pos..self.read_end)
            .unwrap_or_default();
        let [tag, a, b, c, d, ..] = *pending else {
            // Not even a header (often an empty buffer, after the last reply was read).
            return Ok(None);
        };
        let claimed = u32::from_be_bytes([a, b, c, d]) as usize;
        // Note: a claimed length below 4 wraps around and fails the limit.
        if tag != error_response::TAG
            && claimed.wrapping_sub(4) <= max_body_len(tag, self.phase)
            && pending.len() > claimed
        {
            let start = self.read_pos;
            self.read_pos += 1 + claimed;
            return Ok(Some(Received {
                tag,
                start: start + 5,
                end: start + 1 + claimed,
            }));
        }
        self.take_frame_slow()
    }

    /// [`Stream::take_frame`] of a message that is incomplete, invalid or an ErrorResponse
    /// (whose FATAL or PANIC fields are kept).
    #[cold]
    #[inline(never)]
    fn take_frame_slow(&mut self) -> Result<Option<Received>, Error> {
        let pending = self
            .read_buf
            .get(self.read_pos..self.read_end)
            .unwrap_or_default();
        match frame(pending, self.phase) {
            Ok(Some(Frame {
                tag,
                body_start,
                end,
            })) => {
                let start = self.read_pos;
                self.read_pos += end;
                let received = Received {
                    tag,
                    start: start + body_start,
                    end: start + end,
                };
                if tag == error_response::TAG {
                    self.note_error(received);
                }
                Ok(Some(received))
            }
            Ok(None) => Ok(None),
            Err(e) => {
                self.broken = true;
                Err(Error::with_source(
                    Kind::Protocol,
                    "the server sent an invalid message; the connection is closed",
                    e,
                ))
            }
        }
    }

    /// The number of bytes in the write buffer not yet sent.
    pub(crate) fn unsent(&self) -> usize {
        self.write_buf.len() - self.written
    }

    /// Writes what it can, then reads what it can; ready once some bytes were read. While
    /// bytes remain unsent the wait wakes at every arrival (the server may be waiting for its
    /// replies to be read before it reads more); once all are sent, at `wake_at` bytes.
    fn poll_progress(&mut self, cx: &mut Context<'_>, wake_at: usize) -> Poll<Result<(), Error>> {
        if let Err(e) = self.poll_send(cx) {
            return Poll::Ready(Err(self.io_error(e)));
        }
        let wake_at = if self.unsent() == 0 { wake_at } else { 1 };
        self.poll_fill(cx, wake_at)
    }

    /// Reads what the socket has into the free space (made first); ready once bytes were read.
    /// When it must wait, it wakes once `wake_at` bytes have arrived (over TCP on Linux; at
    /// the first byte elsewhere).
    ///
    /// Note: the buffer is initialized and `read_end` moves in the same poll that reads, so a
    /// dropped future never leaves a partial message or unaccounted bytes behind.
    fn poll_fill(&mut self, cx: &mut Context<'_>, wake_at: usize) -> Poll<Result<(), Error>> {
        if let Err(e) = self.set_wake_at(wake_at) {
            return Poll::Ready(Err(self.io_error(e)));
        }
        self.make_room();
        let free = self.read_buf.get_mut(self.read_end..).unwrap_or_default();
        let offered = free.len();
        let mut buf = ReadBuf::new(free);
        match Pin::new(&mut self.socket).poll_read(cx, &mut buf) {
            Poll::Ready(Ok(())) if buf.filled().is_empty() => {
                self.broken = true;
                let e = self.closed_error(Error::new(
                    Kind::Closed,
                    "the server closed the connection; open a new connection",
                ));
                Poll::Ready(Err(self.in_flight_outcome(e)))
            }
            Poll::Ready(Ok(())) => {
                self.read_was_full = buf.filled().len() == offered;
                self.read_end += buf.filled().len();
                self.cycle_received += buf.filled().len();
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(self.io_error(e))),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Sets the TCP socket's receive low-water mark for a wait that wants `wants` bytes: at
    /// most that (a higher mark could outwait the bytes to come), and not lower than half of
    /// it; none (the first byte) below [`MIN_WAKE_AT`]. A new mark is a quarter below the
    /// wish, so that the next few waits, each wanting a little less, keep it without a system
    /// call. Other sockets wake at the first byte.
    ///
    /// Note: every read sets the mark it needs, so a wait that was dropped leaves none behind
    /// for the next one.
    fn set_wake_at(&mut self, wants: usize) -> io::Result<()> {
        let wants = if wants < MIN_WAKE_AT {
            1
        } else {
            wants.min(MAX_WAKE_AT)
        };
        if self.wake_at <= wants && (self.wake_at >= wants / 2 || !wake::SUPPORTED) {
            return Ok(());
        }
        let Socket::Tcp(tcp) = &self.socket else {
            return Ok(());
        };
        let mark = wants - wants / 4;
        wake::set_rcvlowat(tcp, mark)?;
        self.wake_at = mark;
        Ok(())
    }

    /// Makes sure the free space after the received bytes takes at least [`MIN_READ`] bytes
    /// and the rest of the message at the front, as far as the bytes received so far
    /// vouch for it: moves the unconsumed bytes to the front when the free space runs short,
    /// and grows the buffer only when that is not enough.
    fn make_room(&mut self) {
        let pending = self.read_end - self.read_pos;
        if pending == 0 {
            self.read_pos = 0;
            self.read_end = 0;
            if self.read_buf.len() > MAX_IDLE_CAPACITY {
                // Note: give back the memory of an unusually large message.
                self.read_buf = vec![0; READ_SIZE];
            }
        }
        let rest = match self.read_buf.get(self.read_pos..self.read_end) {
            Some(pending) if !pending.is_empty() => message_len(pending, self.phase),
            _ => 0,
        }
        .saturating_sub(pending);
        // Note: room for the rest of a message only up to as many bytes as have arrived
        // (at least a [`READ_SIZE`]): a large message doubles the buffer as its bytes come,
        // and a length the peer claims but never sends costs no memory.
        // A buffer still at its first size grows to [`READ_SIZE`] once a read fills it.
        let least = if self.read_was_full && self.read_buf.len() < READ_SIZE {
            READ_SIZE
        } else {
            MIN_READ
        };
        let want = rest.min(pending.max(READ_SIZE)).max(least);
        if self.read_buf.len() - self.read_end >= want {
            return;
        }
        self.read_buf.copy_within(self.read_pos..self.read_end, 0);
        self.read_pos = 0;
        self.read_end = pending;
        if self.read_buf.len() - pending < want {
            let grown = (pending + want).max(self.read_buf.len() * 2);
            self.read_buf.resize(grown, 0);
            #[cfg(test)]
            {
                self.peak_read_capacity = self.peak_read_capacity.max(self.read_buf.capacity());
            }
        }
    }

    /// Sends as much of the write buffer as the socket takes without waiting.
    fn poll_send(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        while self.written < self.write_buf.len() {
            let unsent = &self.write_buf[self.written..];
            match Pin::new(&mut self.socket).poll_write(cx, unsent) {
                Poll::Ready(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
                Poll::Ready(Ok(n)) => {
                    self.written += n;
                    self.sent_total += n as u64;
                }
                Poll::Ready(Err(e)) => return Err(e),
                Poll::Pending => break,
            }
        }
        if self.written == self.write_buf.len() && !self.write_buf.is_empty() {
            if let Poll::Ready(result) = Pin::new(&mut self.socket).poll_flush(cx) {
                result?;
                self.write_buf.clear();
                self.written = 0;
            }
        } else if self.written >= MAX_IDLE_CAPACITY / 16 {
            // Note: keep a buffer that is refilled while it drains from growing.
            self.write_buf.drain(..self.written);
            self.written = 0;
        }
        Ok(())
    }

    /// Decodes a message [`Stream::next_frame`] returned, borrowing from the read buffer:
    /// a DataRow's columns are read in place, never copied.
    // Note: always inlined, so a reply loop matching on the result branches on the tag
    // once, as it would on the raw byte; the compiler leaves it out of line in large loops.
    #[inline(always)]
    pub(crate) fn decode(&self, message: Received) -> Result<Backend<'_>, DecodeError> {
        Backend::decode(message.tag, self.body(message))
    }

    /// The body of a message [`Stream::next_frame`] returned.
    #[inline(always)]
    fn body(&self, message: Received) -> &[u8] {
        self.read_buf
            .get(message.start..message.end)
            .unwrap_or_default()
    }

    fn io_error(&mut self, e: io::Error) -> Error {
        self.broken = true;
        let e = self.closed_error(Error::with_source(
            Kind::Io,
            "reading from or writing to the server failed; open a new connection",
            e,
        ));
        self.in_flight_outcome(e)
    }

    /// Keeps a FATAL or PANIC error: the server closes the connection after it, and the
    /// error that close causes carries it ([`Error::code`] gives its SQLSTATE).
    #[cold]
    fn note_error(&mut self, message: Received) {
        if let Ok(db) = error_response::decode_fields(self.body(message))
            && matches!(
                db.severity_nonlocalized.as_deref().unwrap_or(&db.severity),
                "FATAL" | "PANIC"
            )
        {
            self.last_words = Some(Box::new(db));
        }
    }

    /// The error for a connection the server closed, with its last words when it sent them.
    fn closed_error(&self, fallback: Error) -> Error {
        match &self.last_words {
            Some(db) => Error::with_source(
                Kind::Closed,
                "the server ended the session and closed the connection; open a new connection",
                db.as_ref().clone(),
            ),
            None => fallback,
        }
    }

    /// `e`, marked [outcome unknown](Error::is_outcome_unknown) when a request was sent since
    /// every cycle was last answered: the server may have run it (and committed) or not.
    fn in_flight_outcome(&self, e: Error) -> Error {
        if self.in_flight() {
            e.outcome_unknown()
        } else {
            e
        }
    }

    /// Bytes the socket has taken since the connection opened.
    pub(crate) fn sent_total(&self) -> u64 {
        self.sent_total
    }

    /// Bytes queued since the connection opened: those sent plus those in the write buffer.
    pub(crate) fn queued_total(&self) -> u64 {
        self.sent_total + (self.write_buf.len() - self.written) as u64
    }

    /// Whether bytes were sent since every cycle was last answered ([`Stream::settled`]).
    pub(crate) fn in_flight(&self) -> bool {
        self.sent_total > self.settled_at
    }

    /// Every cycle sent has been answered: what was sent so far has a known outcome.
    #[inline]
    pub(crate) fn settled(&mut self) {
        self.settled_at = self.sent_total;
    }

    /// Sends Terminate and shuts the socket down, ignoring errors: the session is over.
    pub(crate) async fn terminate(&mut self) {
        if self.broken {
            return;
        }
        crate::proto::message::terminate(&mut self.write_buf);
        if self.flush().await.is_ok() {
            let _ = self.socket.shutdown().await;
        }
        self.broken = true;
    }
}

/// The whole length of the message whose header starts `pending`, 0 while the header is
/// incomplete or invalid (an invalid header is reported by [`frame`]).
fn message_len(pending: &[u8], phase: Phase) -> usize {
    match claimed_body_len(pending, phase) {
        Ok(Some(body_len)) => body_len + 5,
        Ok(None) | Err(_) => 0,
    }
}

mod wake;

#[cfg(test)]
mod bounded;

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    /// A backend message with tag `tag` and a body of `len` bytes counting up from `seed`.
    fn message(tag: u8, len: usize, seed: u8) -> Vec<u8> {
        let mut m = vec![tag];
        m.extend_from_slice(&i32::try_from(len + 4).unwrap().to_be_bytes());
        m.extend((0..len).map(|i| seed.wrapping_add(u8::try_from(i % 251).unwrap())));
        m
    }

    #[test]
    fn message_len_reads_complete_headers_only() {
        let session = Phase::Session;
        assert_eq!(message_len(b"D\0\0", session), 0);
        assert_eq!(message_len(b"D\0\0\0\x09abc", session), 10);
        assert_eq!(message_len(b"D\xff\xff\xff\xff", session), 0);
        assert_eq!(message_len(b"D\0\x01\0\0", Phase::Startup), 0);
    }

    #[tokio::test]
    async fn small_and_large_messages_in_odd_pieces() {
        let (client, mut server) = UnixStream::pair().unwrap();
        let mut stream = Stream::new(Socket::Unix(client));
        stream.start_session();
        let sizes = [0, 1, 300, READ_SIZE * 3 + 7, 5, MIN_READ, 70_000, 2];
        let messages: Vec<Vec<u8>> = (0u8..)
            .zip(sizes)
            .map(|(i, len)| message(b'D', len, i))
            .collect();
        let bytes = messages.concat();
        let writer = tokio::spawn(async move {
            for piece in bytes.chunks(4093) {
                server.write_all(piece).await.unwrap();
            }
            server
        });
        for expected in &messages {
            let received = stream.next_frame().await.unwrap();
            assert_eq!(received.tag, b'D');
            assert_eq!(stream.body(received), &expected[5..]);
        }
        drop(writer.await.unwrap());
        assert!(stream.next_frame().await.is_err());
        assert!(stream.is_broken());
    }

    #[tokio::test]
    async fn data_rows_with_a_length_below_4_or_over_the_limit_are_refused() {
        for header in [&b"D\0\0\0\x03"[..], b"D\xff\xff\xff\xff", b"D\x40\0\0\x05"] {
            let (client, mut server) = UnixStream::pair().unwrap();
            let mut stream = Stream::new(Socket::Unix(client));
            stream.start_session();
            server.write_all(&message(b'D', 2, 7)).await.unwrap();
            server.write_all(header).await.unwrap();
            server.write_all(&[0; 16]).await.unwrap();
            let row = stream.next_frame().await.unwrap();
            assert_eq!(stream.body(row), &message(b'D', 2, 7)[5..]);
            let err = stream.next_frame().await.unwrap_err();
            assert!(
                err.to_string().contains("invalid message"),
                "{header:?}: {err}"
            );
            assert!(stream.is_broken());
        }
    }

    #[tokio::test]
    async fn buffered_counts_complete_messages_of_one_tag() {
        let (client, mut server) = UnixStream::pair().unwrap();
        let mut stream = Stream::new(Socket::Unix(client));
        stream.start_session();
        let rows: Vec<u8> = [
            message(b'D', 3, 0),
            message(b'D', 0, 0),
            message(b'D', 40, 1),
            message(b'C', 5, 0),
            message(b'D', 1, 0),
        ]
        .concat();
        server.write_all(&rows).await.unwrap();
        let partial = message(b'D', 10, 0);
        server.write_all(&partial[..7]).await.unwrap();
        while stream.read_end < rows.len() + 7 {
            stream.fill().await.unwrap();
        }
        assert_eq!(stream.buffered_rows(), 3);
        assert_eq!(stream.buffered(b'C'), 0);
        for _ in 0..4 {
            stream.next_frame().await.unwrap();
        }
        // A DataRow, then one whose body has not fully arrived.
        assert_eq!(stream.buffered_rows(), 1);
    }

    #[tokio::test]
    async fn a_claimed_gigabyte_costs_only_the_bytes_that_arrive() {
        let (client, mut server) = UnixStream::pair().unwrap();
        let mut stream = Stream::new(Socket::Unix(client));
        stream.start_session();
        // A DataRow claiming 1 GiB (the most a DataRow may), of which 100 kB arrive.
        server.write_all(b"D\x40\0\0\x04").await.unwrap();
        server.write_all(&[7; 100_000]).await.unwrap();
        while stream.read_end - stream.read_pos < 100_005 {
            stream.fill().await.unwrap();
        }
        assert!(stream.next_frame().now_or_never().is_none());
        let (read, _, peak) = stream.capacities();
        assert!(peak < 1 << 20, "the read buffer grew to {peak} bytes");
        assert_eq!(read, peak);
        // More bytes: the buffer grows with them, at most doubling what has arrived.
        let writer = tokio::spawn(async move {
            server.write_all(&[7; 1_000_000]).await.unwrap();
            server
        });
        while stream.read_end - stream.read_pos < 1_100_005 {
            stream.fill().await.unwrap();
        }
        drop(writer.await.unwrap());
        let (_, _, peak) = stream.capacities();
        assert!(
            peak <= 4 * 1_100_005,
            "the read buffer grew to {peak} bytes"
        );
    }

    #[tokio::test]
    async fn the_read_buffer_moves_after_a_cycle_an_eighth_larger_than_the_last_move() {
        let (client, mut server) = UnixStream::pair().unwrap();
        let mut stream = Stream::new(Socket::Unix(client));
        stream.start_session();
        let mut cycle = async |stream: &mut Stream, len: usize| {
            let m = message(b'D', len, 0);
            let writer = server.write_all(&m);
            let (written, received) = tokio::join!(writer, stream.next_frame());
            written.unwrap();
            let received = received.unwrap();
            assert_eq!(received.end - received.start, len);
            let (before, len) = (stream.read_buf.as_ptr(), stream.read_buf.len());
            stream.end_cycle();
            assert_eq!(stream.read_buf.len(), len, "the buffer keeps its size");
            before != stream.read_buf.as_ptr()
        };
        assert!(!cycle(&mut stream, 1000).await, "a small cycle");
        assert!(
            cycle(&mut stream, MOVE_AFTER + 10).await,
            "the first large cycle"
        );
        assert!(!cycle(&mut stream, MOVE_AFTER).await, "a smaller cycle");
        let large = MOVE_AFTER + 10;
        assert!(
            !cycle(&mut stream, large + large / 8 - 5).await,
            "a little larger"
        );
        assert!(
            cycle(&mut stream, large + large / 8 + 5).await,
            "an eighth larger"
        );
    }

    #[tokio::test]
    async fn a_large_header_during_startup_is_refused_at_once() {
        let (client, mut server) = UnixStream::pair().unwrap();
        let mut stream = Stream::new(Socket::Unix(client));
        // An Authentication request claiming 1 GiB; the server then waits.
        server.write_all(b"R\x40\0\0\x04").await.unwrap();
        let err = stream.next_frame().await.unwrap_err();
        assert!(err.to_string().contains("invalid message"), "{err}");
        assert!(stream.is_broken());
        assert_eq!(stream.capacities().2, FIRST_READ_SIZE);
    }

    #[tokio::test]
    async fn the_read_buffer_stays_while_it_holds_unread_bytes() {
        let (client, mut server) = UnixStream::pair().unwrap();
        let mut stream = Stream::new(Socket::Unix(client));
        stream.start_session();
        let m = [message(b'D', MOVE_AFTER + 10, 0), message(b'C', 3, 0)].concat();
        let writer = server.write_all(&m);
        let (written, received) = tokio::join!(writer, stream.next_frame());
        written.unwrap();
        received.unwrap();
        while stream.read_end - stream.read_pos < 8 {
            stream.fill().await.unwrap();
        }
        let before = stream.read_buf.as_ptr();
        stream.end_cycle();
        assert_eq!(before, stream.read_buf.as_ptr());
        let received = stream.next_frame().await.unwrap();
        assert_eq!(stream.body(received), b"\0\x01\x02");
    }

    #[tokio::test]
    async fn a_dropped_read_keeps_a_partial_message() {
        let (client, mut server) = UnixStream::pair().unwrap();
        let mut stream = Stream::new(Socket::Unix(client));
        stream.start_session();
        let first = message(b'D', 100_000, 1);
        let second = message(b'C', 12, 2);
        server.write_all(&first[..50_000]).await.unwrap();
        for _ in 0..3 {
            assert!(stream.next_frame().now_or_never().is_none());
        }
        let rest = [&first[50_000..], &second[..]].concat();
        server.write_all(&rest).await.unwrap();
        let received = stream.next_frame().await.unwrap();
        assert_eq!((received.tag, stream.body(received)), (b'D', &first[5..]));
        let received = stream.next_frame().await.unwrap();
        assert_eq!((received.tag, stream.body(received)), (b'C', &second[5..]));
    }
}
