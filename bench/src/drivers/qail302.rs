//! qail-pg 3.0.2 from crates.io, the original Qail driver, through its raw-SQL API:
//! `query_cached_with_result_format` (prepared, cached, binary results) for sequential
//! queries, `prepare` + `pipeline_execute_prepared_*` for pipelines (text results),
//! `copy_in_raw`, and its `PgPool`. Parameters are text, as that driver sends them; rows come
//! back as raw bytes and are decoded with its own `FromPg` into the same typed rows.

use std::hint::black_box;
use std::str::FromStr;
use std::time::Instant;

use chrono::{DateTime, NaiveTime, Utc};
use futures_util::future::try_join_all;
use qail_core_302::ast::{Operator, Qail, SortOrder, Value};
use qail_pg_302::types::{FromPg, Json, Numeric, Time};
use qail_pg_302::{PgConnection, PgDriver, PgEncoder, PgPool, PoolConfig, ResultFormat};
use rust_decimal::Decimal;

use crate::drivers::Ctx;
use crate::measure::{Counts, Latencies, Meter, Result, Sample};
use crate::workload::{self as w, JoinRow, WideRow, Workload};

const BOOL: u32 = 16;
const INT8: u32 = 20;
const INT4: u32 = 23;
const TEXT: u32 = 25;
const FLOAT8: u32 = 701;
const TIME: u32 = 1083;
const TIMESTAMPTZ: u32 = 1184;
const NUMERIC: u32 = 1700;
const UUID: u32 = 2950;
const JSONB: u32 = 3802;

const BINARY: i16 = PgEncoder::FORMAT_BINARY;
const TEXT_FORMAT: i16 = PgEncoder::FORMAT_TEXT;

type RawRow = Vec<Option<Vec<u8>>>;

/// Where to connect, taken apart for this driver's `connect(host, port, user, db)`.
struct Target {
    host: String,
    port: u16,
    user: String,
    dbname: String,
    password: Option<String>,
}

fn target(url: &str) -> Result<Target> {
    let cfg = qail_pg::Config::parse(url)?;
    let host = match cfg.hosts.first() {
        Some(qail_pg::Host::Tcp(h)) => h.clone(),
        _ => {
            return Err("qail-pg 3.0.2 runs over TCP here: put a host name in DATABASE_URL".into());
        }
    };
    Ok(Target {
        host,
        port: cfg.ports.first().copied().unwrap_or(5432),
        user: cfg.user,
        dbname: cfg.dbname,
        password: cfg.password,
    })
}

async fn connect(url: &str) -> Result<PgConnection> {
    let t = target(url)?;
    Ok(PgConnection::connect_with_password(
        &t.host,
        t.port,
        &t.user,
        &t.dbname,
        t.password.as_deref(),
    )
    .await?)
}

fn get<T: FromPg>(row: &RawRow, i: usize, oid: u32, format: i16) -> Result<T> {
    let raw = row
        .get(i)
        .and_then(Option::as_deref)
        .ok_or("unexpected NULL")?;
    T::from_pg(raw, oid, format).map_err(|e| e.to_string().into())
}

fn opt<T: FromPg>(row: &RawRow, i: usize, oid: u32, format: i16) -> Result<Option<T>> {
    match row.get(i).and_then(Option::as_deref) {
        Some(raw) => T::from_pg(raw, oid, format)
            .map(Some)
            .map_err(|e| e.to_string().into()),
        None => Ok(None),
    }
}

fn id_name(row: &RawRow, format: i16) -> Result<(i64, String)> {
    Ok((get(row, 0, INT8, format)?, get(row, 1, TEXT, format)?))
}

fn decimal(n: Option<Numeric>) -> Result<Option<Decimal>> {
    Ok(n.map(|n| Decimal::from_str(n.as_str())).transpose()?)
}

fn text_param(v: impl ToString) -> Option<Vec<u8>> {
    Some(v.to_string().into_bytes())
}

