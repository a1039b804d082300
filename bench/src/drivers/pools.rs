//! The pool workloads on qail connections, with the pool the only part that differs:
//! qail-pg's own `Pool` (the `qail` driver; `qail-reset-tx` with `PoolReset::Transaction`),
//! deadpool's managed pool (`qail-deadpool`) and bb8 (`qail-bb8`), the last two through a
//! manager written here that opens `qail::Connection`s with the same URL.
//!
//! 10 tasks share a pool of 10 (`pool10`) or 4 (`pool4`); each takes a connection, pipelines
//! 100 point lookups with one Sync (the `qail` driver's compiled query), and gives it back.
//! Every connection is opened before the clock starts. Per batch the run records the wait
//! for a connection (acquire) and the batch's latency (acquire, queries, rows decoded).
//!
//! What each pool does per acquire and release: qail-pg's writes a reset of the session on
//! release (`DISCARD ALL`'s statements but `DEALLOCATE ALL`, one simple query of seven
//! statements, without waiting for its reply; a ROLLBACK first when a transaction was left
//! open; under `qail-reset-tx` only that ROLLBACK, so nothing here) and checks the connection
//! is not closed; `qail-deadpool`'s `recycle` and `qail-bb8`'s `has_broken`
//! only check that the connection is not closed (deadpool-postgres's `RecyclingMethod::Fast`;
//! bb8's `test_on_check_out`, a round trip per acquire, is off, as qail-pg's pool pings only
//! connections idle for a while); `qail-deadpool-clean`'s `recycle` runs the same seven
//! statements and waits for them, one round trip per acquire (deadpool-postgres's
//! `RecyclingMethod::Clean`).

use std::future::Future;
use std::ops::DerefMut;
use std::time::{Duration, Instant};

use futures_util::future::try_join_all;
use qail::{ClientPool, Connection, Pool, PoolReset, PooledConnection};

use crate::drivers::{
    Ctx,
    qail::{point_batch, point_query},
};
use crate::measure::{BoxError, Counts, Meter, Result, Sample};
use crate::workload::{self as w, Workload};

/// A pool of qail connections, as the workload uses it.
trait BenchPool: Clone + Send + Sync + 'static {
    /// A connection on loan; dropping it gives it back.
    type Conn: DerefMut<Target = Connection> + Send + 'static;

    /// Waits for a connection.
    fn get(&self) -> impl Future<Output = Result<Self::Conn>> + Send;
}

impl BenchPool for Pool {
    type Conn = PooledConnection;

    async fn get(&self) -> Result<PooledConnection> {
        Ok(self.acquire().await?)
    }
}

/// Opens qail connections for deadpool and bb8.
#[derive(Debug, Clone)]
struct Manager {
    url: String,
    /// Whether deadpool's `recycle` resets the session (one round trip).
    clean: bool,
}

/// The session reset of `qail-deadpool-clean`: the simple query qail-pg's pool sends on
/// release.
const RESET_SQL: &str = "CLOSE ALL; SET SESSION AUTHORIZATION DEFAULT; RESET ALL; \
     UNLISTEN *; SELECT pg_catalog.pg_advisory_unlock_all(); DISCARD TEMP; DISCARD SEQUENCES";

impl deadpool::managed::Manager for Manager {
    type Type = Connection;
    type Error = qail::Error;

    async fn create(&self) -> std::result::Result<Connection, qail::Error> {
        Connection::connect(&self.url).await
    }

    async fn recycle(
        &self,
        conn: &mut Connection,
        _: &deadpool::managed::Metrics,
    ) -> deadpool::managed::RecycleResult<qail::Error> {
        if conn.is_closed() {
            return Err(deadpool::managed::RecycleError::message(
                "the connection is closed",
            ));
        }
        if self.clean {
            conn.batch_execute(RESET_SQL)
                .await
                .map_err(deadpool::managed::RecycleError::Backend)?;
        }
        Ok(())
    }
}

impl bb8::ManageConnection for Manager {
    type Connection = Connection;
    type Error = qail::Error;

