//! The receive low-water mark (`SO_RCVLOWAT`) of a TCP socket: how many bytes must be
//! waiting before the kernel wakes the reader.
//!
//! A per-query pipeline's replies come in one small packet per query (the server flushes at
//! every Sync), and a client that decodes faster than the server answers is woken for every
//! few queries: on a virtual machine that wake-up (`epoll_wait`, the scheduler, the read)
//! costs more system time than the replies it reads. Waiting until as many bytes have
//! arrived as the queries still owed must send at the least wakes the client a few times per
//! batch instead. The mark is a lower bound of what is owed, so the wait always ends.

#![allow(
    unsafe_code,
    reason = "setsockopt(SO_RCVLOWAT), which neither std, tokio nor socket2 expose"
)]

use std::io;

use tokio::net::TcpStream;

/// Sets the socket's receive low-water mark to `bytes` (at least 1).
#[cfg(target_os = "linux")]
pub(super) fn set_rcvlowat(tcp: &TcpStream, bytes: usize) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let value = libc::c_int::try_from(bytes.max(1)).unwrap_or(libc::c_int::MAX);
    let len = libc::socklen_t::try_from(size_of::<libc::c_int>()).unwrap_or(4);
    // SAFETY: the descriptor is the open socket `tcp` borrows for the call, and the option
    // value points at a live c_int of the length given.
    let rc = unsafe {
        libc::setsockopt(
            tcp.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVLOWAT,
            (&raw const value).cast(),
            len,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Elsewhere the mark stays at its default (1 byte): every arrival wakes the reader.
#[cfg(not(target_os = "linux"))]
pub(super) fn set_rcvlowat(_: &TcpStream, _: usize) -> io::Result<()> {
    Ok(())
}

/// Whether marks are set on this platform at all.
pub(super) const SUPPORTED: bool = cfg!(target_os = "linux");
