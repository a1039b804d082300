//! The web server on qail with its exclusive-connection `Pool`: each request takes a
//! connection for itself; `/queries` and `/updates` send their reads as one pipeline (a Sync
//! per query) on it. The pool resets only a transaction left open on release
//! (`PoolReset::Transaction`: these handlers change no session state), not the whole
//! session, which would cost the server a statement per request; sqlx's server likewise
//! skips its ping per acquire.

#[path = "../drivers/qail_queries.rs"]
mod q;

use qail::{Pool, PoolReset};
use qail_bench_web::{Db, Error, Fortune, World, renumber};

struct QailPool {
    pool: Pool,
}

impl Db for QailPool {
    async fn world(&self, id: i32) -> Result<World, Error> {
        let mut conn = self.pool.acquire().await?;
        Ok(q::world(&id).fetch_one(&mut conn).await?)
    }

    async fn worlds(&self, ids: &[i32]) -> Result<Vec<World>, Error> {
        let mut conn = self.pool.acquire().await?;
        let results = conn
            .pipeline_builder()
            .queries(ids.iter().map(q::world))
            .rows()
            .await?;
        q::one_each(results)
    }

    async fn fortunes(&self) -> Result<Vec<Fortune>, Error> {
        let mut conn = self.pool.acquire().await?;
        Ok(q::fortunes().fetch_all(&mut conn).await?)
    }

    async fn update(&self, ids: &[i32], numbers: &[i32]) -> Result<Vec<World>, Error> {
        let mut conn = self.pool.acquire().await?;
        let results = conn
            .pipeline_builder()
            .queries(ids.iter().map(q::world))
            .rows()
            .await?;
        let rows = q::one_each(results)?;
        q::update(&ids, &numbers).execute(&mut conn).await?;
        Ok(renumber(rows, numbers))
    }
}

fn main() {
    qail_bench_web::main(|url, connections| async move {
        let pool = Pool::builder()
            .max_size(connections)
            .min_idle(connections)
            .reset(PoolReset::Transaction)
            .connect(&url)
            .await?;
        Ok(QailPool { pool })
    });
}
