//! [`Executor`]: what compiled queries and pipelines run on; [`Runner`]: what the one-shot
//! methods of a compiled query (`fetch_all`, `fetch_one`, `fetch_optional`, `execute`) run
//! on — an executor, or a shared [`Client`].

use super::Connection;
use super::client::Client;
use crate::pool::Pool;

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
/// any [`Executor`] (a connection to itself, a transaction, a pooled connection), or a
/// [`Client`], a connection shared with other tasks. Those methods take it as `&mut`, so a
/// `conn: &mut Connection` is reborrowed at each call, as before; a client is cheap to
/// clone, and `&mut` one (or `&mut &client`) is all it takes.
///
/// Implemented by qail-pg only. Streams (`fetch`), `for_each`, COPY and transactions need a
/// connection to themselves and take an [`Executor`], which a [`Client`] is not.
///
/// ```no_run
/// # async fn run(conn: &mut qail_pg::Connection, client: &qail_pg::Client,
/// #     q: impl Fn() -> qail_pg::Query<'static, qail_pg::NoRows>) -> Result<(), qail_pg::Error> {
/// q().execute(conn).await?;         // a connection of its own
/// q().execute(&mut client.clone()).await?; // shared with other tasks
/// q().execute(&mut &*client).await?;       // the same, without the clone
/// # Ok(()) }
/// ```
pub trait Runner {
    /// Where the query goes; not part of the stable API.
    #[doc(hidden)]
    fn target(&mut self) -> RunTarget<'_>;
}

/// Where a [`Runner`] sends a query; not part of the stable API.
#[doc(hidden)]
#[derive(Debug)]
pub enum RunTarget<'r> {
    /// A connection held by the caller.
    Connection(&'r mut Connection),
    /// A connection shared with other tasks.
    Client(&'r Client),
    /// A pool, which lends one of its connections for the call.
    Pool(&'r Pool),
}

impl<E: Executor + ?Sized> Runner for E {
    fn target(&mut self) -> RunTarget<'_> {
        RunTarget::Connection(self.connection())
    }
}

impl Runner for Client {
    fn target(&mut self) -> RunTarget<'_> {
        RunTarget::Client(self)
    }
}

impl Runner for &Client {
    fn target(&mut self) -> RunTarget<'_> {
        RunTarget::Client(self)
    }
}

impl Runner for Pool {
    fn target(&mut self) -> RunTarget<'_> {
        RunTarget::Pool(self)
    }
}

impl Runner for &Pool {
    fn target(&mut self) -> RunTarget<'_> {
        RunTarget::Pool(self)
    }
}
