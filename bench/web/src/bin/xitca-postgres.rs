//! The web server on xitca-postgres: a few clients, each its own connection shared by the
//! requests that take it in turn, statements prepared once per client; `/queries` and
//! `/updates` send every read before reading the first reply (a query is written when it is
//! made), which pipelines them.

use std::future::IntoFuture;
use std::sync::atomic::{AtomicUsize, Ordering};

use qail_bench_web::{Db, Error, Fortune, World, renumber, sql};
use xitca_postgres::iter::AsyncLendingIterator;
use xitca_postgres::types::Type;
use xitca_postgres::{Client, Execute, Postgres, Statement};

struct Conn {
    client: Client,
    world: Statement,
    fortunes: Statement,
    update: Statement,
}

struct Xitca {
    conns: Vec<Conn>,
    next: AtomicUsize,
}

impl Xitca {
    fn conn(&self) -> &Conn {
        &self.conns[self.next.fetch_add(1, Ordering::Relaxed) % self.conns.len()]
    }
}

async fn worlds(c: &Conn, ids: &[i32]) -> Result<Vec<World>, Error> {
    let sent: Vec<_> = ids
        .iter()
        .map(|id| c.world.bind([*id]).query(&c.client))
        .collect();
    let mut rows = Vec::with_capacity(ids.len());
    for reply in sent {
        let mut stream = reply.await?;
        let row = stream.try_next().await?.ok_or("no world row")?;
        rows.push(World {
            id: row.get(0),
            randomnumber: row.get(1),
        });
    }
    Ok(rows)
}

impl Db for Xitca {
    async fn world(&self, id: i32) -> Result<World, Error> {
        Ok(worlds(self.conn(), &[id]).await?[0])
    }

    async fn worlds(&self, ids: &[i32]) -> Result<Vec<World>, Error> {
        worlds(self.conn(), ids).await
    }

    async fn fortunes(&self) -> Result<Vec<Fortune>, Error> {
        let c = self.conn();
        let mut stream = c.fortunes.bind_none().query(&c.client).await?;
        let mut rows = Vec::with_capacity(16);
        while let Some(row) = stream.try_next().await? {
            rows.push(Fortune {
                id: row.get(0),
                message: row.get::<&str>(1).to_owned(),
            });
        }
        Ok(rows)
    }

    async fn update(&self, ids: &[i32], numbers: &[i32]) -> Result<Vec<World>, Error> {
        let c = self.conn();
        let rows = worlds(c, ids).await?;
        c.update
            .bind_dyn(&[&ids, &numbers])
            .execute(&c.client)
            .await?;
        Ok(renumber(rows, numbers))
    }
}

fn main() {
    qail_bench_web::main(|url, connections| async move {
        let mut conns = Vec::new();
        for _ in 0..connections.max(1) {
            let (client, driver) = Postgres::new(url.clone()).connect().await?;
            tokio::spawn(driver.into_future());
            let world = Statement::named(sql::WORLD, &[Type::INT4])
                .execute(&client)
                .await?
                .leak();
            let fortunes = Statement::named(sql::FORTUNES, &[])
                .execute(&client)
                .await?
                .leak();
            let update = Statement::named(sql::UPDATE, &[Type::INT4_ARRAY, Type::INT4_ARRAY])
                .execute(&client)
                .await?
                .leak();
            conns.push(Conn {
                client,
                world,
                fortunes,
                update,
            });
        }
        Ok(Xitca {
            conns,
            next: AtomicUsize::new(0),
        })
    });
}
