//! [`Acquire`]: what a compiled query's stream and row visitors take — a connection lent for as
//! long as they run, or a pool to take one from.

use std::future::Future;
use std::ops::DerefMut;

use crate::conn::{Connection, Executor};
use crate::error::Error;
use crate::pool::{Pool, PooledConnection};

/// Where [`Query::fetch`](crate::Query::fetch), `for_each`, `for_each_row` and COPY run, each
/// holding its connection until it ends: `&mut` an [`Executor`] (a [`Connection`], a
/// [`Transaction`](crate::Transaction), a [`PooledConnection`]), or `&Pool`, which takes a
/// connection from the pool for the call and gives it back when the call (or the stream)
/// ends. The one-shot methods (`fetch_all`, `fetch_one`, `fetch_optional`, `execute`) take a
/// [`Runner`](crate::Runner) instead.
///
/// ```no_run
/// # async fn run(pool: &qail_pg::Pool, q: impl Fn() -> qail_pg::Query<'static, qail_pg::NoRows>)
/// # -> Result<(), qail_pg::Error> {
/// let mut conn = pool.acquire().await?;
/// q().for_each(&mut conn, |_, _| Ok(())).await?; // on a connection held across calls
/// q().for_each(pool, |_, _| Ok(())).await?;      // acquire, run, release
/// # Ok(()) }
/// ```
///
/// A `&mut Connection` held in a variable is moved into the call; pass `&mut *conn` to use it
/// again afterwards.
pub trait Acquire: Send {
    /// The connection the call runs on: the borrowed one, or one on loan from the pool.
    type Connection: DerefMut<Target = Connection> + Send;

    /// Lends the connection (at once), or takes one from the pool (see [`Pool::acquire`]).
    fn acquire(self) -> impl Future<Output = Result<Self::Connection, Error>> + Send;
}

impl<'c, E: Executor + Send + ?Sized> Acquire for &'c mut E {
    type Connection = &'c mut Connection;

    #[inline]
    fn acquire(self) -> impl Future<Output = Result<&'c mut Connection, Error>> + Send {
        std::future::ready(Ok(self.connection()))
    }
}

impl Acquire for &Pool {
    type Connection = PooledConnection;

    #[inline]
    fn acquire(self) -> impl Future<Output = Result<PooledConnection, Error>> + Send {
        Pool::acquire(self)
    }
}
