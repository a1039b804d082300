//! The workloads: their SQL, their sizes and the typed rows every driver decodes into.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};
use rust_decimal::Decimal;
use uuid::Uuid;

use crate::measure::Counts;

/// One benchmark scenario, run by every driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Workload {
    /// Sequential point lookups by primary key.
    Point,
    /// Many small queries pipelined in batches of one Sync (one implicit transaction) each,
    /// rows returned owned.
    PipelineAtomic,
    /// The same batches with a Sync after every query: each query its own cycle.
    Pipeline,
    /// The batches of `PipelineAtomic`, each row's values read where they lie in the
    /// received bytes and copied into one buffer of the caller's, as libpq's program reads
    /// `PQgetvalue`: nothing is allocated per row.
    PipelineInPlace,
    /// The ferry 3×LEFT JOIN, sequential.
    Join,
    /// 1,000 wide rows decoded into typed values, sequential.
    Wide,
    /// A query with 16 int4 parameters, sequential.
    Params16,
    /// 10 tasks on a pool of 10, point lookups pipelined in batches of 100.
    Pool10,
    /// 100-row batches of pipelined INSERTs.
    Insert,
    /// 100-row batches through COPY FROM STDIN.
    Copy,
    /// A search with four optional filters, a different subset per query, sequential.
    Search,
    /// 100,000 rows with a nullable column in one `INSERT … SELECT * FROM UNNEST(arrays)`.
    BulkUnnest,
    /// The same 100,000 rows through one `COPY … FROM STDIN`.
    BulkCopy,
    /// 50 harbors with their lines (10 each) in one query: `array_agg(ROW(…) ORDER BY …)`
    /// per harbor, decoded into nested structs.
    Nested,
    /// The same payload from one JOIN (a row per line), grouped into harbors in Rust.
    NestedJoin,
    /// The same payload N+1: the 50 harbors, then one query per harbor for its lines.
    NestedN1,
    /// `pool10` with 10 tasks on a pool of 4: acquiring waits.
    Pool4,
    /// 1,000 tasks at once, each running point lookups one after another, on a pool of 10
    /// connections each lent to one query at a time.
    Tasks1000,
    /// The same 1,000 tasks on a pool of 10 shared clients (`ClientPool`): each query is
    /// written together with the other tasks' queries on the same connection.
    Tasks1000Shared,
}

impl Workload {
    /// Every workload, in report order.
    pub(crate) const ALL: [Workload; 19] = [
        Workload::Point,
        Workload::PipelineAtomic,
        Workload::Pipeline,
        Workload::PipelineInPlace,
        Workload::Join,
        Workload::Wide,
        Workload::Params16,
        Workload::Pool10,
        Workload::Insert,
        Workload::Copy,
        Workload::Search,
        Workload::BulkUnnest,
        Workload::BulkCopy,
        Workload::Nested,
        Workload::NestedJoin,
        Workload::NestedN1,
        Workload::Pool4,
        Workload::Tasks1000,
        Workload::Tasks1000Shared,
    ];

