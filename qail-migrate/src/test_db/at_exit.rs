//! Waiting for the dropper when the process exits: `atexit(3)`, which the test harness's
//! exit (cargo test's after the last test, cargo-nextest's after each test) runs.

#![allow(
    unsafe_code,
    reason = "atexit(3): std has no hook for a process's normal exit"
)]

use std::sync::Once;

/// Registers, once per process, the wait for the dropper at exit.
pub(super) fn wait_for_drops_once() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(register);
}

extern "C" fn at_exit() {
    // Note: nothing may unwind out of an `extern "C"` function.
    let _ = std::panic::catch_unwind(super::dropper::wait_for_drops);
}

#[cfg(unix)]
fn register() {
    // SAFETY: `at_exit` is a function of the program, which lives as long as the process,
    // and does not unwind.
    if unsafe { libc::atexit(at_exit) } != 0 {
        eprintln!("qail::test: could not register the wait for the dropper at exit");
    }
}

/// Elsewhere the process does not wait: drops pending at its exit are left to the next
/// process's sweep.
#[cfg(not(unix))]
fn register() {}
