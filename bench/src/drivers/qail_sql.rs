//! qail-pg from this repository (`../qail-pg`), through its run-time SQL API: `query`
//! (prepared once per connection, binary parameters and results), `Row::try_get` by index,
//! `pipeline_builder().sql(…).rows()` (a Sync per query; `.atomic()`: one Sync per batch, as
//! libpq and qail-pg 3.0.2 do), `Pool`, `copy_in`.
//!
//! One function per workload. The compiled-query path is in [`super::qail`].

use std::hint::black_box;
use std::time::Instant;

use futures_util::future::try_join_all;
use qail_pg::{Connection, Encode, Pool, Row};

use crate::drivers::Ctx;
use crate::measure::{Counts, Latencies, Meter, Result, Sample};
use crate::workload::{self as w, JoinRow, WideRow, Workload};

/// Runs one workload with qail's run-time SQL.
pub(crate) async fn run(workload: Workload, ctx: &Ctx) -> Result<Sample> {
    let s = &ctx.sizes;
    if workload == Workload::Pool10 {
        return pool10(&ctx.url, s.pool).await;
    }
    let mut c = Connection::connect(&ctx.url).await?;
    if matches!(workload, Workload::Insert | Workload::Copy) {
        c.batch_execute(w::TRUNCATE_SQL).await?;
    }
    let batches = w::insert_batches(workload, s.insert_batches);
    let texts: Vec<Vec<u8>> = batches.iter().map(|b| w::copy_text(b)).collect();
    let mut m = Meter::start()?;
    let lat = &mut m.latencies;
    let counts = match workload {
        Workload::Point => point(&mut c, s.point, lat).await?,
        Workload::Pipeline => pipeline(&mut c, s.pipeline, s.pipeline_batch, false).await?,
        Workload::PipelineAtomic => pipeline(&mut c, s.pipeline, s.pipeline_batch, true).await?,
        Workload::Insert => insert(&mut c, &batches).await?,
        Workload::Copy => copy(&mut c, &texts).await?,
        Workload::Join => join(&mut c, s.join, lat).await?,
        Workload::Wide => wide(&mut c, s.wide, lat).await?,
        Workload::Params16 => params16(&mut c, s.params16, lat).await?,
        Workload::Pool10
        | Workload::Search
        | Workload::BulkUnnest
        | Workload::BulkCopy
        | Workload::Nested
        | Workload::NestedJoin
        | Workload::NestedN1
        | Workload::PipelineInPlace
        | Workload::Pool4
        | Workload::Tasks1000
        | Workload::Tasks1000Shared => {
            return Err(format!("{workload} is not run by this driver here").into());
        }
    };
    let sample = m.finish(counts)?;
    c.close().await;
    Ok(sample)
}

fn id_name(row: &Row) -> Result<(i64, String)> {
    Ok((row.try_get(0)?, row.try_get(1)?))
}

async fn point(c: &mut Connection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let t = Instant::now();
        let rows = c.query(w::POINT_SQL, &[&w::point_id(i)]).await?;
        let row = rows.first().ok_or("point lookup found no row")?;
        black_box(id_name(row)?);
        lat.record(t);
        counts.add(1, 1);
    }
    Ok(counts)
}

/// One parameter as a slice item of `PipelineBuilder::sql`.
type Param<'a> = [&'a (dyn Encode + Sync); 1];

/// Batches of `batch` queries, with one Sync per batch (`atomic`) or per query.
async fn pipeline(c: &mut Connection, n: usize, batch: usize, atomic: bool) -> Result<Counts> {
    let mut counts = Counts::default();
    for b in 0..n.div_ceil(batch) {
        let limits: Vec<i64> = (0..batch)
            .map(|k| w::pipeline_limit(b * batch + k))
            .collect();
        let params: Vec<Param<'_>> = limits.iter().map(|l| [l as _]).collect();
        let queries: Vec<_> = params.iter().map(|p| (w::PIPELINE_SQL, &p[..])).collect();
        let results = if atomic {
            c.pipeline_builder().atomic().sql(&queries).rows().await?
        } else {
            let results = c.pipeline_builder().sql(&queries).rows().await?;
            results.into_iter().collect::<std::result::Result<_, _>>()?
        };
        for rows in results {
            let decoded = rows.iter().map(id_name).collect::<Result<Vec<_>>>()?;
            counts.add(1, w::consume(decoded));
        }
    }
    Ok(counts)
}