    /// The name used on the command line and in the report.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Workload::Point => "point",
            Workload::PipelineAtomic => "pipeline_atomic",
            Workload::Pipeline => "pipeline",
            Workload::PipelineInPlace => "pipeline_in_place",
            Workload::Join => "join",
            Workload::Wide => "wide",
            Workload::Params16 => "params16",
            Workload::Pool10 => "pool10",
            Workload::Insert => "insert",
            Workload::Copy => "copy",
            Workload::Search => "search",
            Workload::BulkUnnest => "bulk_unnest",
            Workload::BulkCopy => "bulk_copy",
            Workload::Nested => "nested",
            Workload::NestedJoin => "nested_join",
            Workload::NestedN1 => "nested_n1",
            Workload::Pool4 => "pool4",
            Workload::Tasks1000 => "tasks1000",
            Workload::Tasks1000Shared => "tasks1000_shared",
        }
    }

    /// Whether queries run one after another (in each task, for the 1,000-task workloads),
    /// so per-query latency means something.
    pub(crate) fn is_sequential(self) -> bool {
        matches!(
            self,
            Workload::Point
                | Workload::Tasks1000
                | Workload::Tasks1000Shared
                | Workload::Join
                | Workload::Wide
                | Workload::Params16
                | Workload::Search
                | Workload::Nested
                | Workload::NestedJoin
                | Workload::NestedN1
        )
    }

    /// Whether this is one of the three ways to load the nested payload.
    pub(crate) fn is_nested(self) -> bool {
        matches!(
            self,
            Workload::Nested | Workload::NestedJoin | Workload::NestedN1
        )
    }

    /// The pool size of a pool workload (10 tasks share it), `None` for the others.
    pub(crate) fn pool_size(self) -> Option<usize> {
        match self {
            Workload::Pool10 => Some(POOL_TASKS),
            Workload::Pool4 => Some(4),
            _ => None,
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Workload {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Workload::ALL.iter().map(|w| w.name()).collect();
                format!("unknown workload `{s}`: choose from {}", names.join(", "))
            })
    }
}

/// Sizes of one run of each workload (queries, or batches for insert/copy).
#[derive(Debug, Clone)]
pub(crate) struct Sizes {
    pub(crate) point: usize,
    pub(crate) pipeline: usize,
    pub(crate) pipeline_batch: usize,
    pub(crate) join: usize,
    pub(crate) wide: usize,
    pub(crate) params16: usize,
    pub(crate) pool: usize,
    pub(crate) insert_batches: usize,
    pub(crate) search: usize,
    pub(crate) bulk_rows: usize,
    /// Loads of 50 harbors with their lines, in each nested workload.
    pub(crate) nested: usize,
}

/// Rows per INSERT/COPY batch.
pub(crate) const INSERT_BATCH: usize = 100;
/// Queries per pipelined batch in the pool workload.
pub(crate) const POOL_BATCH: usize = 100;
/// Tasks and connections in the pool workload.
pub(crate) const POOL_TASKS: usize = 10;

/// The tasks of `tasks1000` and `tasks1000_shared`, which share `POOL_TASKS` connections.
pub(crate) const MANY_TASKS: usize = 1_000;

impl Sizes {
    /// The sizes of a quick run: seconds per round on a laptop.
    pub(crate) fn quick() -> Sizes {
        Sizes {
            point: 5_000,
            pipeline: 100_000,
            pipeline_batch: 1_000,
            join: 500,
            wide: 50,
            params16: 5_000,
            pool: 20_000,
            insert_batches: 100,
            search: 5_000,
            bulk_rows: 100_000,
            nested: 200,
        }
    }

    /// The full sizes: 1,000,000 pipelined queries and ten times the quick run elsewhere.
    pub(crate) fn full() -> Sizes {
        Sizes {
            pipeline: 1_000_000,
            ..Sizes::quick().scaled(10.0)
        }
    }

    /// Every count multiplied by `factor` (at least one batch each).
    pub(crate) fn scaled(&self, factor: f64) -> Sizes {
        let s = |n: usize, min: usize| -> usize {
            let scaled = (n as f64 * factor).round();
            if scaled.is_finite() && scaled >= 1.0 {
                format!("{scaled:.0}").parse().unwrap_or(min).max(min)
            } else {
                min
            }
        };
        Sizes {
            point: s(self.point, 1),
            pipeline: s(self.pipeline, self.pipeline_batch),
            pipeline_batch: self.pipeline_batch,
            join: s(self.join, 1),
            wide: s(self.wide, 1),
            params16: s(self.params16, 1),
            pool: s(self.pool, POOL_TASKS * POOL_BATCH),
            insert_batches: s(self.insert_batches, 1),
            search: s(self.search, 1),
            bulk_rows: s(self.bulk_rows, 1),
            nested: s(self.nested, 1),
        }
    }
}

