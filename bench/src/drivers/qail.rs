//! qail from this repository (`..`) on its compiled-query path: every statement is a
//! `qail!` invocation, checked at compile time against `bench/qail.schema.json` (the schema
//! of `setup.sh`, written by `cargo qail schema pull`), expanding to a pre-encoded template
//! and a decoder into the workload's row type by column name. The connection sends
//! Parse+Describe the first time and Bind+Execute+Sync afterwards, with no SQL text hashed or
//! looked up per query. Pipelines use `pipeline_builder()`: `.atomic()` (one Sync per batch,
//! as libpq and qail-pg 3.0.2 do) or a Sync per query, rows returned owned.
//!
//! Each statement is built by one function of this module taking its arguments; the
//! arguments are borrowed by the query (`qail!` borrows them), so the workloads keep them
//! alive in a vector or a local until the query has run.

use std::hint::black_box;
use std::time::Instant;

use qail::{Connection, NoRows, Query, qail};

use crate::drivers::{Ctx, qail_sql};
use crate::measure::{Counts, Latencies, Meter, Result, Sample};
use crate::workload::{self as w, HarborLine, HarborLines, JoinRow, Line, WideRow, Workload};

/// The row of the id/name queries.
pub(crate) struct IdName {
    pub(crate) id: i64,
    pub(crate) name: String,
}

// The statements. Their SQL is the workload's (`workload::*_SQL`), written out because
// `qail!` takes a literal; a test checks that the two agree.

pub(crate) fn point_query(id: &i64) -> Query<'_, impl qail::template::Decoder<Row = IdName>> {
    qail!(IdName => "SELECT id, name FROM harbors_small WHERE id = $1", *id)
}

fn pipeline_query(limit: i64) -> Query<'static, impl qail::template::Decoder<Row = IdName>> {
    qail!(IdName => "SELECT id, name FROM harbors_small LIMIT $1", limit)
}

/// The queries of the `b`-th pipelined batch of `batch`.
fn pipeline_batch(
    b: usize,
    batch: usize,
) -> impl Iterator<Item = Query<'static, impl qail::template::Decoder<Row = IdName>>> {
    (0..batch).map(move |k| pipeline_query(w::pipeline_limit(b * batch + k)))
}

fn join_query() -> Query<'static, impl qail::template::Decoder<Row = JoinRow>> {
    qail!(JoinRow => "SELECT c.id, c.name, o.name AS origin, \
     d.name AS destination, op.name AS operator, c.departure_time, c.duration_minutes, c.price \
     FROM odyssey_connections c \
     LEFT JOIN harbors o ON o.id = c.origin_harbor_id \
     LEFT JOIN harbors d ON d.id = c.destination_harbor_id \
     LEFT JOIN operators op ON op.id = c.operator_id \
     WHERE c.is_enabled ORDER BY c.name LIMIT 50")
}

fn wide_query(after: &i64) -> Query<'_, impl qail::template::Decoder<Row = WideRow>> {
    qail!(WideRow => "SELECT id, i4, i8, f8, b, t, ts, u, n, j FROM bench_wide \
     WHERE id > $1 ORDER BY id LIMIT 1000", *after)
}

fn params16_query(ids: &[i32; 16]) -> Query<'_, impl qail::template::Decoder<Row = IdName>> {
    let [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p] = ids;
    qail!(IdName => "SELECT id, name FROM harbors_small WHERE id IN \
     ($1::int4, $2::int4, $3::int4, $4::int4, $5::int4, $6::int4, $7::int4, $8::int4, \
     $9::int4, $10::int4, $11::int4, $12::int4, $13::int4, $14::int4, $15::int4, $16::int4)",
     *a, *b, *c, *d, *e, *f, *g, *h, *i, *j, *k, *l, *m, *n, *o, *p)
}

fn insert_query(r: &w::InsertRow) -> Query<'_, NoRows> {
    qail!(
        "INSERT INTO bench_insert (id, name, qty, price) VALUES ($1, $2, $3, $4)",
        r.id,
        r.name,
        r.qty,
        r.price
    )
}

