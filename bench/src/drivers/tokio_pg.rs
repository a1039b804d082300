//! tokio-postgres 0.7: prepared statements, binary format; pipelining by polling many query
//! futures at once (its documented way); deadpool-postgres for the pool.

use std::hint::black_box;
use std::time::Instant;

use futures_util::{SinkExt, future::try_join_all};
use std::collections::HashMap;

use tokio_postgres::Statement;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, NoTls, Row};

use crate::drivers::Ctx;
use crate::drivers::nested_records::Lines;
use crate::measure::{Counts, Latencies, Meter, Result, Sample};
use crate::workload::{self as w, HarborLine, HarborLines, JoinRow, Line, WideRow, Workload};

async fn connect(url: &str) -> Result<Client> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(async move {
        // Ends when the client is dropped; an I/O error surfaces in the client's next call.
        let _ = connection.await;
    });
    Ok(client)
}

/// Runs one workload with tokio-postgres.
pub(crate) async fn run(workload: Workload, ctx: &Ctx) -> Result<Sample> {
    let s = &ctx.sizes;
    if workload == Workload::Pool10 {
        return pool10(&ctx.url, s.pool).await;
    }
    let c = connect(&ctx.url).await?;
    if matches!(workload, Workload::Insert | Workload::Copy) {
        c.batch_execute(w::TRUNCATE_SQL).await?;
    }
    if matches!(workload, Workload::BulkUnnest | Workload::BulkCopy) {
        c.batch_execute(w::BULK_TRUNCATE_SQL).await?;
    }
    let bulk = w::bulk_rows(workload, s.bulk_rows);
    // Rows and COPY text are built before the clock starts, the same for every driver.
    let batches = w::insert_batches(workload, s.insert_batches);
    let texts: Vec<Vec<u8>> = batches.iter().map(|b| w::copy_text(b)).collect();
    let mut digest = None;
    let mut m = Meter::start()?;
    let lat = &mut m.latencies;
    let counts = match workload {
        Workload::Point => point(&c, s.point, lat).await?,
        Workload::Pipeline | Workload::PipelineAtomic => {
            pipeline(&c, s.pipeline, s.pipeline_batch).await?
        }
        Workload::Join => join(&c, s.join, lat).await?,
        Workload::Wide => wide(&c, s.wide, lat).await?,
        Workload::Params16 => params16(&c, s.params16, lat).await?,
        Workload::Insert => insert(&c, &batches).await?,
        Workload::Copy => copy(&c, &texts).await?,
        Workload::Search => search(&c, s.search, lat).await?,
        Workload::BulkUnnest => bulk_unnest(&c, &bulk).await?,
        Workload::BulkCopy => bulk_copy(&c, &bulk).await?,
        Workload::Nested => nested(&c, s.nested, lat, &mut digest).await?,
        Workload::NestedJoin => nested_join(&c, s.nested, lat, &mut digest).await?,
        Workload::NestedN1 => nested_n1(&c, s.nested, lat, &mut digest).await?,
        Workload::PipelineInPlace => {
            return Err(format!("{workload} is not run by tokio-postgres here").into());
        }
        Workload::Pool10 | Workload::Pool4 | Workload::Tasks1000 | Workload::Tasks1000Shared => {
            return Err(format!("{workload} is not run in-process").into());
        }
    };
    let mut sample = m.finish(counts)?;
    sample.digest = digest;
    if !bulk.is_empty() {
        check_bulk(&c, bulk.len()).await?;
    }
    Ok(sample)
}

fn id_name(row: &Row) -> Result<(i64, String)> {
    Ok((row.try_get(0)?, row.try_get(1)?))
}

/// The search, its SQL built by hand (tokio-postgres has no query builder) and each
/// combination's statement prepared once and kept, as sqlx's cache does.
async fn search(c: &Client, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut statements: HashMap<String, Statement> = HashMap::new();
    let mut counts = Counts::default();
    for i in 0..n {
        let f = w::search_form(i);
        let t = Instant::now();
        let sql = f.sql();
        let stmt = match statements.get(&sql) {
            Some(stmt) => stmt.clone(),
            None => {
                let stmt = c.prepare(&sql).await?;
                statements.insert(sql, stmt.clone());
                stmt
            }
        };
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(4);
        if let Some(v) = &f.region {
            params.push(v);
        }
        if let Some(v) = &f.max_price {
            params.push(v);
        }
        if let Some(v) = &f.from_day {
            params.push(v);
        }
        if let Some(v) = &f.status {
            params.push(v);
        }
        let rows = c.query(&stmt, &params).await?;
        let rows = rows.iter().map(id_name).collect::<Result<Vec<_>>>()?;
        lat.record(t);
        counts.add(1, w::consume(rows));
    }
    Ok(counts)
}

