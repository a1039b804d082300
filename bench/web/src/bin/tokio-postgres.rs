//! The web server on tokio-postgres as TechEmpower's Rust entries use it: a few clients, each
//! its own connection shared by the requests that take it in turn, statements prepared once
//! per client; `/queries` and `/updates` poll their reads' futures at once, which pipelines
//! them (a Sync per query).

use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::try_join_all;
use qail_bench_web::{Db, Error, Fortune, World, renumber, sql};
use tokio_postgres::{Client, NoTls, Statement};

struct Conn {
    client: Client,
    world: Statement,
    fortunes: Statement,
    update: Statement,
}

struct TokioPostgres {
    conns: Vec<Conn>,
    next: AtomicUsize,
}

impl TokioPostgres {
    fn conn(&self) -> &Conn {
        &self.conns[self.next.fetch_add(1, Ordering::Relaxed) % self.conns.len()]
    }
}

fn world(row: &tokio_postgres::Row) -> World {
    World {
        id: row.get(0),
        randomnumber: row.get(1),
    }
}

async fn worlds(c: &Conn, ids: &[i32]) -> Result<Vec<World>, Error> {
    let rows = try_join_all(
        ids.iter()
            .map(|id| async move { c.client.query_one(&c.world, &[id]).await }),
    )
    .await?;
    Ok(rows.iter().map(world).collect())
}

impl Db for TokioPostgres {
    async fn world(&self, id: i32) -> Result<World, Error> {
        let c = self.conn();
        Ok(world(&c.client.query_one(&c.world, &[&id]).await?))
    }

    async fn worlds(&self, ids: &[i32]) -> Result<Vec<World>, Error> {
        worlds(self.conn(), ids).await
    }

    async fn fortunes(&self) -> Result<Vec<Fortune>, Error> {
        let c = self.conn();
        let rows = c.client.query(&c.fortunes, &[]).await?;
        Ok(rows
            .iter()
            .map(|r| Fortune {
                id: r.get(0),
                message: r.get(1),
            })
            .collect())
    }

    async fn update(&self, ids: &[i32], numbers: &[i32]) -> Result<Vec<World>, Error> {
        let c = self.conn();
        let rows = worlds(c, ids).await?;
        c.client.execute(&c.update, &[&ids, &numbers]).await?;
        Ok(renumber(rows, numbers))
    }
}

fn main() {
    qail_bench_web::main(|url, connections| async move {
        let mut conns = Vec::new();
        for _ in 0..connections.max(1) {
            let (client, connection) = tokio_postgres::connect(&url, NoTls).await?;
            tokio::spawn(connection);
            conns.push(Conn {
                world: client.prepare(sql::WORLD).await?,
                fortunes: client.prepare(sql::FORTUNES).await?,
                update: client.prepare(sql::UPDATE).await?,
                client,
            });
        }
        Ok(TokioPostgres {
            conns,
            next: AtomicUsize::new(0),
        })
    });
}
