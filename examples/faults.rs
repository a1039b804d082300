//! Minor page faults and CPU time per query of two benchmark workloads, in a process of its
//! own: `wide` (1,000 rows of int8, int4, int8, float8, bool, text, timestamptz, uuid,
//! numeric and jsonb per query, decoded into owned values) and `pipeline` (atomic pipelines of
//! 1,000 `LIMIT 1..10` lookups whose rows are returned owned; counted per batch). Reads the faults and CPU from
//! `/proc/self/stat` after a warm-up, so connecting and preparing are not counted.
//!
//! Needs the `qail_bench` database of `bench/setup.sh`.
//!
//! Run: `cargo run --release --example faults -- wide 300` (or `pipeline 100`, or
//! `pipeline-sql 100`: the same batches through run-time SQL and `Row`s)

use qail::chrono::{DateTime, Utc};
use qail::rust_decimal::Decimal;
use qail::template::{Arg, Params};
use qail::types::oid;
use qail::uuid::Uuid;
use qail::{Connection, Encode, Error, FromRow, Oid, Query, RawRow, Template};

/// A row of `bench_wide`.
struct Wide {
    id: i64,
    i4: i32,
    i8: i64,
    f8: f64,
    b: bool,
    t: String,
    ts: DateTime<Utc>,
    u: Uuid,
    n: Option<Decimal>,
    j: qail::serde_json::Value,
}

