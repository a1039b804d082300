//! sqlx 0.8: run-time `query_as` (prepared and cached per connection, binary format) on a
//! `PgConnection`, `PgPool` for the pool. sqlx has no pipelining, so the pipelined
//! workloads run their queries one after another: that is what a sqlx user gets.

use std::hint::black_box;
use std::str::FromStr;
use std::time::Instant;

use chrono::{DateTime, NaiveTime, Utc};
use futures_util::future::try_join_all;
use rust_decimal::Decimal;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, Executor, PgConnection, Postgres, QueryBuilder};
use uuid::Uuid;

use crate::drivers::Ctx;
use crate::measure::{Counts, Latencies, Meter, Result, Sample};
use crate::workload::{self as w, JoinRow, WideRow, Workload};

fn options(url: &str) -> Result<PgConnectOptions> {
    // Statement logging off: a tuned application does the same.
    Ok(PgConnectOptions::from_str(url)?.disable_statement_logging())
}

async fn connect(url: &str) -> Result<PgConnection> {
    Ok(options(url)?.connect().await?)
}

/// Runs one workload with sqlx.
pub(crate) async fn run(workload: Workload, ctx: &Ctx) -> Result<Sample> {
    let s = &ctx.sizes;
    if workload == Workload::Pool10 {
        return pool10(&ctx.url, s.pool).await;
    }
    let mut c = connect(&ctx.url).await?;
    if matches!(workload, Workload::Insert | Workload::Copy) {
        c.execute(w::TRUNCATE_SQL).await?;
    }
    if matches!(workload, Workload::BulkUnnest | Workload::BulkCopy) {
        c.execute(w::BULK_TRUNCATE_SQL).await?;
    }
    let bulk = w::bulk_rows(workload, s.bulk_rows);
    let batches = w::insert_batches(workload, s.insert_batches);
    let texts: Vec<Vec<u8>> = batches.iter().map(|b| w::copy_text(b)).collect();
    let mut m = Meter::start()?;
    let lat = &mut m.latencies;
    let counts = match workload {
        Workload::Point => point(&mut c, s.point, lat).await?,
        Workload::Pipeline | Workload::PipelineAtomic => pipeline(&mut c, s.pipeline).await?,
        Workload::Join => join(&mut c, s.join, lat).await?,
        Workload::Wide => wide(&mut c, s.wide, lat).await?,
        Workload::Params16 => params16(&mut c, s.params16, lat).await?,
        Workload::Insert => insert(&mut c, &batches).await?,
        Workload::Copy => copy(&mut c, &texts).await?,
        Workload::Search => search(&mut c, s.search, lat).await?,
        Workload::BulkUnnest => bulk_unnest(&mut c, &bulk).await?,
        Workload::BulkCopy
        | Workload::Pool10
        | Workload::Nested
        | Workload::NestedJoin
        | Workload::NestedN1
        | Workload::PipelineInPlace
        | Workload::Pool4
        | Workload::Tasks1000
        | Workload::Tasks1000Shared => {
            return Err(format!("{workload} is not run by sqlx here").into());
        }
    };
    let sample = m.finish(counts)?;
    if !bulk.is_empty() {
        let (n,): (i64,) = sqlx::query_as(w::BULK_COUNT_SQL).fetch_one(&mut c).await?;
        w::check_bulk(n, bulk.len())?;
    }
    Ok(sample)
}

/// The search through sqlx's `QueryBuilder`: each present filter pushes its SQL and binds
/// its value; sqlx prepares each distinct SQL once and caches it.
async fn search(c: &mut PgConnection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let f = w::search_form(i);
        let t = Instant::now();
        let mut qb = QueryBuilder::<Postgres>::new(w::SEARCH_HEAD);
        if let Some(v) = f.region {
            qb.push(" AND region = ").push_bind(v);
        }
        if let Some(v) = f.max_price {
            qb.push(" AND price <= ").push_bind(v);
        }
        if let Some(v) = f.from_day {
            qb.push(" AND day >= ").push_bind(v);
        }
        if let Some(v) = f.status {
            qb.push(" AND status = ").push_bind(v);
        }
        qb.push(w::SEARCH_TAIL);
        let rows: Vec<(i64, String)> = qb.build_query_as().fetch_all(&mut *c).await?;
        lat.record(t);
        counts.add(1, w::consume(rows));
    }
    Ok(counts)
}