impl Sizes {
    /// The sizes as one command-line value, for a child process: `point=5000,pipeline=…`.
    pub(crate) fn to_arg(&self) -> String {
        self.fields()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Parses what [`Sizes::to_arg`] wrote; every field must be there.
    pub(crate) fn from_arg(arg: &str) -> Result<Sizes, String> {
        let mut sizes = Sizes::quick();
        let mut seen = 0;
        for pair in arg.split(',') {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("malformed size `{pair}`: expected name=number"))?;
            let value: usize = value
                .parse()
                .map_err(|_| format!("size `{key}` is not a number: `{value}`"))?;
            let field = match key {
                "point" => &mut sizes.point,
                "pipeline" => &mut sizes.pipeline,
                "pipeline_batch" => &mut sizes.pipeline_batch,
                "join" => &mut sizes.join,
                "wide" => &mut sizes.wide,
                "params16" => &mut sizes.params16,
                "pool" => &mut sizes.pool,
                "insert_batches" => &mut sizes.insert_batches,
                "search" => &mut sizes.search,
                "bulk_rows" => &mut sizes.bulk_rows,
                "nested" => &mut sizes.nested,
                _ => return Err(format!("unknown size `{key}`")),
            };
            *field = value;
            seen += 1;
        }
        if seen != sizes.fields().len() {
            return Err(format!("sizes `{arg}` lack a field"));
        }
        Ok(sizes)
    }

