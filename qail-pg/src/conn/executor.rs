//! [`Executor`]: what compiled queries and pipelines run on.

use super::Connection;

/// Something a query can run on: a [`Connection`], a [`Transaction`](super::Transaction),
/// or a pooled connection.
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