/// The bulk rows as one array per column (built inside the measurement: it is the
/// caller's work with this driver), inserted by `UNNEST`.
async fn bulk_unnest(c: &Client, rows: &[w::BulkRow]) -> Result<Counts> {
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    let qtys: Vec<i32> = rows.iter().map(|r| r.qty).collect();
    let notes: Vec<Option<&str>> = rows.iter().map(|r| r.note.as_deref()).collect();
    let n = c
        .execute(w::BULK_UNNEST_SQL, &[&ids, &names, &qtys, &notes])
        .await?;
    Ok(Counts {
        queries: 1,
        rows: n,
    })
}

/// The bulk rows through a binary COPY (`BinaryCopyInWriter`).
async fn bulk_copy(c: &Client, rows: &[w::BulkRow]) -> Result<Counts> {
    let sink = c
        .copy_in::<_, bytes::Bytes>(&format!("{} (FORMAT binary)", w::BULK_COPY_SQL))
        .await?;
    let writer = BinaryCopyInWriter::new(sink, &[Type::INT8, Type::TEXT, Type::INT4, Type::TEXT]);
    futures_util::pin_mut!(writer);
    for r in rows {
        writer
            .as_mut()
            .write(&[&r.id, &r.name, &r.qty, &r.note])
            .await?;
    }
    let n = writer.finish().await?;
    Ok(Counts {
        queries: 1,
        rows: n,
    })
}

/// Checks the rows stored (run after the clock stops, from `run`).
async fn check_bulk(c: &Client, expected: usize) -> Result<()> {
    let n: i64 = c.query_one(w::BULK_COUNT_SQL, &[]).await?.try_get(0)?;
    Ok(w::check_bulk(n, expected)?)
}

async fn point(c: &Client, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let stmt = c.prepare(w::POINT_SQL).await?;
    let mut counts = Counts::default();
    for i in 0..n {
        let t = Instant::now();
        let row = c.query_one(&stmt, &[&w::point_id(i)]).await?;
        black_box(id_name(&row)?);
        lat.record(t);
        counts.add(1, 1);
    }
    Ok(counts)
}

async fn pipeline(c: &Client, n: usize, batch: usize) -> Result<Counts> {
    let stmt = c.prepare(w::PIPELINE_SQL).await?;
    let mut counts = Counts::default();
    for b in 0..n.div_ceil(batch) {
        let limits: Vec<i64> = (0..batch)
            .map(|k| w::pipeline_limit(b * batch + k))
            .collect();
        let stmt = &stmt;
        let replies = try_join_all(
            limits
                .iter()
                .map(|l| async move { c.query(stmt, &[l]).await }),
        )
        .await?;
        for rows in replies {
            let decoded = rows.iter().map(id_name).collect::<Result<Vec<_>>>()?;
            counts.add(1, w::consume(decoded));
        }
    }
    Ok(counts)
}