    fn fields(&self) -> [(&'static str, usize); 11] {
        [
            ("point", self.point),
            ("pipeline", self.pipeline),
            ("pipeline_batch", self.pipeline_batch),
            ("join", self.join),
            ("wide", self.wide),
            ("params16", self.params16),
            ("pool", self.pool),
            ("insert_batches", self.insert_batches),
            ("search", self.search),
            ("bulk_rows", self.bulk_rows),
            ("nested", self.nested),
        ]
    }
}

/// `point`: one row by primary key.
pub(crate) const POINT_SQL: &str = "SELECT id, name FROM harbors_small WHERE id = $1";

/// `pipeline`: 1 to 10 rows per query.
pub(crate) const PIPELINE_SQL: &str = "SELECT id, name FROM harbors_small LIMIT $1";

/// `join`: the ferry query, 3×LEFT JOIN, 8 columns, 50 rows.
pub(crate) const JOIN_SQL: &str = "SELECT c.id, c.name, o.name AS origin, \
     d.name AS destination, op.name AS operator, c.departure_time, c.duration_minutes, c.price \
     FROM odyssey_connections c \
     LEFT JOIN harbors o ON o.id = c.origin_harbor_id \
     LEFT JOIN harbors d ON d.id = c.destination_harbor_id \
     LEFT JOIN operators op ON op.id = c.operator_id \
     WHERE c.is_enabled ORDER BY c.name LIMIT 50";

/// `wide`: 1,000 rows of every common type, starting after `$1`.
pub(crate) const WIDE_SQL: &str = "SELECT id, i4, i8, f8, b, t, ts, u, n, j FROM bench_wide \
     WHERE id > $1 ORDER BY id LIMIT 1000";

/// `params16`: 16 int4 parameters, 16 rows back.
pub(crate) const PARAMS16_SQL: &str = "SELECT id, name FROM harbors_small WHERE id IN \
     ($1::int4, $2::int4, $3::int4, $4::int4, $5::int4, $6::int4, $7::int4, $8::int4, \
     $9::int4, $10::int4, $11::int4, $12::int4, $13::int4, $14::int4, $15::int4, $16::int4)";

/// `insert`: one row.
pub(crate) const INSERT_SQL: &str =
    "INSERT INTO bench_insert (id, name, qty, price) VALUES ($1, $2, $3, $4)";

/// `copy`: the COPY statement (text format).
pub(crate) const COPY_SQL: &str = "COPY bench_insert (id, name, qty, price) FROM STDIN";

/// Emptied before each insert/copy run, outside the measurement.
pub(crate) const TRUNCATE_SQL: &str = "TRUNCATE bench_insert";

/// The id looked up by the `i`-th point query: 1..=10,000.
pub(crate) fn point_id(i: usize) -> i64 {
    i64::try_from(i % 10_000).unwrap_or(0) + 1
}

/// The LIMIT of the `i`-th pipelined query: 1..=10.
pub(crate) fn pipeline_limit(i: usize) -> i64 {
    i64::try_from(i % 10).unwrap_or(0) + 1
}

/// The lower bound of the `i`-th wide query: a multiple of 1,000 below 49,000.
pub(crate) fn wide_after(i: usize) -> i64 {
    i64::try_from((i % 49) * 1000).unwrap_or(0)
}

/// The 16 distinct ids of the `i`-th params16 query.
pub(crate) fn params16(i: usize) -> [i32; 16] {
    let base = i32::try_from(i % 9_000).unwrap_or(0) + 1;
    std::array::from_fn(|k| base + i32::try_from(k * 37).unwrap_or(0))
}

/// One row of the insert workloads.
#[derive(Debug, Clone)]
pub(crate) struct InsertRow {
    pub(crate) id: i64,
    pub(crate) name: String,
    pub(crate) qty: i32,
    pub(crate) price: f64,
}

/// The rows of batch `b`.
pub(crate) fn insert_batch(b: usize) -> Vec<InsertRow> {
    (0..INSERT_BATCH)
        .map(|k| {
            let n = b * INSERT_BATCH + k;
            InsertRow {
                id: i64::try_from(n).unwrap_or(0),
                name: format!("Ferry ticket {n}"),
                qty: i32::try_from(n % 17).unwrap_or(0),
                price: f64::from(i32::try_from(n % 1000).unwrap_or(0)) * 0.25,
            }
        })
        .collect()
}

/// The insert batches a run of `workload` needs (none unless it inserts).
pub(crate) fn insert_batches(workload: Workload, n: usize) -> Vec<Vec<InsertRow>> {
    match workload {
        Workload::Insert | Workload::Copy => (0..n).map(insert_batch).collect(),
        _ => Vec::new(),
    }
}

/// The rows of batch `b` in COPY text format.
pub(crate) fn copy_text(rows: &[InsertRow]) -> Vec<u8> {
    use std::fmt::Write;
    let mut s = String::with_capacity(rows.len() * 40);
    for r in rows {
        let _ = writeln!(s, "{}\t{}\t{}\t{}", r.id, r.name, r.qty, r.price);
    }
    s.into_bytes()
}

/// `search`: the statement before its optional filters; each present filter appends
/// ` AND col op $k` in the order of [`SEARCH_FILTERS`], then [`SEARCH_TAIL`] follows.
pub(crate) const SEARCH_HEAD: &str = "SELECT id, name FROM bench_search WHERE true";

/// `search`: the four optional filters, `(column, operator)`, in parameter order.
pub(crate) const SEARCH_FILTERS: [(&str, &str); 4] = [
    ("region", "="),
    ("price", "<="),
    ("day", ">="),
    ("status", "="),
];

/// `search`: what follows the filters; at most 20 rows per query.
pub(crate) const SEARCH_TAIL: &str = " ORDER BY id LIMIT 20";

/// The filters of one search query; `None` leaves the filter out.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SearchForm {
    pub(crate) region: Option<&'static str>,
    pub(crate) max_price: Option<f64>,
    pub(crate) from_day: Option<NaiveDate>,
    pub(crate) status: Option<&'static str>,
}

const REGIONS: [&str; 8] = [
    "north",
    "south",
    "east",
    "west",
    "central",
    "islands",
    "coast",
    "mountains",
];
const STATUSES: [&str; 4] = ["open", "sold", "draft", "closed"];

