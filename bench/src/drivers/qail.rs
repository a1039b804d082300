//! qail-pg from this repository (`../qail-pg`) on its compiled-query path: what `qail!`
//! emits. Each statement is a [`Template`] (pre-encoded Parse message and Bind prefix, the
//! expected result columns) and each row type decodes itself by index ([`FromRow`]); the
//! connection sends Parse+Describe the first time and Bind+Execute+Sync afterwards, with no
//! SQL text hashed or looked up per query. Pipelines use `Connection::pipeline_atomic` (one
//! Sync per batch, as libpq and qail-pg 3.0.2 do here).
//!
//! The templates are built here by hand, with the same public constructors the macro
//! output uses, until `qail!` can be pointed at the benchmark schema from this crate.
//! TODO(templates): replace them with `qail!` invocations and a committed snapshot.

use std::hint::black_box;
use std::sync::LazyLock;
use std::time::Instant;

use futures_util::future::try_join_all;
use qail_pg::template::ExpectedColumn;
use qail_pg::{Connection, Error, FromRow, NoRows, Oid, Pool, Query, RawRow, Template};

use crate::drivers::{Ctx, MEMORY_INSERTS, MEMORY_SELECTS, qail_sql};
use crate::measure::{Counts, Latencies, Meter, Result, Sample};
use crate::workload::{self as w, JoinRow, WideRow, Workload};

const BOOL: Oid = 16;
const INT8: Oid = 20;
const INT4: Oid = 23;
const TEXT: Oid = 25;
const FLOAT8: Oid = 701;
const TIME: Oid = 1083;
const TIMESTAMPTZ: Oid = 1184;
const NUMERIC: Oid = 1700;
const UUID: Oid = 2950;
const JSONB: Oid = 3802;

const fn col(name: &'static str, type_oid: Oid, type_name: &'static str) -> ExpectedColumn {
    ExpectedColumn {
        name,
        type_oid,
        type_name,
    }
}

/// Builds a template the way `qail!` does, once per process.
fn template(
    sql: &'static str,
    param_oids: &'static [Oid],
    columns: &'static [ExpectedColumn],
) -> &'static Template {
    let columns: Vec<(&str, Oid, &str)> = columns
        .iter()
        .map(|c| (c.name, c.type_oid, c.type_name))
        .collect();
    Template::leak(sql, param_oids, &columns).expect("the benchmark SQL has no NUL byte")
}

const ID_NAME: &[ExpectedColumn] = &[col("id", INT8, "int8"), col("name", TEXT, "text")];

static POINT: LazyLock<&Template> = LazyLock::new(|| template(w::POINT_SQL, &[INT8], ID_NAME));
static PIPELINE: LazyLock<&Template> =
    LazyLock::new(|| template(w::PIPELINE_SQL, &[INT8], ID_NAME));
static PARAMS16: LazyLock<&Template> =
    LazyLock::new(|| template(w::PARAMS16_SQL, &[INT4; 16], ID_NAME));
static INSERT: LazyLock<&Template> =
    LazyLock::new(|| template(w::INSERT_SQL, &[INT8, TEXT, INT4, FLOAT8], &[]));
const JOIN_COLUMNS: &[ExpectedColumn] = &[
    col("id", UUID, "uuid"),
    col("name", TEXT, "text"),
    col("origin", TEXT, "text"),
    col("destination", TEXT, "text"),
    col("operator", TEXT, "text"),
    col("departure_time", TIME, "time"),
    col("duration_minutes", INT4, "int4"),
    col("price", NUMERIC, "numeric"),
];
static JOIN: LazyLock<&Template> = LazyLock::new(|| template(w::JOIN_SQL, &[], JOIN_COLUMNS));
const WIDE_COLUMNS: &[ExpectedColumn] = &[
    col("id", INT8, "int8"),
    col("i4", INT4, "int4"),
    col("i8", INT8, "int8"),
    col("f8", FLOAT8, "float8"),
    col("b", BOOL, "bool"),
    col("t", TEXT, "text"),
    col("ts", TIMESTAMPTZ, "timestamptz"),
    col("u", UUID, "uuid"),
    col("n", NUMERIC, "numeric"),
    col("j", JSONB, "jsonb"),
];
static WIDE: LazyLock<&Template> = LazyLock::new(|| template(w::WIDE_SQL, &[INT8], WIDE_COLUMNS));

/// The row of the id/name queries, as `qail!` would generate it.
struct IdName {
    id: i64,
    name: String,
}

impl FromRow for IdName {
    fn from_row(row: &mut RawRow<'_>, columns: &[Oid]) -> std::result::Result<Self, Error> {
        Ok(IdName {
            id: row.get_next(columns)?,
            name: row.get_next(columns)?,
        })
    }
}

impl FromRow for JoinRow {
    fn from_row(r: &mut RawRow<'_>, c: &[Oid]) -> std::result::Result<Self, Error> {
        Ok(JoinRow {
            id: r.get_next(c)?,
            name: r.get_next(c)?,
            origin: r.get_next(c)?,
            destination: r.get_next(c)?,
            operator: r.get_next(c)?,
            departure: r.get_next(c)?,
            duration: r.get_next(c)?,
            price: r.get_next(c)?,
        })
    }
}

impl FromRow for WideRow {
    fn from_row(r: &mut RawRow<'_>, c: &[Oid]) -> std::result::Result<Self, Error> {
        Ok(WideRow {
            id: r.get_next(c)?,
            i4: r.get_next(c)?,
            i8: r.get_next(c)?,
            f8: r.get_next(c)?,
            b: r.get_next(c)?,
            t: r.get_next(c)?,
            ts: r.get_next(c)?,
            u: r.get_next(c)?,
            n: r.get_next(c)?,
            j: r.get_next(c)?,
        })
    }
}