async fn join(c: &Client, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let stmt = c.prepare(w::JOIN_SQL).await?;
    let mut counts = Counts::default();
    for _ in 0..n {
        let t = Instant::now();
        let rows = c.query(&stmt, &[]).await?;
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

async fn wide(c: &Client, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let stmt = c.prepare(w::WIDE_SQL).await?;
    let mut counts = Counts::default();
    for i in 0..n {
        let t = Instant::now();
        let rows = c.query(&stmt, &[&w::wide_after(i)]).await?;
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

async fn params16(c: &Client, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let stmt = c.prepare(w::PARAMS16_SQL).await?;
    let mut counts = Counts::default();
    for i in 0..n {
        let ids = w::params16(i);
        let t = Instant::now();
        let params: Vec<&(dyn ToSql + Sync)> = ids.iter().map(|id| id as _).collect();
        let rows = c.query(&stmt, &params).await?;
        let decoded = rows.iter().map(id_name).collect::<Result<Vec<_>>>()?;
        lat.record(t);
        counts.add(1, w::consume(decoded));
    }
    Ok(counts)
}

async fn pool10(url: &str, n: usize) -> Result<Sample> {
    let mut cfg = deadpool_postgres::Config::new();
    cfg.url = Some(url.to_owned());
    cfg.pool = Some(deadpool_postgres::PoolConfig::new(w::POOL_TASKS));
    let pool = cfg.create_pool(Some(deadpool_postgres::Runtime::Tokio1), NoTls)?;
    // Open all ten connections before the clock starts.
    let warm = try_join_all((0..w::POOL_TASKS).map(|_| pool.get())).await?;
    drop(warm);
    let batches_per_task = n.div_ceil(w::POOL_TASKS * w::POOL_BATCH);
    let m = Meter::start()?;
    let tasks = (0..w::POOL_TASKS).map(|task| {
        let pool = pool.clone();
        tokio::spawn(async move {
            let mut counts = Counts::default();
            for b in 0..batches_per_task {
                let client = pool.get().await?;
                let stmt = client.prepare_cached(w::POINT_SQL).await?;
                let first = (task * batches_per_task + b) * w::POOL_BATCH;
                let ids: Vec<i64> = (first..first + w::POOL_BATCH).map(w::point_id).collect();
                let (client, stmt) = (&client, &stmt);
                let rows = try_join_all(
                    ids.iter()
                        .map(|id| async move { client.query_one(stmt, &[id]).await }),
                )
                .await?;
                let decoded = rows.iter().map(id_name).collect::<Result<Vec<_>>>()?;
                counts.add(w::POOL_BATCH as u64, w::consume(decoded));
            }
            Ok::<Counts, crate::measure::BoxError>(counts)
        })
    });
    let mut total = Counts::default();
    for c in try_join_all(tasks).await? {
        let c = c?;
        total.add(c.queries, c.rows);
    }
    m.finish(total)
}

async fn insert(c: &Client, batches: &[Vec<w::InsertRow>]) -> Result<Counts> {
    let stmt = &c.prepare(w::INSERT_SQL).await?;
    let mut counts = Counts::default();
    for batch in batches {
        let done =
            try_join_all(batch.iter().map(|r| async move {
                c.execute(stmt, &[&r.id, &r.name, &r.qty, &r.price]).await
            }))
            .await?;
        counts.add(done.len() as u64, done.iter().sum());
    }
    Ok(counts)
}

async fn copy(c: &Client, texts: &[Vec<u8>]) -> Result<Counts> {
    let mut counts = Counts::default();
    for text in texts {
        let sink = c.copy_in::<_, bytes::Bytes>(w::COPY_SQL).await?;
        futures_util::pin_mut!(sink);
        sink.send(bytes::Bytes::copy_from_slice(text)).await?;
        counts.add(1, sink.finish().await?);
    }
    Ok(counts)
}

/// One query per load, the same as qail's: the array of records decoded by hand
/// ([`Lines`]), tokio-postgres having no decoder for records.
async fn nested(
    c: &Client,
    n: usize,
    lat: &mut Latencies,
    digest: &mut Option<u64>,
) -> Result<Counts> {
    let stmt = c.prepare(w::NESTED_SQL).await?;
    let mut counts = Counts::default();
    for i in 0..n {
        let t = Instant::now();
        let rows = c.query(&stmt, &[&w::nested_offset(i)]).await?;
        let harbors = rows
            .iter()
            .map(|r| {
                Ok(HarborLines {
                    id: r.try_get(0)?,
                    name: r.try_get(1)?,
                    lines: r.try_get::<_, Lines>(2)?.0,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        lat.record(t);
        w::finish_load(i, harbors, &mut counts, digest);
    }
    Ok(counts)
}

/// One JOIN per load, grouped into harbors in Rust.
async fn nested_join(
    c: &Client,
    n: usize,
    lat: &mut Latencies,
    digest: &mut Option<u64>,
) -> Result<Counts> {
    let stmt = c.prepare(w::NESTED_JOIN_SQL).await?;
    let mut counts = Counts::default();
    for i in 0..n {
        let t = Instant::now();
        let rows = c.query(&stmt, &[&w::nested_offset(i)]).await?;
        let decoded = rows
            .iter()
            .map(|r| {
                Ok(HarborLine {
                    harbor_id: r.try_get(0)?,
                    harbor_name: r.try_get(1)?,
                    id: r.try_get(2)?,
                    name: r.try_get(3)?,
                    departure_time: r.try_get(4)?,
                    duration_minutes: r.try_get(5)?,
                    price: r.try_get(6)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let harbors = w::group_lines(decoded);
        lat.record(t);
        w::finish_load(i, harbors, &mut counts, digest);
    }
    Ok(counts)
}

/// The harbors, then one query per harbor for its lines.
async fn nested_n1(
    c: &Client,
    n: usize,
    lat: &mut Latencies,
    digest: &mut Option<u64>,
) -> Result<Counts> {
    let parents = c.prepare(w::NESTED_PARENTS_SQL).await?;
    let children = c.prepare(w::NESTED_LINES_SQL).await?;
    let mut counts = Counts::default();
    for i in 0..n {
        let t = Instant::now();
        let rows = c.query(&parents, &[&w::nested_offset(i)]).await?;
        let mut harbors = Vec::with_capacity(rows.len());
        for r in &rows {
            let id: uuid::Uuid = r.try_get(0)?;
            let lines = c
                .query(&children, &[&id])
                .await?
                .iter()
                .map(|l| {
                    Ok(Line {
                        id: l.try_get(0)?,
                        name: l.try_get(1)?,
                        departure_time: l.try_get(2)?,
                        duration_minutes: l.try_get(3)?,
                        price: l.try_get(4)?,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            harbors.push(HarborLines {
                id,
                name: r.try_get(1)?,
                lines,
            });
        }
        lat.record(t);
        w::finish_load(i, harbors, &mut counts, digest);
    }
    Ok(counts)
}
