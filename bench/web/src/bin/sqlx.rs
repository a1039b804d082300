//! The web server on sqlx's `PgPool`: each request takes a connection for itself; statements
//! are prepared and cached per connection by sqlx. sqlx has no pipelining: `/queries` and
//! `/updates` run their reads one after another on the request's connection. The pool does
//! not ping a connection on each acquire (`test_before_acquire(false)`: a round trip per
//! request otherwise), as qail's server does not reset the session on each release.

use qail_bench_web::{Db, Error, Fortune, World, renumber, sql};
use sqlx::PgPool;
use sqlx::postgres::{PgConnection, PgPoolOptions};

struct Sqlx {
    pool: PgPool,
}

async fn world(conn: &mut PgConnection, id: i32) -> Result<World, Error> {
    let (id, randomnumber) = sqlx::query_as::<_, (i32, i32)>(sql::WORLD)
        .bind(id)
        .fetch_one(conn)
        .await?;
    Ok(World { id, randomnumber })
}

async fn worlds(conn: &mut PgConnection, ids: &[i32]) -> Result<Vec<World>, Error> {
    let mut rows = Vec::with_capacity(ids.len());
    for id in ids {
        rows.push(world(&mut *conn, *id).await?);
    }
    Ok(rows)
}

impl Db for Sqlx {
    async fn world(&self, id: i32) -> Result<World, Error> {
        world(&mut *self.pool.acquire().await?, id).await
    }

    async fn worlds(&self, ids: &[i32]) -> Result<Vec<World>, Error> {
        worlds(&mut *self.pool.acquire().await?, ids).await
    }

    async fn fortunes(&self) -> Result<Vec<Fortune>, Error> {
        let rows = sqlx::query_as::<_, (i32, String)>(sql::FORTUNES)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows
            .into_iter()
            .map(|(id, message)| Fortune { id, message })
            .collect())
    }

    async fn update(&self, ids: &[i32], numbers: &[i32]) -> Result<Vec<World>, Error> {
        let mut conn = self.pool.acquire().await?;
        let rows = worlds(&mut conn, ids).await?;
        sqlx::query(sql::UPDATE)
            .bind(ids)
            .bind(numbers)
            .execute(&mut *conn)
            .await?;
        Ok(renumber(rows, numbers))
    }
}

fn main() {
    qail_bench_web::main(|url, connections| async move {
        let pool = PgPoolOptions::new()
            .max_connections(u32::try_from(connections)?)
            .min_connections(u32::try_from(connections)?)
            .test_before_acquire(false)
            .connect(&url)
            .await?;
        Ok(Sqlx { pool })
    });
}