/// The form of the `i`-th search: its filters cycle through all 16 subsets, their values
/// through the data's ranges.
pub(crate) fn search_form(i: usize) -> SearchForm {
    let mask = i % 16;
    let day0 = NaiveDate::from_ymd_opt(2025, 1, 1).unwrap_or_default();
    SearchForm {
        region: (mask & 1 != 0).then(|| REGIONS[(i / 16) % REGIONS.len()]),
        max_price: (mask & 2 != 0).then(|| f64::from(u8::try_from(i % 90).unwrap_or(0)) + 5.0),
        from_day: (mask & 4 != 0)
            .then(|| day0 + chrono::Days::new(u64::try_from(i % 300).unwrap_or(0))),
        status: (mask & 8 != 0).then(|| STATUSES[(i / 3) % STATUSES.len()]),
    }
}

impl SearchForm {
    /// The statement for this form's filters, `$1…` numbered in filter order: what the
    /// drivers without a builder send.
    pub(crate) fn sql(&self) -> String {
        let present = [
            self.region.is_some(),
            self.max_price.is_some(),
            self.from_day.is_some(),
            self.status.is_some(),
        ];
        let mut sql = String::from(SEARCH_HEAD);
        let mut k = 0;
        for ((col, op), on) in SEARCH_FILTERS.iter().zip(present) {
            if on {
                k += 1;
                sql.push_str(&format!(" AND {col} {op} ${k}"));
            }
        }
        sql.push_str(SEARCH_TAIL);
        sql
    }
}

/// `bulk_*`: the target table, emptied before each run outside the measurement.
pub(crate) const BULK_TRUNCATE_SQL: &str = "TRUNCATE bench_bulk";

/// `bulk_*`: counts the rows after a run, outside the measurement.
pub(crate) const BULK_COUNT_SQL: &str = "SELECT count(*) FROM bench_bulk";

/// `bulk_unnest` for the drivers without a bulk form: one array parameter per column.
pub(crate) const BULK_UNNEST_SQL: &str = "INSERT INTO bench_bulk (id, name, qty, note) \
     SELECT * FROM UNNEST($1::int8[], $2::text[], $3::int4[], $4::text[])";

/// `bulk_copy`: the COPY statement.
pub(crate) const BULK_COPY_SQL: &str = "COPY bench_bulk (id, name, qty, note) FROM STDIN";

/// Checks the row count of `bench_bulk` after a bulk run of `expected` rows.
pub(crate) fn check_bulk(stored: i64, expected: usize) -> Result<(), String> {
    if usize::try_from(stored).ok() == Some(expected) {
        Ok(())
    } else {
        Err(format!(
            "bench_bulk holds {stored} rows after inserting {expected}"
        ))
    }
}

/// One row of the bulk workloads; the fields are named like the columns.
#[derive(Debug, Clone)]
pub(crate) struct BulkRow {
    pub(crate) id: i64,
    pub(crate) name: String,
    pub(crate) qty: i32,
    pub(crate) note: Option<String>,
}

/// The `n` rows of a bulk run: a third of them with a note, the rest NULL.
pub(crate) fn bulk_rows(workload: Workload, n: usize) -> Vec<BulkRow> {
    if !matches!(workload, Workload::BulkUnnest | Workload::BulkCopy) {
        return Vec::new();
    }
    (0..n)
        .map(|i| BulkRow {
            id: i64::try_from(i).unwrap_or(0),
            name: format!("Bulk row {i}"),
            qty: i32::try_from(i % 17).unwrap_or(0),
            note: (i % 3 == 0).then(|| format!("note {i}")),
        })
        .collect()
}

/// `nested*`: the harbors one load takes, by offset in id order.
pub(crate) const NESTED_PARENTS_SQL: &str =
    "SELECT id, name FROM harbors ORDER BY id LIMIT 50 OFFSET $1";