/// The search: each filter is an optional clause, sent when its field is `Some`; the
/// statement of each combination is built on its first use and looked up by bitmask after.
fn search_query(f: &w::SearchForm) -> Query<'_, impl qail::template::Decoder<Row = IdName>> {
    let w::SearchForm {
        region,
        max_price,
        from_day,
        status,
    } = f;
    let (region, max_price, from_day, status) = (*region, *max_price, *from_day, *status);
    qail!(IdName => "SELECT id, name FROM bench_search WHERE true
        {? AND region = {region} }
        {? AND price <= {max_price} }
        {? AND day >= {from_day} }
        {? AND status = {status} }
        ORDER BY id LIMIT 20")
}

/// Runs one workload through compiled queries on one connection (the pool workloads are
/// [`pools::own`](super::pools::own)'s).
pub(crate) async fn run(workload: Workload, ctx: &Ctx) -> Result<Sample> {
    let s = &ctx.sizes;
    let mut c = Connection::connect(&ctx.url).await?;
    if matches!(workload, Workload::Insert | Workload::Copy) {
        c.batch_execute(w::TRUNCATE_SQL).await?;
    }
    if matches!(workload, Workload::BulkUnnest | Workload::BulkCopy) {
        c.batch_execute(w::BULK_TRUNCATE_SQL).await?;
    }
    let bulk = w::bulk_rows(workload, s.bulk_rows);
    let batches = w::insert_batches(workload, s.insert_batches);
    let texts: Vec<Vec<u8>> = batches.iter().map(|b| w::copy_text(b)).collect();
    let mut digest = None;
    let mut m = Meter::start()?;
    let lat = &mut m.latencies;
    let counts = match workload {
        Workload::Point => point(&mut c, s.point, lat).await?,
        Workload::PipelineAtomic => pipeline(&mut c, s.pipeline, s.pipeline_batch, true).await?,
        Workload::Pipeline => pipeline(&mut c, s.pipeline, s.pipeline_batch, false).await?,
        Workload::PipelineInPlace => {
            pipeline_in_place(&mut c, s.pipeline, s.pipeline_batch).await?
        }
        Workload::Join => join(&mut c, s.join, lat).await?,
        Workload::Wide => wide(&mut c, s.wide, lat).await?,
        Workload::Params16 => params16(&mut c, s.params16, lat).await?,
        Workload::Insert => insert(&mut c, &batches).await?,
        // COPY has no compiled form: the same call as the run-time path.
        Workload::Copy => qail_sql::copy(&mut c, &texts).await?,
        Workload::Search => search(&mut c, s.search, lat).await?,
        Workload::BulkUnnest => {
            let rows = &bulk;
            let n = qail!("INSERT INTO bench_bulk (id, name, qty, note) VALUES {rows.*}")
                .execute(&mut c)
                .await?;
            Counts {
                queries: 1,
                rows: n,
            }
        }
        Workload::BulkCopy => {
            let rows = &bulk;
            let n = qail!("COPY bench_bulk (id, name, qty, note) FROM {rows.*}")
                .execute(&mut c)
                .await?;
            Counts {
                queries: 1,
                rows: n,
            }
        }
        Workload::Nested => nested(&mut c, s.nested, lat, &mut digest).await?,
        Workload::NestedJoin => nested_join(&mut c, s.nested, lat, &mut digest).await?,
        Workload::NestedN1 => nested_n1(&mut c, s.nested, lat, &mut digest).await?,
        Workload::Pool10 | Workload::Pool4 | Workload::Tasks1000 | Workload::Tasks1000Shared => {
            return Err(format!("{workload} is handled above").into());
        }
    };
    let mut sample = m.finish(counts)?;
    sample.digest = digest;
    if !bulk.is_empty() {
        let stored = qail!("SELECT count(*) AS n FROM bench_bulk")
            .fetch_one(&mut c)
            .await?;
        w::check_bulk(stored.n, bulk.len())?;
    }
    c.close().await;
    Ok(sample)
}

async fn point(c: &mut Connection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let t = Instant::now();
        let id = w::point_id(i);
        let row = point_query(&id).fetch_one(&mut *c).await?;
        black_box((row.id, row.name));
        lat.record(t);
        counts.add(1, 1);
    }
    Ok(counts)
}

