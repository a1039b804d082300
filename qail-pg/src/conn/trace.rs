//! `tracing` spans for connecting and for every query (feature `tracing`). Without the
//! feature these functions only await the future they are given.

use std::future::Future;

use crate::error::Error;

/// Runs a connection attempt inside a `qail.connect` span.
pub(crate) async fn connect<T>(fut: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
    #[cfg(feature = "tracing")]
    {
        use tracing::Instrument;
        let span = tracing::debug_span!("qail.connect", duration_us = tracing::field::Empty);
        let start = std::time::Instant::now();
        let result = fut.instrument(span.clone()).await;
        span.record("duration_us", elapsed_us(start));
        if let Err(e) = &result {
            tracing::debug!(parent: &span, error = %e, "connect failed");
        }
        result
    }
    #[cfg(not(feature = "tracing"))]
    fut.await
}

/// Runs a query inside a `qail.query` span that records the statement, the number of rows
/// (`rows` reads it from the result) and the duration.
#[cfg(feature = "tracing")]
pub(crate) async fn query<T>(
    statement: &str,
    fut: impl Future<Output = Result<T, Error>>,
    rows: impl FnOnce(&T) -> u64,
) -> Result<T, Error> {
    use tracing::Instrument;
    let span = tracing::debug_span!(
        "qail.query",
        statement = %statement,
        rows = tracing::field::Empty,
        duration_us = tracing::field::Empty,
    );
    let start = std::time::Instant::now();
    let result = fut.instrument(span.clone()).await;
    span.record("duration_us", elapsed_us(start));
    match &result {
        Ok(value) => {
            span.record("rows", rows(value));
        }
        Err(e) => tracing::debug!(parent: &span, error = %e, "query failed"),
    }
    result
}

/// Without the `tracing` feature: `fut` itself.
///
/// Note: not an `async fn`, which would keep `fut` twice in its state (as its argument and
/// as the future it awaits) and so double the size every query future moves.
#[cfg(not(feature = "tracing"))]
pub(crate) fn query<T, F: Future<Output = Result<T, Error>>>(
    statement: &str,
    fut: F,
    rows: impl FnOnce(&T) -> u64,
) -> F {
    let _ = (statement, rows);
    fut
}

#[cfg(feature = "tracing")]
fn elapsed_us(start: std::time::Instant) -> u64 {
    u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX)
}
