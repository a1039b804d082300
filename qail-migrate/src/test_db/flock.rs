//! An exclusive, non-blocking lock on a file (`flock(2)`), released when the file is closed
//! — also when its process dies.

#![allow(
    unsafe_code,
    reason = "flock(2), which std exposes only from Rust 1.89 (File::try_lock), above the MSRV"
)]

use std::fs::File;
use std::io;

/// Whether the lock on `file` was taken (false: another open file holds it).
#[cfg(unix)]
pub(super) fn try_lock(file: &File) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is the open file `file` borrows for the call; flock takes no
    // pointers.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// Elsewhere no lock is taken: the bound holds within a process only.
#[cfg(not(unix))]
pub(super) fn try_lock(_file: &File) -> io::Result<bool> {
    Ok(true)
}