/// Batches of `batch` queries, with one Sync per batch (`atomic`) or per query; rows owned.
async fn pipeline(c: &mut Connection, n: usize, batch: usize, atomic: bool) -> Result<Counts> {
    let mut counts = Counts::default();
    for b in 0..n.div_ceil(batch) {
        let queries = pipeline_batch(b, batch);
        let results = if atomic {
            c.pipeline_builder()
                .atomic()
                .queries(queries)
                .rows()
                .await?
        } else {
            let results = c.pipeline_builder().queries(queries).rows().await?;
            results.into_iter().collect::<std::result::Result<_, _>>()?
        };
        for rows in results {
            counts.add(1, w::consume(rows));
        }
    }
    Ok(counts)
}

/// The atomic batches of `pipeline`, each row read in place: the id decoded, the name
/// borrowed from the received bytes and copied into one stack buffer, as libpq's program does.
async fn pipeline_in_place(c: &mut Connection, n: usize, batch: usize) -> Result<Counts> {
    let mut counts = Counts::default();
    let mut name = [0u8; 64];
    let mut sink = 0u64;
    for b in 0..n.div_ceil(batch) {
        let queries = pipeline_batch(b, batch);
        let rows = c
            .pipeline_builder()
            .atomic()
            .queries(queries)
            .for_each(|_, row, columns| {
                let id: i64 = row.get_next(columns)?;
                let text: &str = row.get_next(columns)?;
                let len = text.len().min(name.len() - 1);
                name[..len].copy_from_slice(&text.as_bytes()[..len]);
                name[len] = 0;
                sink = sink
                    .wrapping_add(id.unsigned_abs())
                    .wrapping_add(u64::from(name[0]));
                Ok(())
            })
            .await?;
        for n in rows {
            counts.add(1, n);
        }
    }
    black_box(sink);
    Ok(counts)
}

async fn search(c: &mut Connection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let form = w::search_form(i);
        let t = Instant::now();
        let rows = search_query(&form).fetch_all(&mut *c).await?;
        lat.record(t);
        counts.add(1, w::consume(rows));
    }
    Ok(counts)
}

async fn join(c: &mut Connection, n: usize, lat: &mut Latencies) -> Result<Counts> {
    let mut counts = Counts::default();
    for _ in 0..n {
        let t = Instant::now();
        let rows = join_query().fetch_all(&mut *c).await?;
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
        let rows = wide_query(&after).fetch_all(&mut *c).await?;
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
        let rows = params16_query(&ids).fetch_all(&mut *c).await?;
        lat.record(t);
        counts.add(1, w::consume(rows));
    }
    Ok(counts)
}

/// One atomic batch of point lookups on a pooled connection; returns (queries, rows).
pub(crate) async fn point_batch(c: &mut Connection, ids: &[i64]) -> Result<(u64, u64)> {
    let queries: Vec<_> = ids.iter().map(point_query).collect();
    let results = c
        .pipeline_builder()
        .atomic()
        .queries(queries)
        .rows()
        .await?;
    let queries = results.len() as u64;
    let rows = results.into_iter().map(w::consume).sum();
    Ok((queries, rows))
}

async fn insert(c: &mut Connection, batches: &[Vec<w::InsertRow>]) -> Result<Counts> {
    let mut counts = Counts::default();
    for batch in batches {
        let queries: Vec<_> = batch.iter().map(insert_query).collect();
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

/// The nested query; a macro, not a function, because the row structs `qail!` generates for
/// it (a harbor with a `Vec` of lines) have no name to write in a return type.
macro_rules! nested_query {
    ($offset:expr) => {
        qail!(
            "SELECT h.id, h.name, \
     array_agg(ROW(c.id, c.name, c.departure_time, c.duration_minutes, c.price) \
     ORDER BY c.name) AS lines \
     FROM (SELECT id, name FROM harbors ORDER BY id LIMIT 50 OFFSET $1) h \
     JOIN odyssey_connections c ON c.origin_harbor_id = h.id \
     GROUP BY h.id, h.name ORDER BY h.id",
            $offset
        )
    };
}

fn nested_join_query(offset: &i64) -> Query<'_, impl qail::template::Decoder<Row = HarborLine>> {
    qail!(HarborLine => "SELECT h.id AS harbor_id, h.name AS harbor_name, \
     c.id, c.name, c.departure_time, c.duration_minutes, c.price \
     FROM (SELECT id, name FROM harbors ORDER BY id LIMIT 50 OFFSET $1) h \
     JOIN odyssey_connections c ON c.origin_harbor_id = h.id \
     ORDER BY h.id, c.name", *offset)
}

/// The harbors of the N+1 strategy, without their lines.
struct Harbor {
    id: qail::uuid::Uuid,
    name: String,
}

fn nested_parents_query(offset: &i64) -> Query<'_, impl qail::template::Decoder<Row = Harbor>> {
    qail!(Harbor => "SELECT id, name FROM harbors ORDER BY id LIMIT 50 OFFSET $1", *offset)
}