async fn pool10(url: &str, n: usize) -> Result<Sample> {
    let pool = Pool::builder()
        .max_size(w::POOL_TASKS)
        .min_idle(w::POOL_TASKS)
        .connect(url)
        .await?;
    let warm = try_join_all((0..w::POOL_TASKS).map(|_| pool.acquire())).await?;
    drop(warm);
    let batches_per_task = n.div_ceil(w::POOL_TASKS * w::POOL_BATCH);
    let m = Meter::start()?;
    let handles = (0..w::POOL_TASKS).map(|task| {
        let pool = pool.clone();
        tokio::spawn(async move {
            let mut counts = Counts::default();
            for b in 0..batches_per_task {
                let mut c = pool.acquire().await?;
                let first = (task * batches_per_task + b) * w::POOL_BATCH;
                let ids: Vec<i64> = (first..first + w::POOL_BATCH).map(w::point_id).collect();
                let params: Vec<Param<'_>> = ids.iter().map(|id| [id as _]).collect();
                let queries: Vec<_> = params.iter().map(|p| (w::POINT_SQL, &p[..])).collect();
                for rows in c.pipeline_builder().atomic().sql(&queries).rows().await? {
                    let decoded = rows.iter().map(id_name).collect::<Result<Vec<_>>>()?;
                    counts.add(1, w::consume(decoded));
                }
            }
            Ok::<Counts, crate::measure::BoxError>(counts)
        })
    });
    let mut total = Counts::default();
    for c in try_join_all(handles).await? {
        let c = c?;
        total.add(c.queries, c.rows);
    }
    let sample = m.finish(total);
    pool.close().await;
    sample
}

async fn insert(c: &mut Connection, batches: &[Vec<w::InsertRow>]) -> Result<Counts> {
    let mut counts = Counts::default();
    for batch in batches {
        let params: Vec<[&(dyn Encode + Sync); 4]> = batch
            .iter()
            .map(|r| [&r.id as _, &r.name as _, &r.qty as _, &r.price as _])
            .collect();
        let queries: Vec<_> = params.iter().map(|p| (w::INSERT_SQL, &p[..])).collect();
        for _ in c.pipeline_builder().atomic().sql(&queries).rows().await? {
            counts.add(1, 1);
        }
    }
    Ok(counts)
}

pub(crate) async fn copy(c: &mut Connection, texts: &[Vec<u8>]) -> Result<Counts> {
    let mut counts = Counts::default();
    for text in texts {
        let mut copy = c.copy_in(w::COPY_SQL).await?;
        copy.send(text).await?;
        counts.add(1, copy.finish().await?);
    }
    Ok(counts)
}

async fn join(c: &mut Connection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for _ in 0..n {
        let t = Instant::now();
        let rows = c.query(w::JOIN_SQL, &[]).await?;
        let decoded = rows
            .iter()
            .map(|r| {
                Ok(JoinRow {
                    id: r.try_get(0)?,
                    name: r.try_get(1)?,
                    origin: r.try_get(2)?,
                    destination: r.try_get(3)?,
                    operator: r.try_get(4)?,
                    departure_time: r.try_get(5)?,
                    duration_minutes: r.try_get(6)?,
                    price: r.try_get(7)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        lat.record(t);
        counts.add(1, w::consume(decoded));
    }
    Ok(counts)
}

async fn wide(c: &mut Connection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let t = Instant::now();
        let rows = c.query(w::WIDE_SQL, &[&w::wide_after(i)]).await?;
        let decoded = rows
            .iter()
            .map(|r| {
                Ok(WideRow {
                    id: r.try_get(0)?,
                    i4: r.try_get(1)?,
                    i8: r.try_get(2)?,
                    f8: r.try_get(3)?,
                    b: r.try_get(4)?,
                    t: r.try_get(5)?,
                    ts: r.try_get(6)?,
                    u: r.try_get(7)?,
                    n: r.try_get(8)?,
                    j: r.try_get(9)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        lat.record(t);
        counts.add(1, w::consume(decoded));
    }
    Ok(counts)
}

async fn params16(c: &mut Connection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let ids = w::params16(i);
        let t = Instant::now();
        let params: Vec<&(dyn Encode + Sync)> = ids.iter().map(|id| id as _).collect();
        let rows = c.query(w::PARAMS16_SQL, &params).await?;
        let decoded = rows.iter().map(id_name).collect::<Result<Vec<_>>>()?;
        lat.record(t);
        counts.add(1, w::consume(decoded));
    }
    Ok(counts)
}