impl FromRow for Wide {
    fn from_row(r: &mut RawRow<'_>, c: &[Oid]) -> Result<Self, Error> {
        Ok(Wide {
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

/// A row of `harbors_small`.
struct IdName {
    id: i64,
    name: String,
}

impl FromRow for IdName {
    fn from_row(r: &mut RawRow<'_>, c: &[Oid]) -> Result<Self, Error> {
        Ok(IdName {
            id: r.get_next(c)?,
            name: r.get_next(c)?,
        })
    }
}

/// Minor faults, user and system CPU (clock ticks) of this process so far.
fn usage() -> (u64, u64, u64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Note: the command name (field 2) may hold spaces; the fields after it follow its ')'.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<u64> = rest
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    // Fields 10 (minflt), 14 (utime), 15 (stime), counted from 1 with field 3 first here.
    let field = |n: usize| fields.get(n - 3).copied().unwrap_or(0);
    (field(10), field(14), field(15))
}

fn wide_template() -> &'static Template {
    let columns = [
        ("id", oid::INT8, "int8"),
        ("i4", oid::INT4, "int4"),
        ("i8", oid::INT8, "int8"),
        ("f8", oid::FLOAT8, "float8"),
        ("b", oid::BOOL, "bool"),
        ("t", oid::TEXT, "text"),
        ("ts", oid::TIMESTAMPTZ, "timestamptz"),
        ("u", oid::UUID, "uuid"),
        ("n", oid::NUMERIC, "numeric"),
        ("j", oid::JSONB, "jsonb"),
    ];
    Template::leak(
        "SELECT id, i4, i8, f8, b, t, ts, u, n, j FROM bench_wide \
         WHERE id > $1 ORDER BY id LIMIT 1000",
        &[oid::INT8],
        &columns,
    )
    .expect("no NUL in the SQL")
}

fn pipeline_template() -> &'static Template {
    Template::leak(
        "SELECT id, name FROM harbors_small LIMIT $1",
        &[oid::INT8],
        &[("id", oid::INT8, "int8"), ("name", oid::TEXT, "text")],
    )
    .expect("no NUL in the SQL")
}

async fn wide(conn: &mut Connection, template: &'static Template, i: usize) -> Result<u64, Error> {
    let after = i64::try_from((i % 49) * 1000).unwrap_or(0);
    let rows: Vec<Wide> = Query::<Wide>::new(template, Params::args([Arg::I64(after)]))
        .fetch_all(conn)
        .await?;
    let mut sum = 0u64;
    for r in &rows {
        let w = (
            r.id,
            r.i4,
            r.i8,
            r.f8,
            r.b,
            r.t.len(),
            r.ts,
            r.u,
            r.n,
            r.j.is_null(),
        );
        sum = sum.wrapping_add(std::hint::black_box(&w).5 as u64);
    }
    Ok(sum)
}

async fn pipeline(
    conn: &mut Connection,
    template: &'static Template,
    b: usize,
) -> Result<u64, Error> {
    // Note: the limit is held by value in each query (`Arg::I64`), as `qail!` does for an
    // `i64` argument, so the batch is built straight from the iterator.
    let queries = (0..1000).map(|k| {
        let limit = i64::try_from((b * 1000 + k) % 10 + 1).unwrap_or(1);
        Query::<IdName>::new(template, Params::args([Arg::I64(limit)]))
    });
    let results = conn
        .pipeline_builder()
        .atomic()
        .queries(queries)
        .rows()
        .await?;
    let mut sum = 0u64;
    for rows in &results {
        for r in rows {
            sum = sum.wrapping_add(r.id.cast_unsigned() + r.name.len() as u64);
        }
    }
    Ok(std::hint::black_box(sum))
}

/// `pipeline` with run-time SQL: `Row`s, decoded afterwards (the bench's `qail-sql` column).
async fn pipeline_sql(conn: &mut Connection, b: usize) -> Result<u64, Error> {
    let limits: Vec<i64> = (0..1000)
        .map(|k| i64::try_from((b * 1000 + k) % 10 + 1).unwrap_or(1))
        .collect();
    let params: Vec<[&(dyn Encode + Sync); 1]> = limits.iter().map(|l| [l as _]).collect();
    let queries: Vec<(&str, &[&(dyn Encode + Sync)])> = params
        .iter()
        .map(|p| ("SELECT id, name FROM harbors_small LIMIT $1", &p[..]))
        .collect();
    let mut sum = 0u64;
    for rows in conn
        .pipeline_builder()
        .atomic()
        .sql(&queries)
        .rows()
        .await?
    {
        let decoded = rows
            .iter()
            .map(|r| Ok((r.try_get::<i64>(0)?, r.try_get::<String>(1)?)))
            .collect::<Result<Vec<_>, Error>>()?;
        for (id, name) in &decoded {
            sum = sum.wrapping_add(id.cast_unsigned() + name.len() as u64);
        }
    }
    Ok(std::hint::black_box(sum))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let workload = args.next().unwrap_or_else(|| "wide".to_owned());
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(300);
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".to_owned());
    let mut conn = Connection::connect(&format!("{url}/qail_bench?sslmode=disable")).await?;
    let (wide_t, pipeline_t) = (wide_template(), pipeline_template());
    let run = async |conn: &mut Connection, i: usize| match workload.as_str() {
        "wide" => wide(conn, wide_t, i).await,
        "pipeline" => pipeline(conn, pipeline_t, i).await,
        "pipeline-sql" => pipeline_sql(conn, i).await,
        other => panic!("unknown workload {other}: wide, pipeline or pipeline-sql"),
    };
    let warm = (n / 10).max(3);
    for i in 0..warm {
        run(&mut conn, i).await?;
    }
    let (faults, user, system) = usage();
    let mut sum = 0u64;
    for i in 0..n {
        sum = sum.wrapping_add(run(&mut conn, i).await?);
    }
    let (faults_after, user_after, system_after) = usage();
    let per = |ticks: u64| ticks as f64 * 1e4 / n as f64; // µs per query at 100 ticks/s
    println!(
        "{workload}: {n} queries (batches for pipeline), {:.1} minor faults each, \
         user {:.0} µs, system {:.0} µs each (checksum {sum})",
        (faults_after - faults) as f64 / n as f64,
        per(user_after - user),
        per(system_after - system),
    );
    Ok(())
}