fn nested_lines_query(
    harbor: &qail::uuid::Uuid,
) -> Query<'_, impl qail::template::Decoder<Row = Line>> {
    qail!(Line => "SELECT id, name, departure_time, duration_minutes, \
     price FROM odyssey_connections WHERE origin_harbor_id = $1 ORDER BY name", *harbor)
}

/// One query per load: each harbor's lines come as an array of records, decoded into the
/// structs `qail!` generates for them.
async fn nested(
    c: &mut Connection,
    n: usize,
    lat: &mut Latencies,
    digest: &mut Option<u64>,
) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let offset = w::nested_offset(i);
        let t = Instant::now();
        let harbors = nested_query!(offset).fetch_all(&mut *c).await?;
        lat.record(t);
        let lines: usize = harbors.iter().map(|h| h.lines.len()).sum();
        if i == 0 {
            let mut d = w::Digest::default();
            for h in &harbors {
                d.harbor(&h.id, &h.name);
                for l in &h.lines {
                    d.line(
                        &l.id,
                        &l.name,
                        l.departure_time,
                        l.duration_minutes,
                        l.price.as_ref(),
                    );
                }
            }
            *digest = Some(d.finish());
        }
        black_box(harbors);
        counts.add(1, lines as u64);
    }
    Ok(counts)
}

/// One JOIN per load (a row per line), grouped into harbors in Rust.
async fn nested_join(
    c: &mut Connection,
    n: usize,
    lat: &mut Latencies,
    digest: &mut Option<u64>,
) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let offset = w::nested_offset(i);
        let t = Instant::now();
        let rows = nested_join_query(&offset).fetch_all(&mut *c).await?;
        let harbors = w::group_lines(rows);
        lat.record(t);
        w::finish_load(i, harbors, &mut counts, digest);
    }
    Ok(counts)
}

/// The harbors, then one query per harbor for its lines (51 round trips per load).
async fn nested_n1(
    c: &mut Connection,
    n: usize,
    lat: &mut Latencies,
    digest: &mut Option<u64>,
) -> Result<Counts> {
    let mut counts = Counts::default();
    for i in 0..n {
        let offset = w::nested_offset(i);
        let t = Instant::now();
        let parents = nested_parents_query(&offset).fetch_all(&mut *c).await?;
        let mut harbors = Vec::with_capacity(parents.len());
        for p in parents {
            let lines = nested_lines_query(&p.id).fetch_all(&mut *c).await?;
            harbors.push(HarborLines {
                id: p.id,
                name: p.name,
                lines,
            });
        }
        lat.record(t);
        w::finish_load(i, harbors, &mut counts, digest);
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statements_are_the_workloads() {
        let row = w::insert_batch(0).swap_remove(0);
        let sql = [
            (point_query(&1).template().sql(), w::POINT_SQL),
            (pipeline_query(1).template().sql(), w::PIPELINE_SQL),
            (join_query().template().sql(), w::JOIN_SQL),
            (wide_query(&1).template().sql(), w::WIDE_SQL),
            (params16_query(&[1; 16]).template().sql(), w::PARAMS16_SQL),
            (insert_query(&row).template().sql(), w::INSERT_SQL),
            (nested_query!(0i64).template().sql(), w::NESTED_SQL),
            (nested_join_query(&0).template().sql(), w::NESTED_JOIN_SQL),
            (
                nested_parents_query(&0).template().sql(),
                w::NESTED_PARENTS_SQL,
            ),
            (
                nested_lines_query(&qail::uuid::Uuid::nil())
                    .template()
                    .sql(),
                w::NESTED_LINES_SQL,
            ),
        ];
        for (compiled, workload) in sql {
            assert_eq!(compiled, workload);
        }
    }
}