fn query<'a, D>(t: &'static Template, params: qail_pg::template::Params<'a>) -> Query<'a, D> {
    Query::new(t, params)
}

/// Runs one workload through compiled queries.
pub(crate) async fn run(workload: Workload, ctx: &Ctx) -> Result<Option<Sample>> {
    let s = &ctx.sizes;
    if workload == Workload::Pool10 {
        return pool10(&ctx.url, s.pool).await.map(Some);
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
        Workload::Pipeline => pipeline(&mut c, s.pipeline, s.pipeline_batch).await?,
        Workload::Join => join(&mut c, s.join, lat).await?,
        Workload::Wide => wide(&mut c, s.wide, lat).await?,
        Workload::Params16 => params16(&mut c, s.params16, lat).await?,
        Workload::Insert => insert(&mut c, &batches).await?,
        // COPY has no compiled form: the same call as the run-time path.
        Workload::Copy => qail_sql::copy(&mut c, &texts).await?,
        Workload::Pool10 | Workload::Memory => {
            return Err(format!("{workload} is not run in-process").into());
        }
    };
    let sample = m.finish(counts)?;
    c.close().await;
    Ok(Some(sample))
}

async fn point(c: &mut Connection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let t = Instant::now();
        let id = w::point_id(i);
        let row: IdName = query::<IdName>(&POINT, qail_pg::template::Params::new([&id]))
            .fetch_one(c)
            .await?;
        black_box((row.id, row.name));
        lat.record(t);
        counts.add(1, 1);
    }
    Ok(counts)
}

/// One pipelined batch of id/name queries; returns (queries, rows). The rows are visited
/// borrowed (`pipeline_builder().atomic().queries(…).for_each`): the id decoded, the name checked as UTF-8 and
/// copied into a reused buffer, as the C program copies it into a C buffer.
async fn id_name_batch(
    c: &mut Connection,
    t: &'static Template,
    params: &[i64],
) -> Result<(u64, u64)> {
    // Collected first: a lazy iterator's closure in this future trips the Send check of
    // `tokio::spawn` (higher-ranked lifetimes).
    let queries: Vec<Query<'_, IdName>> = params
        .iter()
        .map(|p| query(t, qail_pg::template::Params::new([p as _])))
        .collect();
    let mut name = String::new();
    let mut ids = 0i64;
    let counts = c
        .pipeline_builder()
        .atomic()
        .queries(queries)
        .for_each(|_, row, columns| {
            ids = ids.wrapping_add(row.get_next::<i64>(columns)?);
            name.clear();
            name.push_str(row.get_next::<&str>(columns)?);
            Ok(())
        })
        .await?;
    black_box((ids, &name));
    Ok((counts.len() as u64, counts.iter().sum()))
}

async fn pipeline(c: &mut Connection, n: usize, batch: usize) -> Result<Counts> {
    let mut counts = Counts::default();
    for b in 0..n.div_ceil(batch) {
        let limits: Vec<i64> = (0..batch)
            .map(|k| w::pipeline_limit(b * batch + k))
            .collect();
        let (q, r) = id_name_batch(c, &PIPELINE, &limits).await?;
        counts.add(q, r);
    }
    Ok(counts)
}

async fn join(c: &mut Connection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for _ in 0..n {
        let t = Instant::now();
        let rows: Vec<JoinRow> = query::<JoinRow>(&JOIN, qail_pg::template::Params::new([]))
            .fetch_all(c)
            .await?;
        lat.record(t);
        counts.add(1, w::consume(rows));
    }
    Ok(counts)
}

async fn wide(c: &mut Connection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let t = Instant::now();
        let after = w::wide_after(i);
        let rows: Vec<WideRow> = query::<WideRow>(&WIDE, qail_pg::template::Params::new([&after]))
            .fetch_all(c)
            .await?;
        lat.record(t);
        counts.add(1, w::consume(rows));
    }
    Ok(counts)
}

async fn params16(c: &mut Connection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let ids = w::params16(i);
        let t = Instant::now();
        let params = qail_pg::template::Params::new(ids.each_ref().map(|id| id as _));
        let rows: Vec<IdName> = query::<IdName>(&PARAMS16, params).fetch_all(c).await?;
        lat.record(t);
        counts.add(1, w::consume(rows));
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
                let (q, r) = id_name_batch(&mut c, &POINT, &ids).await?;
                counts.add(q, r);
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
        let queries: Vec<Query<'_, NoRows>> = batch
            .iter()
            .map(|r| {
                query(
                    &INSERT,
                    qail_pg::template::Params::new([
                        &r.id as _,
                        &r.name as _,
                        &r.qty as _,
                        &r.price as _,
                    ]),
                )
            })
            .collect();
        for done in c
            .pipeline_builder()
            .atomic()
            .queries(queries)
            .count()
            .await?
        {
            counts.add(1, done);
        }
    }
    Ok(counts)
}

/// The memory workload's body: 10,000 point SELECTs and 1,000 INSERTs.
pub(crate) async fn memory(url: &str) -> Result<()> {
    let mut c = Connection::connect(url).await?;
    for i in 0..MEMORY_SELECTS {
        let id = w::point_id(i);
        let row: IdName = query::<IdName>(&POINT, qail_pg::template::Params::new([&id]))
            .fetch_one(&mut c)
            .await?;
        black_box((row.id, row.name));
    }
    for r in w::insert_batch(0).iter().cycle().take(MEMORY_INSERTS) {
        query::<NoRows>(
            &INSERT,
            qail_pg::template::Params::new([&r.id, &r.name, &r.qty, &r.price]),
        )
        .execute(&mut c)
        .await?;
    }
    c.close().await;
    Ok(())
}