/// Runs one workload with qail-pg 3.0.2; `None` for the per-query pipeline, which it lacks
/// (its pipelines end with one Sync).
pub(crate) async fn run(workload: Workload, ctx: &Ctx) -> Result<Option<Sample>> {
    let s = &ctx.sizes;
    match workload {
        Workload::Pool10 => return pool10(&ctx.url, s.pool).await.map(Some),
        Workload::Pipeline
        | Workload::BulkUnnest
        | Workload::BulkCopy
        | Workload::Nested
        | Workload::NestedJoin
        | Workload::NestedN1
        | Workload::PipelineInPlace
        | Workload::Pool4
        | Workload::Tasks1000
        | Workload::Tasks1000Shared => return Ok(None),
        Workload::Search => return search(&ctx.url, s.search).await.map(Some),
        _ => {}
    }
    let mut c = connect(&ctx.url).await?;
    if matches!(workload, Workload::Insert | Workload::Copy) {
        c.execute_simple(w::TRUNCATE_SQL).await?;
    }
    let batches = w::insert_batches(workload, s.insert_batches);
    let texts: Vec<Vec<u8>> = batches.iter().map(|b| w::copy_text(b)).collect();
    let mut m = Meter::start()?;
    let lat = &mut m.latencies;
    let counts = match workload {
        Workload::Point => point(&mut c, s.point, lat).await?,
        Workload::PipelineAtomic => pipeline(&mut c, s.pipeline, s.pipeline_batch).await?,
        Workload::Join => join(&mut c, s.join, lat).await?,
        Workload::Wide => wide(&mut c, s.wide, lat).await?,
        Workload::Params16 => params16(&mut c, s.params16, lat).await?,
        Workload::Insert => insert(&mut c, &batches).await?,
        Workload::Copy => copy(&mut c, &texts).await?,
        Workload::Pool10
        | Workload::Pipeline
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
            return Err(format!("{workload} is handled above").into());
        }
    };
    m.finish(counts).map(Some)
}

/// The search through qail-pg 3.0.2's own builder: `Qail::get(table)` with a `filter` per
/// present field, run by `PgDriver::fetch_all_cached_with_format` (the statement of each
/// distinct SQL prepared once, binary results). The date goes as a string value.
async fn search(url: &str, n: usize) -> Result<Sample> {
    let mut d = PgDriver::new(connect(url).await?);
    let mut m = Meter::start()?;
    let mut counts = Counts::default();
    for i in 0..n {
        let f = w::search_form(i);
        let t = Instant::now();
        let mut q = Qail::get("bench_search").columns(["id", "name"]);
        if let Some(v) = f.region {
            q = q.filter("region", Operator::Eq, v);
        }
        if let Some(v) = f.max_price {
            q = q.filter("price", Operator::Lte, v);
        }
        if let Some(v) = f.from_day {
            q = q.filter("day", Operator::Gte, Value::String(v.to_string()));
        }
        if let Some(v) = f.status {
            q = q.filter("status", Operator::Eq, v);
        }
        let q = q.order_by("id", SortOrder::Asc).limit(20);
        let rows = d
            .fetch_all_cached_with_format(&q, ResultFormat::Binary)
            .await?;
        let rows = rows
            .iter()
            .map(|r| id_name(&r.columns, BINARY))
            .collect::<Result<Vec<_>>>()?;
        m.latencies.record(t);
        counts.add(1, w::consume(rows));
    }
    m.finish(counts)
}

async fn point(c: &mut PgConnection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let t = Instant::now();
        let params = [text_param(w::point_id(i))];
        let rows = c
            .query_cached_with_result_format(w::POINT_SQL, &params, BINARY)
            .await?;
        let row = rows.first().ok_or("point lookup found no row")?;
        black_box(id_name(row, BINARY)?);
        lat.record(t);
        counts.add(1, 1);
    }
    Ok(counts)
}

async fn pipeline(c: &mut PgConnection, n: usize, batch: usize) -> Result<Counts> {
    let stmt = c.prepare(w::PIPELINE_SQL).await?;
    let mut counts = Counts::default();
    for b in 0..n.div_ceil(batch) {
        let params: Vec<RawRow> = (0..batch)
            .map(|k| vec![text_param(w::pipeline_limit(b * batch + k))])
            .collect();
        let replies = c.pipeline_execute_prepared_rows(&stmt, &params).await?;
        for rows in &replies {
            let decoded = rows
                .iter()
                .map(|r| id_name(r, TEXT_FORMAT))
                .collect::<Result<Vec<_>>>()?;
            counts.add(1, w::consume(decoded));
        }
    }
    Ok(counts)
}

fn join_row(r: &RawRow) -> Result<JoinRow> {
    Ok(JoinRow {
        id: get(r, 0, UUID, BINARY)?,
        name: get(r, 1, TEXT, BINARY)?,
        origin: opt(r, 2, TEXT, BINARY)?,
        destination: opt(r, 3, TEXT, BINARY)?,
        operator: opt(r, 4, TEXT, BINARY)?,
        departure_time: opt::<Time>(r, 5, TIME, BINARY)?
            .map(|t| {
                let usec = u64::try_from(t.usec)?;
                let secs = u32::try_from(usec / 1_000_000)?;
                let nanos = u32::try_from(usec % 1_000_000)? * 1000;
                NaiveTime::from_num_seconds_from_midnight_opt(secs, nanos)
                    .ok_or_else(|| "time out of range".into())
            })
            .transpose()
            .map_err(|e: crate::measure::BoxError| e)?,
        duration_minutes: opt(r, 6, INT4, BINARY)?,
        price: decimal(opt(r, 7, NUMERIC, BINARY)?)?,
    })
}