/// `nested`: the harbors and their lines in one query, a record array per harbor.
pub(crate) const NESTED_SQL: &str = "SELECT h.id, h.name, \
     array_agg(ROW(c.id, c.name, c.departure_time, c.duration_minutes, c.price) \
     ORDER BY c.name) AS lines \
     FROM (SELECT id, name FROM harbors ORDER BY id LIMIT 50 OFFSET $1) h \
     JOIN odyssey_connections c ON c.origin_harbor_id = h.id \
     GROUP BY h.id, h.name ORDER BY h.id";

/// `nested_join`: one row per line with its harbor's columns, in harbor order.
pub(crate) const NESTED_JOIN_SQL: &str = "SELECT h.id AS harbor_id, h.name AS harbor_name, \
     c.id, c.name, c.departure_time, c.duration_minutes, c.price \
     FROM (SELECT id, name FROM harbors ORDER BY id LIMIT 50 OFFSET $1) h \
     JOIN odyssey_connections c ON c.origin_harbor_id = h.id \
     ORDER BY h.id, c.name";

/// `nested_n1`: the lines of one harbor.
pub(crate) const NESTED_LINES_SQL: &str = "SELECT id, name, departure_time, duration_minutes, \
     price FROM odyssey_connections WHERE origin_harbor_id = $1 ORDER BY name";

/// Harbors per nested load.
pub(crate) const NESTED_PARENTS: usize = 50;

/// The offset of the `i`-th nested load: a multiple of 50 below 950.
pub(crate) fn nested_offset(i: usize) -> i64 {
    i64::try_from((i % 19) * NESTED_PARENTS).unwrap_or(0)
}

/// A line (an `odyssey_connections` row) of the nested payload.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    pub(crate) id: Uuid,
    pub(crate) name: String,
    pub(crate) departure_time: Option<NaiveTime>,
    pub(crate) duration_minutes: Option<i32>,
    pub(crate) price: Option<Decimal>,
}

/// A harbor with its lines: the nested payload, as the JOIN and N+1 strategies build it.
#[derive(Debug, Clone)]
pub(crate) struct HarborLines {
    pub(crate) id: Uuid,
    pub(crate) name: String,
    pub(crate) lines: Vec<Line>,
}

/// A row of `nested_join`: a line with its harbor's id and name.
#[derive(Debug, Clone)]
pub(crate) struct HarborLine {
    pub(crate) harbor_id: Uuid,
    pub(crate) harbor_name: String,
    pub(crate) id: Uuid,
    pub(crate) name: String,
    pub(crate) departure_time: Option<NaiveTime>,
    pub(crate) duration_minutes: Option<i32>,
    pub(crate) price: Option<Decimal>,
}

/// Groups JOIN rows, ordered by harbor, into harbors with their lines.
pub(crate) fn group_lines(rows: Vec<HarborLine>) -> Vec<HarborLines> {
    let mut out: Vec<HarborLines> = Vec::with_capacity(NESTED_PARENTS);
    for r in rows {
        let line = Line {
            id: r.id,
            name: r.name,
            departure_time: r.departure_time,
            duration_minutes: r.duration_minutes,
            price: r.price,
        };
        match out.last_mut() {
            Some(h) if h.id == r.harbor_id => h.lines.push(line),
            _ => out.push(HarborLines {
                id: r.harbor_id,
                name: r.harbor_name,
                lines: vec![line],
            }),
        }
    }
    out
}

/// A digest of a nested payload (FNV-1a over every value), fed harbor by harbor and line by
/// line in order, so strategies and drivers that return different types can be compared.
#[derive(Debug, Clone)]
pub(crate) struct Digest(u64);

impl Default for Digest {
    fn default() -> Self {
        Digest(0xcbf2_9ce4_8422_2325)
    }
}

