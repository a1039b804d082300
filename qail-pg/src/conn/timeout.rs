//! Query time-outs: a query that runs longer than [`Connection::set_query_timeout`] is
//! cancelled on the server ([`CancelToken`]) and its replies are drained, for a bounded time.

use std::pin::Pin;
use std::time::Duration;

use super::connect::CancelToken;
use super::{BoxedFuture, Connection};
use crate::error::{Error, Kind};

impl Connection {
    /// Sets a time-out for each query (`None`, the default: no time-out). A query that runs
    /// longer is cancelled on the server, its replies are drained, and it fails with an
    /// error for which [`Error::is_timeout`] is true; the connection stays usable.
    ///
    /// It covers each call that runs SQL and returns when it is done: run-time queries,
    /// compiled queries (`fetch_*`, `for_each*`, `execute`), [`Connection::batch_execute`]
    /// and every pipeline (the time-out applies to the whole pipeline: an atomic batch is
    /// rolled back; in a per-query pipeline only the query running is cancelled, and those
    /// already sent after it still run, their results dropped — use an atomic pipeline when
    /// a time-out must leave nothing behind), and every other wait on the server: `begin`,
    /// `commit`, `rollback` (and savepoints), `prepare`, a COPY's start, each of its sends
    /// that waits for the socket, its `finish` and `fail`, and [`Connection::close`] (which
    /// otherwise gives up after 5 s). The cancel and the draining of replies after a time-out
    /// take at most half the time-out (between 250 ms and 500 ms) more; when the server does
    /// not answer within that, the connection is closed. A time-out whose statement may have
    /// completed is [outcome unknown](Error::is_outcome_unknown). It does not cover calls
    /// whose pace the caller sets: a row stream (`fetch`) and `copy_out`, which the caller can
    /// wrap in `tokio::time::timeout`.
    pub fn set_query_timeout(&mut self, timeout: Option<Duration>) {
        self.query_timeout = timeout;
    }

    /// The per-query time-out.
    pub fn query_timeout(&self) -> Option<Duration> {
        self.query_timeout
    }

    /// After a time-out: cancels the query on the server and drains its replies, for at most
    /// [`cancel_grace`] (a server that vanished answers neither); when that fails, the
    /// connection is closed.
    /// Boxed (see [`BoxedFuture`]): not compiled in every `timed!` site's time-out branch.
    #[inline(never)]
    pub(crate) fn timed_out(
        &mut self,
        token: CancelToken,
        limit: Duration,
    ) -> BoxedFuture<'_, Error> {
        Box::pin(self.cancel_and_drain(token, limit))
    }

    async fn cancel_and_drain(&mut self, token: CancelToken, limit: Duration) -> Error {
        let grace = cancel_grace(limit);
        let in_flight = self.stream.in_flight();
        self.discarded_error = false;
        let cancel_and_drain = async {
            token.cancel().await?;
            self.ready().await
        };
        let outcome = tokio::time::timeout(grace, cancel_and_drain).await;
        let mut message = format!(
            "the query did not finish within the time-out of {limit:?} and was cancelled; raise \
             the time-out with set_query_timeout or make the query faster"
        );
        let mut known = !in_flight;
        match outcome {
            // The cancelled statement's error was read: it did not complete.
            Ok(Ok(())) if self.discarded_error => known = true,
            Ok(Ok(())) => {}
            Ok(Err(_)) => {
                self.stream.set_broken();
                message.push_str("; the cancel failed, so the connection is closed");
            }
            Err(_) => {
                self.stream.set_broken();
                message.push_str(&format!(
                    "; the server did not answer the cancel within {grace:?} either (is the \
                     network or the server down?), so the connection is closed"
                ));
            }
        }
        let e = Error::new(Kind::Timeout, message);
        if known { e } else { e.outcome_unknown() }
    }
}

/// How long the cancel-and-drain after a time-out of `limit` may take: half the time-out,
/// between 250 ms and 500 ms. A healthy server answers a cancel within milliseconds; the floor
/// leaves room for a busy machine.
pub(crate) fn cancel_grace(limit: Duration) -> Duration {
    (limit / 2).clamp(Duration::from_millis(250), Duration::from_millis(500))
}

/// Runs `$fut` (which borrows `$conn`) under the connection's query time-out.
///
/// Note: the time-out branch is boxed: its timer and the cancel request (a connection of its
/// own, TLS included) would otherwise take kilobytes in the state of every query future, which
/// is moved on every call even when no time-out is set. It polls `$fut` through `dyn Future`
/// ([`within`]), so the timer's code is compiled once per result type, not once per call site.
/// `$fut` is written in both branches: an `async` block there would be two types, its code
/// compiled twice, so callers pass a call of a named `async fn`.
macro_rules! timed {
    ($conn:expr, $fut:expr) => {
        $crate::conn::timeout::timed!($conn, $fut, |fut| -> ::core::pin::Pin<
            &mut (dyn Future<Output = _> + Send + '_),
        > { fut })
    };
    // `$poll` turns the pinned future into what the time-out branch polls: the future itself
    // where it is generic over the caller's types (a pipeline's jobs, which need not be `Send`).
    ($conn:expr, $fut:expr, $poll:expr) => {{
        match $conn.query_timeout() {
            None => $fut.await,
            Some(limit) => {
                Box::pin(async {
                    let token = $conn.cancel_token();
                    let outcome = {
                        let fut = ::core::pin::pin!($fut);
                        $crate::conn::timeout::within(limit, $poll(fut)).await
                    };
                    match outcome {
                        Some(result) => result,
                        None => Err($conn.timed_out(token, limit).await),
                    }
                })
                .await
            }
        }
    }};
}

/// Polls `fut` until it finishes, or until `limit` has passed (`None`).
pub(crate) async fn within<F: Future + ?Sized>(
    limit: Duration,
    fut: Pin<&mut F>,
) -> Option<F::Output> {
    tokio::time::timeout(limit, fut).await.ok()
}

pub(crate) use timed;
