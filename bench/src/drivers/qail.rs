//! qail-pg from this repository (`../qail-pg`): run-time `query` (prepared once per
//! connection, binary parameters and results) and `Row::try_get` by index.
//!
//! One function per workload. A workload whose API does not exist yet returns `None` from
//! [`run`] and shows as "TODO" in the report:
//! - TODO(pipeline): `pipeline`, `insert` (pipelined INSERTs) and the batches of `pool10`
//!   wait for `Connection::pipeline`.
//! - TODO(pool): `pool10` waits for `Pool`.
//! - TODO(copy): `copy` waits for COPY FROM STDIN.
//! - TODO(templates): once `qail!` templates exist, the sequential workloads should also be
//!   measured through them (Bind+Execute+Sync only, by-index typed rows).

use std::hint::black_box;
use std::time::Instant;

use qail_pg::{Connection, Encode, Row};

use crate::drivers::{Ctx, MEMORY_INSERTS, MEMORY_SELECTS};
use crate::measure::{Counts, Latencies, Meter, Result, Sample};
use crate::workload::{self as w, JoinRow, WideRow, Workload};

/// Runs one workload with qail; `None` when the driver cannot run it yet.
pub(crate) async fn run(workload: Workload, ctx: &Ctx) -> Result<Option<Sample>> {
    let s = &ctx.sizes;
    if matches!(
        workload,
        Workload::Pipeline | Workload::Pool10 | Workload::Insert | Workload::Copy
    ) {
        return Ok(None);
    }
    let mut c = Connection::connect(&ctx.url).await?;
    let mut m = Meter::start()?;
    let lat = &mut m.latencies;
    let counts = match workload {
        Workload::Point => point(&mut c, s.point, lat).await?,
        Workload::Join => join(&mut c, s.join, lat).await?,
        Workload::Wide => wide(&mut c, s.wide, lat).await?,
        Workload::Params16 => params16(&mut c, s.params16, lat).await?,
        Workload::Pipeline
        | Workload::Pool10
        | Workload::Insert
        | Workload::Copy
        | Workload::Memory => {
            return Err(format!("{workload} is not run in-process").into());
        }
    };
    let sample = m.finish(counts)?;
    c.close().await;
    Ok(Some(sample))
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
                    departure: r.try_get(5)?,
                    duration: r.try_get(6)?,
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

/// The memory workload's body: 10,000 point SELECTs and 1,000 INSERTs.
pub(crate) async fn memory(url: &str) -> Result<()> {
    let mut c = Connection::connect(url).await?;
    for i in 0..MEMORY_SELECTS {
        let rows = c.query(w::POINT_SQL, &[&w::point_id(i)]).await?;
        black_box(id_name(rows.first().ok_or("point lookup found no row")?)?);
    }
    for r in w::insert_batch(0).iter().cycle().take(MEMORY_INSERTS) {
        c.execute(w::INSERT_SQL, &[&r.id, &r.name, &r.qty, &r.price])
            .await?;
    }
    c.close().await;
    Ok(())
}