impl Digest {
    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        // A separator, so ("ab", "c") and ("a", "bc") differ.
        self.0 = (self.0 ^ 0xff).wrapping_mul(0x0100_0000_01b3);
    }

    /// Feeds a harbor.
    pub(crate) fn harbor(&mut self, id: &Uuid, name: &str) {
        self.bytes(b"h");
        self.bytes(id.as_bytes());
        self.bytes(name.as_bytes());
    }

    /// Feeds a line of the last harbor.
    pub(crate) fn line(
        &mut self,
        id: &Uuid,
        name: &str,
        departure_time: Option<NaiveTime>,
        duration_minutes: Option<i32>,
        price: Option<&Decimal>,
    ) {
        use chrono::Timelike;
        self.bytes(b"l");
        self.bytes(id.as_bytes());
        self.bytes(name.as_bytes());
        match departure_time {
            Some(t) => self.bytes(&u64::from(t.num_seconds_from_midnight()).to_le_bytes()),
            None => self.bytes(b"-"),
        }
        match duration_minutes {
            Some(d) => self.bytes(&d.to_le_bytes()),
            None => self.bytes(b"-"),
        }
        match price {
            Some(p) => self.bytes(p.normalize().to_string().as_bytes()),
            None => self.bytes(b"-"),
        }
    }

    /// The digest of the harbors in the common type.
    pub(crate) fn of(harbors: &[HarborLines]) -> u64 {
        let mut d = Digest::default();
        for h in harbors {
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
        d.finish()
    }

    /// The digest.
    pub(crate) fn finish(self) -> u64 {
        self.0
    }
}

/// The lines in a load of harbors.
pub(crate) fn line_count(harbors: &[HarborLines]) -> u64 {
    harbors.iter().map(|h| h.lines.len() as u64).sum()
}

/// Counts a load's lines, and takes the digest of the first.
pub(crate) fn finish_load(
    i: usize,
    harbors: Vec<HarborLines>,
    counts: &mut Counts,
    digest: &mut Option<u64>,
) {
    if i == 0 {
        *digest = Some(Digest::of(&harbors));
    }
    counts.add(1, line_count(&harbors));
    std::hint::black_box(harbors);
}

/// A decoded row of the join workload.
#[derive(Debug, Clone)]
#[expect(
    dead_code,
    reason = "decoded to be measured; black_box keeps the values"
)]
pub(crate) struct JoinRow {
    pub(crate) id: Uuid,
    pub(crate) name: String,
    pub(crate) origin: Option<String>,
    pub(crate) destination: Option<String>,
    pub(crate) operator: Option<String>,
    pub(crate) departure_time: Option<NaiveTime>,
    pub(crate) duration_minutes: Option<i32>,
    pub(crate) price: Option<Decimal>,
}

/// A decoded row of the wide workload.
#[derive(Debug, Clone)]
#[expect(
    dead_code,
    reason = "decoded to be measured; black_box keeps the values"
)]
pub(crate) struct WideRow {
    pub(crate) id: i64,
    pub(crate) i4: i32,
    pub(crate) i8: i64,
    pub(crate) f8: f64,
    pub(crate) b: bool,
    pub(crate) t: String,
    pub(crate) ts: DateTime<Utc>,
    pub(crate) u: Uuid,
    pub(crate) n: Option<Decimal>,
    pub(crate) j: serde_json::Value,
}