    async fn connect(&self) -> std::result::Result<Connection, qail::Error> {
        Connection::connect(&self.url).await
    }

    async fn is_valid(&self, conn: &mut Connection) -> std::result::Result<(), qail::Error> {
        conn.batch_execute("SELECT 1").await
    }

    fn has_broken(&self, conn: &mut Connection) -> bool {
        conn.is_closed()
    }
}

type Deadpool = deadpool::managed::Pool<Manager>;

impl BenchPool for Deadpool {
    type Conn = deadpool::managed::Object<Manager>;

    async fn get(&self) -> Result<Self::Conn> {
        deadpool::managed::Pool::get(self)
            .await
            .map_err(|e| format!("deadpool: {e}").into())
    }
}

impl BenchPool for bb8::Pool<Manager> {
    type Conn = bb8::PooledConnection<'static, Manager>;

    async fn get(&self) -> Result<Self::Conn> {
        self.get_owned()
            .await
            .map_err(|e| format!("bb8: {e}").into())
    }
}

/// The pool size of `workload`, or an error for a workload that is not a pool workload.
fn pool_size(workload: Workload) -> Result<usize> {
    workload
        .pool_size()
        .ok_or_else(|| format!("{workload} is not a pool workload").into())
}

/// Runs a pool workload on qail-pg's own pool, resetting sessions with `reset`: the `qail`
/// driver (`PoolReset::Session`, the default) and `qail-reset-tx`.
///
/// Each pool has a function of its own, so a driver's binary links only its pool.
pub(crate) async fn own(reset: PoolReset, workload: Workload, ctx: &Ctx) -> Result<Sample> {
    let size = pool_size(workload)?;
    let pool = Pool::builder()
        .reset(reset)
        .max_size(size)
        .min_idle(size)
        .connect(&ctx.url)
        .await?;
    let sample = measure(&pool, size, ctx.sizes.pool).await;
    pool.close().await;
    sample
}

/// Runs a pool workload on deadpool: `qail-deadpool`, or `qail-deadpool-clean` when `clean`.
pub(crate) async fn deadpool(clean: bool, workload: Workload, ctx: &Ctx) -> Result<Sample> {
    let size = pool_size(workload)?;
    let manager = Manager {
        url: ctx.url.clone(),
        clean,
    };
    let pool = Deadpool::builder(manager).max_size(size).build()?;
    measure(&pool, size, ctx.sizes.pool).await
}

/// Runs a pool workload on bb8: `qail-bb8`.
pub(crate) async fn bb8(workload: Workload, ctx: &Ctx) -> Result<Sample> {
    let size = pool_size(workload)?;
    let manager = Manager {
        url: ctx.url.clone(),
        clean: false,
    };
    let pool = bb8::Pool::builder()
        .max_size(u32::try_from(size)?)
        .min_idle(Some(u32::try_from(size)?))
        .test_on_check_out(false)
        .build(manager)
        .await?;
    measure(&pool, size, ctx.sizes.pool).await
}

/// What one task did: counts, and per batch the acquire wait and the whole batch's time.
type TaskResult = (Counts, Vec<Duration>, Vec<Duration>);

/// Opens all `size` connections, then runs `n` point lookups from 10 tasks, measured.
async fn measure<P: BenchPool>(pool: &P, size: usize, n: usize) -> Result<Sample> {
    let warm = try_join_all((0..size).map(|_| pool.get())).await?;
    drop(warm);
    let batches_per_task = n.div_ceil(w::POOL_TASKS * w::POOL_BATCH);
    let mut m = Meter::start()?;
    let tasks = (0..w::POOL_TASKS).map(|task| {
        let pool = pool.clone();
        tokio::spawn(async move {
            let mut counts = Counts::default();
            let mut acquire = Vec::with_capacity(batches_per_task);
            let mut batch = Vec::with_capacity(batches_per_task);
            for b in 0..batches_per_task {
                let first = (task * batches_per_task + b) * w::POOL_BATCH;
                let ids: Vec<i64> = (first..first + w::POOL_BATCH).map(w::point_id).collect();
                let t = Instant::now();
                let mut c = pool.get().await?;
                acquire.push(t.elapsed());
                let (q, r) = point_batch(&mut c, &ids).await?;
                drop(c);
                batch.push(t.elapsed());
                counts.add(q, r);
            }
            Ok::<TaskResult, BoxError>((counts, acquire, batch))
        })
    });
    let mut total = Counts::default();
    for done in try_join_all(tasks).await? {
        let (c, acquire, batch) = done?;
        total.add(c.queries, c.rows);
        m.acquire.extend(acquire);
        m.latencies.extend(batch);
    }
    m.finish(total)
}

