//! The web server on qail's `ClientPool`: a few connections, each shared by every request
//! that takes its client; `/queries` and `/updates` send their reads as one per-query
//! pipeline (`Client::pipeline`), written together with the other requests' queries queued
//! on that connection.

#[path = "../drivers/qail_queries.rs"]
mod q;

use qail::ClientPool;
use qail_bench_web::{Db, Error, Fortune, World, renumber};

struct QailClients {
    clients: ClientPool,
}

impl Db for QailClients {
    async fn world(&self, id: i32) -> Result<World, Error> {
        let mut client = self.clients.client().await?;
        Ok(q::world(&id).fetch_one(&mut client).await?)
    }

    async fn worlds(&self, ids: &[i32]) -> Result<Vec<World>, Error> {
        let client = self.clients.client().await?;
        q::one_each(client.pipeline(ids.iter().map(q::world)).await?)
    }

    async fn fortunes(&self) -> Result<Vec<Fortune>, Error> {
        let mut client = self.clients.client().await?;
        Ok(q::fortunes().fetch_all(&mut client).await?)
    }

    async fn update(&self, ids: &[i32], numbers: &[i32]) -> Result<Vec<World>, Error> {
        let mut client = self.clients.client().await?;
        let rows = q::one_each(client.pipeline(ids.iter().map(q::world)).await?)?;
        q::update(&ids, &numbers).execute(&mut client).await?;
        Ok(renumber(rows, numbers))
    }
}

fn main() {
    qail_bench_web::main(|url, connections| async move {
        let clients = ClientPool::connect(&url, connections).await?;
        Ok(QailClients { clients })
    });
}