/// Keeps decoded rows alive for the optimizer.
pub(crate) fn consume<T>(rows: Vec<T>) -> u64 {
    let n = u64::try_from(rows.len()).unwrap_or(u64::MAX);
    std::hint::black_box(rows);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_names_round_trip() {
        for w in Workload::ALL {
            assert_eq!(w.name().parse::<Workload>(), Ok(w));
        }
        assert!("nope".parse::<Workload>().is_err());
    }

    #[test]
    fn parameters_stay_in_the_data() {
        assert_eq!(point_id(0), 1);
        assert_eq!(point_id(9_999), 10_000);
        assert_eq!(pipeline_limit(9), 10);
        assert_eq!(wide_after(48), 48_000);
        assert_eq!(nested_offset(18), 900);
        let p = params16(8_999);
        assert!(p.iter().all(|&id| (1..=10_000).contains(&id)));
    }

    #[test]
    fn scaling_keeps_whole_batches() {
        let s = Sizes::quick().scaled(0.0001);
        assert_eq!(s.pipeline, s.pipeline_batch);
        assert_eq!(s.pool, POOL_TASKS * POOL_BATCH);
        assert_eq!(Sizes::full().pipeline, 1_000_000);
    }

    #[test]
    fn sizes_round_trip_through_the_child_argument() {
        let s = Sizes::full().scaled(0.3);
        let back = Sizes::from_arg(&s.to_arg()).expect("own format parses");
        assert_eq!(back.to_arg(), s.to_arg());
        assert!(Sizes::from_arg("point=1").is_err());
        assert!(Sizes::from_arg("point=x").is_err());
    }

    #[test]
    fn search_forms_cover_every_subset() {
        let all = search_form(15);
        assert_eq!(
            all.sql(),
            "SELECT id, name FROM bench_search WHERE true AND region = $1 AND price <= $2 \
             AND day >= $3 AND status = $4 ORDER BY id LIMIT 20"
        );
        assert_eq!(
            search_form(16).sql(),
            "SELECT id, name FROM bench_search WHERE true ORDER BY id LIMIT 20"
        );
        assert_eq!(
            search_form(10).sql(),
            "SELECT id, name FROM bench_search WHERE true AND price <= $1 AND status = $2 \
             ORDER BY id LIMIT 20"
        );
        let rows = bulk_rows(Workload::BulkCopy, 4);
        assert_eq!(rows[0].note.as_deref(), Some("note 0"));
        assert_eq!(rows[1].note, None);
    }

    #[test]
    fn copy_text_is_tab_separated() {
        let rows = insert_batch(0);
        let text = String::from_utf8(copy_text(&rows[..1])).expect("ascii");
        assert_eq!(text, "0\tFerry ticket 0\t0\t0\n");
    }

    fn line(name: &str, price: Option<Decimal>) -> Line {
        Line {
            id: Uuid::from_u128(7),
            name: name.to_owned(),
            departure_time: None,
            duration_minutes: Some(5),
            price,
        }
    }

    #[test]
    fn grouping_and_digests_see_every_value() {
        let row = |h: u128, name: &str| HarborLine {
            harbor_id: Uuid::from_u128(h),
            harbor_name: format!("Harbor {h}"),
            id: Uuid::from_u128(7),
            name: name.to_owned(),
            departure_time: None,
            duration_minutes: Some(5),
            price: None,
        };
        let grouped = group_lines(vec![row(1, "a"), row(1, "b"), row(2, "c")]);
        assert_eq!(grouped.len(), 2);
        assert_eq!(grouped[0].lines.len(), 2);
        assert_eq!(grouped[1].lines[0].name, "c");
        assert_eq!(line_count(&grouped), 3);
        let digest = Digest::of(&grouped);
        // The same values in another shape: the lines regrouped differ.
        let mut moved = grouped.clone();
        let l = moved[0].lines.pop().expect("two lines");
        moved[1].lines.insert(0, l);
        assert_ne!(Digest::of(&moved), digest);
        // A price with another scale is the same number.
        let mut scaled = grouped.clone();
        scaled[0].lines[0] = line("a", Some(Decimal::new(150, 2)));
        let mut other = grouped;
        other[0].lines[0] = line("a", Some(Decimal::new(15, 1)));
        assert_eq!(Digest::of(&scaled), Digest::of(&other));
        other[0].lines[0].price = None;
        assert_ne!(Digest::of(&scaled), Digest::of(&other));
    }
}