async fn join(c: &mut PgConnection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for _ in 0..n {
        let t = Instant::now();
        let rows = c
            .query_cached_with_result_format(w::JOIN_SQL, &[], BINARY)
            .await?;
        let decoded = rows.iter().map(join_row).collect::<Result<Vec<_>>>()?;
        lat.record(t);
        counts.add(1, w::consume(decoded));
    }
    Ok(counts)
}

fn wide_row(r: &RawRow) -> Result<WideRow> {
    let json: Json = get(r, 9, JSONB, BINARY)?;
    Ok(WideRow {
        id: get(r, 0, INT8, BINARY)?,
        i4: get(r, 1, INT4, BINARY)?,
        i8: get(r, 2, INT8, BINARY)?,
        f8: get(r, 3, FLOAT8, BINARY)?,
        b: get(r, 4, BOOL, BINARY)?,
        t: get(r, 5, TEXT, BINARY)?,
        ts: get::<DateTime<Utc>>(r, 6, TIMESTAMPTZ, BINARY)?,
        u: get(r, 7, UUID, BINARY)?,
        n: decimal(opt(r, 8, NUMERIC, BINARY)?)?,
        j: serde_json::from_str(&json.0)?,
    })
}

async fn wide(c: &mut PgConnection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let t = Instant::now();
        let params = [text_param(w::wide_after(i))];
        let rows = c
            .query_cached_with_result_format(w::WIDE_SQL, &params, BINARY)
            .await?;
        let decoded = rows.iter().map(wide_row).collect::<Result<Vec<_>>>()?;
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
        let params: Vec<Option<Vec<u8>>> = ids.iter().map(text_param).collect();
        let rows = c
            .query_cached_with_result_format(w::PARAMS16_SQL, &params, BINARY)
            .await?;
        let decoded = rows
            .iter()
            .map(|r| id_name(r, BINARY))
            .collect::<Result<Vec<_>>>()?;
        lat.record(t);
        counts.add(1, w::consume(decoded));
    }
    Ok(counts)
}

async fn pool10(url: &str, n: usize) -> Result<Sample> {
    let t = target(url)?;
    let mut cfg = PoolConfig::new_dev(&t.host, t.port, &t.user, &t.dbname);
    cfg.password = t.password;
    cfg.max_connections = w::POOL_TASKS;
    cfg.min_connections = w::POOL_TASKS;
    let pool = PgPool::connect(cfg).await?;
    let warm = try_join_all((0..w::POOL_TASKS).map(|_| pool.acquire_raw())).await?;
    for c in warm {
        c.release().await;
    }
    let batches_per_task = n.div_ceil(w::POOL_TASKS * w::POOL_BATCH);
    let m = Meter::start()?;
    let handles = (0..w::POOL_TASKS).map(|task| {
        let pool = pool.clone();
        tokio::spawn(async move {
            let mut counts = Counts::default();
            for b in 0..batches_per_task {
                // Plain pooled connection: the benchmark tables have no row-level security.
                let mut pooled = pool.acquire_raw().await?;
                let c = pooled.get_mut()?;
                let stmt = c.prepare(w::POINT_SQL).await?;
                let first = (task * batches_per_task + b) * w::POOL_BATCH;
                let params: Vec<RawRow> = (first..first + w::POOL_BATCH)
                    .map(|i| vec![text_param(w::point_id(i))])
                    .collect();
                let replies = c.pipeline_execute_prepared_rows(&stmt, &params).await?;
                for rows in &replies {
                    let decoded = rows
                        .iter()
                        .map(|r| id_name(r, TEXT_FORMAT))
                        .collect::<Result<Vec<_>>>()?;
                    counts.add(1, w::consume(decoded));
                }
                pooled.release().await;
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

fn insert_params(r: &w::InsertRow) -> RawRow {
    vec![
        text_param(r.id),
        Some(r.name.clone().into_bytes()),
        text_param(r.qty),
        text_param(r.price),
    ]
}

async fn insert(c: &mut PgConnection, batches: &[Vec<w::InsertRow>]) -> Result<Counts> {
    let stmt = c.prepare(w::INSERT_SQL).await?;
    let mut counts = Counts::default();
    for batch in batches {
        let params: Vec<RawRow> = batch.iter().map(insert_params).collect();
        let done = c.pipeline_execute_prepared_count(&stmt, &params).await?;
        counts.add(u64::try_from(done)?, batch.len() as u64);
    }
    Ok(counts)
}

async fn copy(c: &mut PgConnection, texts: &[Vec<u8>]) -> Result<Counts> {
    let columns: Vec<String> = ["id", "name", "qty", "price"].map(String::from).to_vec();
    let mut counts = Counts::default();
    for text in texts {
        let n = c.copy_in_raw("bench_insert", &columns, text).await?;
        counts.add(1, n);
    }
    Ok(counts)
}