/// The bulk rows as one array per column (built inside the measurement: it is the
/// caller's work with this driver), inserted by `UNNEST`.
async fn bulk_unnest(c: &mut PgConnection, rows: &[w::BulkRow]) -> Result<Counts> {
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    let qtys: Vec<i32> = rows.iter().map(|r| r.qty).collect();
    let notes: Vec<Option<&str>> = rows.iter().map(|r| r.note.as_deref()).collect();
    let done = sqlx::query(w::BULK_UNNEST_SQL)
        .bind(&ids)
        .bind(&names)
        .bind(&qtys)
        .bind(&notes)
        .execute(&mut *c)
        .await?;
    Ok(Counts {
        queries: 1,
        rows: done.rows_affected(),
    })
}

async fn point(c: &mut PgConnection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let t = Instant::now();
        let row: (i64, String) = sqlx::query_as(w::POINT_SQL)
            .bind(w::point_id(i))
            .fetch_one(&mut *c)
            .await?;
        black_box(row);
        lat.record(t);
        counts.add(1, 1);
    }
    Ok(counts)
}

async fn pipeline(c: &mut PgConnection, n: usize) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let rows: Vec<(i64, String)> = sqlx::query_as(w::PIPELINE_SQL)
            .bind(w::pipeline_limit(i))
            .fetch_all(&mut *c)
            .await?;
        counts.add(1, w::consume(rows));
    }
    Ok(counts)
}

type JoinTuple = (
    Uuid,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<NaiveTime>,
    Option<i32>,
    Option<Decimal>,
);

async fn join(c: &mut PgConnection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for _ in 0..n {
        let t = Instant::now();
        let rows: Vec<JoinTuple> = sqlx::query_as(w::JOIN_SQL).fetch_all(&mut *c).await?;
        let decoded: Vec<JoinRow> = rows
            .into_iter()
            .map(|r| JoinRow {
                id: r.0,
                name: r.1,
                origin: r.2,
                destination: r.3,
                operator: r.4,
                departure_time: r.5,
                duration_minutes: r.6,
                price: r.7,
            })
            .collect();
        lat.record(t);
        counts.add(1, w::consume(decoded));
    }
    Ok(counts)
}

type WideTuple = (
    i64,
    i32,
    i64,
    f64,
    bool,
    String,
    DateTime<Utc>,
    Uuid,
    Option<Decimal>,
    serde_json::Value,
);

async fn wide(c: &mut PgConnection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let t = Instant::now();
        let rows: Vec<WideTuple> = sqlx::query_as(w::WIDE_SQL)
            .bind(w::wide_after(i))
            .fetch_all(&mut *c)
            .await?;
        let decoded: Vec<WideRow> = rows
            .into_iter()
            .map(|r| WideRow {
                id: r.0,
                i4: r.1,
                i8: r.2,
                f8: r.3,
                b: r.4,
                t: r.5,
                ts: r.6,
                u: r.7,
                n: r.8,
                j: r.9,
            })
            .collect();
        lat.record(t);
        counts.add(1, w::consume(decoded));
    }
    Ok(counts)
}

async fn params16(c: &mut PgConnection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let ids = w::params16(i);
        let t = Instant::now();
        let mut q = sqlx::query_as::<_, (i64, String)>(w::PARAMS16_SQL);
        for id in ids {
            q = q.bind(id);
        }
        let rows = q.fetch_all(&mut *c).await?;
        lat.record(t);
        counts.add(1, w::consume(rows));
    }
    Ok(counts)
}

async fn pool10(url: &str, n: usize) -> Result<Sample> {
    let tasks = u32::try_from(w::POOL_TASKS)?;
    let pool = PgPoolOptions::new()
        .max_connections(tasks)
        .min_connections(tasks)
        .connect_with(options(url)?)
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
                for i in first..first + w::POOL_BATCH {
                    let row: (i64, String) = sqlx::query_as(w::POINT_SQL)
                        .bind(w::point_id(i))
                        .fetch_one(&mut *c)
                        .await?;
                    black_box(row);
                    counts.add(1, 1);
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

async fn insert(c: &mut PgConnection, batches: &[Vec<w::InsertRow>]) -> Result<Counts> {
    let mut counts = Counts::default();
    for batch in batches {
        for r in batch {
            let done = sqlx::query(w::INSERT_SQL)
                .bind(r.id)
                .bind(&r.name)
                .bind(r.qty)
                .bind(r.price)
                .execute(&mut *c)
                .await?;
            counts.add(1, done.rows_affected());
        }
    }
    Ok(counts)
}

async fn copy(c: &mut PgConnection, texts: &[Vec<u8>]) -> Result<Counts> {
    let mut counts = Counts::default();
    for text in texts {
        let mut copy = c.copy_in_raw(w::COPY_SQL).await?;
        copy.send(text.as_slice()).await?;
        counts.add(1, copy.finish().await?);
    }
    Ok(counts)
}
