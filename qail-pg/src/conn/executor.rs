//! [`Executor`]: what compiled queries and pipelines run on; [`Runner`]: what the one-shot
//! methods of a compiled query (`fetch_all`, `fetch_one`, `fetch_optional`, `execute`) run
//! on — an executor, or a shared [`Client`].

use super::Connection;
use super::client::Client;

/// Something a query can run on: a [`Connection`], a [`Transaction`](super::Transaction),
/// or a pooled connection — a connection held by one caller.
///
/// ```no_run
/// # async fn run(conn: &mut qail_pg::Connection, q: qail_pg::Query<'_, qail_pg::NoRows>)
/// # -> Result<(), qail_pg::Error> {
/// let mut tx = conn.begin().await?;
/// q.execute(&mut tx).await?;
/// tx.commit().await?;
/// # Ok(()) }
/// ```
pub trait Executor {
    /// The connection the query runs on.
    fn connection(&mut self) -> &mut Connection;
}

impl Executor for Connection {
    fn connection(&mut self) -> &mut Connection {
        self
    }
}

impl<E: Executor + ?Sized> Executor for &mut E {
    fn connection(&mut self) -> &mut Connection {
        (**self).connection()
    }
}

/// Where a compiled query's `fetch_all`, `fetch_one`, `fetch_optional` and `execute` run:
/// `&mut` any [`Executor`] (a connection to itself, a transaction, a pooled connection), or
/// `&`[`Client`], a connection shared with other tasks.
///
/// Implemented by qail-pg only. Streams (`fetch`), `for_each`, COPY and transactions need a
/// connection to themselves and take an [`Executor`].
///
/// ```no_run
/// # async fn run(conn: &mut qail_pg::Connection, client: &qail_pg::Client,
/// #     q: impl Fn() -> qail_pg::Query<'static, qail_pg::NoRows>) -> Result<(), qail_pg::Error> {
/// q().execute(&mut *conn).await?; // a connection of its own
/// q().execute(client).await?;     // shared with other tasks
/// # Ok(()) }
/// ```
pub trait Runner<'r>: Sized {
    /// Where the query goes; not part of the stable API.
    #[doc(hidden)]
    fn into_target(self) -> RunTarget<'r>;
}

/// Where a [`Runner`] sends a query; not part of the stable API.
#[doc(hidden)]
#[derive(Debug)]
pub enum RunTarget<'r> {
    /// A connection held by the caller.
    Connection(&'r mut Connection),
    /// A connection shared with other tasks.
    Client(&'r Client),
}

impl<'r, E: Executor + ?Sized> Runner<'r> for &'r mut E {
    fn into_target(self) -> RunTarget<'r> {
        RunTarget::Connection(self.connection())
    }
}

impl<'r> Runner<'r> for &'r Client {
    fn into_target(self) -> RunTarget<'r> {
        RunTarget::Client(self)
    }
}
