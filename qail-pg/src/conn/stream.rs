//! The socket with its read and write buffers: whole messages in, whole messages out.
//!
//! Both directions are cancel safe: a write interrupted by a dropped future keeps its
//! unsent bytes in the buffer and the next [`Stream::flush`] sends them; reads only ever
//! append to the read buffer, and a message is consumed only once it is complete.

use std::io;
use std::ops::Range;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
#[cfg(unix)]
use tokio::net::UnixStream;

use crate::error::{Error, Kind};
use crate::proto::message::{Frame, frame};

/// A connected socket: plain TCP, a Unix socket, or TLS over TCP.
pub(crate) enum Socket {
    Tcp(TcpStream),
    #[cfg(unix)]
    Unix(UnixStream),
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
            Socket::Tls(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Socket::Tcp(s) => Pin::new(s).poll_flush(cx),
            #[cfg(unix)]
            Socket::Unix(s) => Pin::new(s).poll_flush(cx),
            Socket::Tls(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Socket::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            #[cfg(unix)]
            Socket::Unix(s) => Pin::new(s).poll_shutdown(cx),
            Socket::Tls(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

/// How many bytes to ask the socket for at least on each read.
const READ_CHUNK: usize = 8 * 1024;

/// The largest read buffer kept between messages.
const MAX_IDLE_CAPACITY: usize = 1024 * 1024;

/// The socket, its buffers and whether it failed.
pub(crate) struct Stream {
    socket: Socket,
    read_buf: Vec<u8>,
    /// Start of the bytes of `read_buf` not consumed yet.
    read_pos: usize,
    write_buf: Vec<u8>,
    /// How much of `write_buf` the socket has taken.
    written: usize,
    broken: bool,
}

impl Stream {
    pub(crate) fn new(socket: Socket) -> Stream {
        Stream {
            socket,
            read_buf: Vec::with_capacity(READ_CHUNK),
            read_pos: 0,
            write_buf: Vec::with_capacity(READ_CHUNK),
            written: 0,
            broken: false,
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
                Ok(n) => self.written += n,
                Err(e) => return Err(self.io_error(e)),
            }
        }
        self.write_buf.clear();
        self.written = 0;
        if let Err(e) = self.socket.flush().await {
            return Err(self.io_error(e));
        }
        Ok(())
    }

    /// Waits for the next complete message; returns its tag and the range of its body,
    /// valid for [`Stream::body`] until the next call.
    pub(crate) async fn next_frame(&mut self) -> Result<(u8, Range<usize>), Error> {
        loop {
            let pending = self.read_buf.get(self.read_pos..).unwrap_or_default();
            match frame(pending) {
                Ok(Some(Frame {
                    tag,
                    body_start,
                    end,
                })) => {
                    let start = self.read_pos;
                    self.read_pos += end;
                    return Ok((tag, start + body_start..start + end));
                }
                Ok(None) => self.fill().await?,
                Err(e) => {
                    self.broken = true;
                    return Err(Error::with_source(
                        Kind::Protocol,
                        "the server sent an invalid message; the connection is closed",
                        e,
                    ));
                }
            }
        }
    }

    /// Like [`Stream::next_frame`], but sends the write buffer while waiting: writes and reads
    /// progress together, so a large batch cannot deadlock with a server that stops reading
    /// until its replies are read. Bytes may be appended to the write buffer between calls.
    pub(crate) async fn next_frame_sending(&mut self) -> Result<(u8, Range<usize>), Error> {
        loop {
            let pending = self.read_buf.get(self.read_pos..).unwrap_or_default();
            if !matches!(frame(pending), Ok(None)) {
                return self.next_frame().await;
            }
            if self.read_pos > 0 {
                self.read_buf.drain(..self.read_pos);
                self.read_pos = 0;
            }
            std::future::poll_fn(|cx| self.poll_progress(cx)).await?;
        }
    }

    /// The number of bytes in the write buffer not yet sent.
    pub(crate) fn unsent(&self) -> usize {
        self.write_buf.len() - self.written
    }

    /// Writes what it can, then reads what it can; ready once some bytes were read.
    fn poll_progress(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        if let Err(e) = self.poll_send(cx) {
            return Poll::Ready(Err(self.io_error(e)));
        }
        // Note: read into a local chunk and append it in the same poll, so a dropped future
        // never leaves unfilled bytes in the read buffer.
        let mut chunk = [0u8; READ_CHUNK];
        let mut buf = ReadBuf::new(&mut chunk);
        match Pin::new(&mut self.socket).poll_read(cx, &mut buf) {
            Poll::Ready(Ok(())) if buf.filled().is_empty() => {
                self.broken = true;
                Poll::Ready(Err(Error::new(
                    Kind::Closed,
                    "the server closed the connection; open a new connection",
                )))
            }
            Poll::Ready(Ok(())) => {
                self.read_buf.extend_from_slice(buf.filled());
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(self.io_error(e))),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Sends as much of the write buffer as the socket takes without waiting.
    fn poll_send(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        while self.written < self.write_buf.len() {
            let unsent = &self.write_buf[self.written..];
            match Pin::new(&mut self.socket).poll_write(cx, unsent) {
                Poll::Ready(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
                Poll::Ready(Ok(n)) => self.written += n,
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

    /// The body of the message [`Stream::next_frame`] returned.
    pub(crate) fn body(&self, range: Range<usize>) -> &[u8] {
        self.read_buf.get(range).unwrap_or_default()
    }

    /// Reads more bytes, first moving unconsumed bytes to the front of the buffer.
    async fn fill(&mut self) -> Result<(), Error> {
        if self.read_pos > 0 {
            self.read_buf.drain(..self.read_pos);
            self.read_pos = 0;
        }
        if self.read_buf.is_empty() && self.read_buf.capacity() > MAX_IDLE_CAPACITY {
            // Note: give back the memory of an unusually large message.
            self.read_buf = Vec::with_capacity(READ_CHUNK);
        }
        self.read_buf.reserve(READ_CHUNK);
        match self.socket.read_buf(&mut self.read_buf).await {
            Ok(0) => {
                self.broken = true;
                Err(Error::new(
                    Kind::Closed,
                    "the server closed the connection; open a new connection",
                ))
            }
            Ok(_) => Ok(()),
            Err(e) => Err(self.io_error(e)),
        }
    }

    fn io_error(&mut self, e: io::Error) -> Error {
        self.broken = true;
        Error::with_source(
            Kind::Io,
            "reading from or writing to the server failed; open a new connection",
            e,
        )
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