/// Where the 1,000-task workloads run one point lookup.
trait Lookup: Clone + Send + Sync + 'static {
    /// Runs the point lookup of `id` and returns the rows it read.
    fn lookup(&self, id: i64) -> impl Future<Output = Result<u64>> + Send;
}

impl Lookup for Pool {
    async fn lookup(&self, id: i64) -> Result<u64> {
        let mut c = self.acquire().await?;
        let row = point_query(&id).fetch_one(&mut c).await?;
        std::hint::black_box(row);
        Ok(1)
    }
}

impl Lookup for std::sync::Arc<ClientPool> {
    async fn lookup(&self, id: i64) -> Result<u64> {
        let mut client = self.client().await?;
        let row = point_query(&id).fetch_one(&mut client).await?;
        std::hint::black_box(row);
        Ok(1)
    }
}

/// `tasks1000` and `tasks1000_shared`: 1,000 tasks at once on 10 connections, each task
/// running its share of the point lookups one after another (`fetch_one`): through a pool of
/// 10 connections each lent to one query at a time (acquire, query, release), or through a
/// `ClientPool` of 10 shared clients (each query takes the next client in turn and is
/// written together with whatever the other tasks queued on it). Per-query latency includes
/// the wait for a connection.
pub(crate) async fn many_tasks(workload: Workload, ctx: &Ctx) -> Result<Sample> {
    let size = w::POOL_TASKS;
    let n = ctx.sizes.pool;
    match workload {
        Workload::Tasks1000 => {
            let pool = Pool::builder()
                .max_size(size)
                .min_idle(size)
                .connect(&ctx.url)
                .await?;
            let warm = try_join_all((0..size).map(|_| pool.acquire())).await?;
            drop(warm);
            let sample = run_many(&pool, n).await;
            pool.close().await;
            sample
        }
        Workload::Tasks1000Shared => {
            let clients = std::sync::Arc::new(ClientPool::connect(&ctx.url, size).await?);
            let sample = run_many(&clients, n).await;
            clients.close();
            sample
        }
        _ => Err(format!("{workload} is not a 1,000-task workload").into()),
    }
}

/// Runs `n` point lookups from [`w::MANY_TASKS`] tasks at once, measured.
async fn run_many<L: Lookup>(on: &L, n: usize) -> Result<Sample> {
    // Note: every connection prepares the statement before the clock starts.
    try_join_all((0..w::POOL_TASKS * 4).map(|i| on.lookup(w::point_id(i)))).await?;
    let per_task = n.div_ceil(w::MANY_TASKS);
    let mut m = Meter::start()?;
    let tasks = (0..w::MANY_TASKS).map(|task| {
        let on = on.clone();
        tokio::spawn(async move {
            let mut counts = Counts::default();
            let mut latencies = Vec::with_capacity(per_task);
            for i in 0..per_task {
                let t = Instant::now();
                let rows = on.lookup(w::point_id(task * per_task + i)).await?;
                latencies.push(t.elapsed());
                counts.add(1, rows);
            }
            Ok::<_, BoxError>((counts, latencies))
        })
    });
    let mut total = Counts::default();
    for done in try_join_all(tasks).await? {
        let (c, latencies) = done?;
        total.add(c.queries, c.rows);
        m.latencies.extend(latencies);
    }
    m.finish(total)
}
