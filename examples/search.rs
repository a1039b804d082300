//! Dynamic queries with `qail!`: a bulk insert of sailings (UNNEST, then a binary COPY), a
//! search form with four optional filters, a sort choice and an optional LIMIT, and keyset
//! pagination — every combination checked at compile time.
//!
//! The example creates the fixture's ferry tables in its own schema, `qail_search` (dropped and
//! recreated on every run), inserts the sailings twice (`INSERT … VALUES {rows.*}`, sent as
//! `UNNEST` of one array per column; then `COPY … FROM {rows.*}`, a binary COPY), and prints
//! how long each took and what the searches return.
//!
//! Run: `cargo run --release --example search -- [SAILINGS]` (default 100,000)

#[allow(
    dead_code,
    reason = "each example uses a part of the shared support code"
)]
#[path = "support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use qail::chrono::{DateTime, NaiveDate, Utc};
use qail::rust_decimal::Decimal;
use qail::uuid::Uuid;
use qail::{Connection, qail};
use support::{Args, Result, human, per_second, print_table, thousands};

const SCHEMA: &str = "qail_search";
const USAGE: &str = "usage: cargo run --release --example search -- [SAILINGS]";

/// A sailing to insert: the fields are named like the columns, for `VALUES {rows.*}`.
struct NewSailing {
    connection_id: Uuid,
    vessel_id: Option<i64>,
    departs_at: DateTime<Utc>,
    sail_date: NaiveDate,
    seats_left: i32,
    price: Decimal,
    notes: Option<String>,
}

/// How the search results are ordered: each variant's SQL is checked with the query.
#[derive(Clone, Copy, Debug)]
enum Order {
    Soonest,
    Cheapest,
    MostSeats,
}

/// The search form: every field may be left empty.
#[derive(Clone, Copy, Debug, Default)]
struct Form {
    vessel: Option<i64>,
    max_price: Option<Decimal>,
    min_seats: Option<i32>,
    after: Option<DateTime<Utc>>,
    limit: Option<i64>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let args = Args::parse(&[], USAGE);
    let n = args.number("--sailings", true, 100_000, USAGE);
    let mut conn = support::connect_in(SCHEMA).await?;
    support::recreate_schema(
        &mut conn,
        SCHEMA,
        &[
            "vessel_kind",
            "operators",
            "vessels",
            "harbors",
            "odyssey_connections",
            "sailings",
        ],
    )
    .await?;
    conn.batch_execute(
        "INSERT INTO operators (id, name) VALUES ('00000000-0000-0000-0000-000000000001', 'Blue Star');
         INSERT INTO vessels (operator_id, name, kind, capacity)
         SELECT '00000000-0000-0000-0000-000000000001', 'Vessel ' || g, 'ferry', 300
         FROM generate_series(1, 10) AS g;
         INSERT INTO harbors (id, name, country) VALUES
             ('00000000-0000-0000-0000-00000000000a', 'Piraeus', 'GR'),
             ('00000000-0000-0000-0000-00000000000b', 'Naxos', 'GR');
         INSERT INTO odyssey_connections (id, name, origin_harbor_id, destination_harbor_id, is_enabled)
         VALUES ('00000000-0000-0000-0000-0000000000c1', 'Piraeus – Naxos',
                 '00000000-0000-0000-0000-00000000000a', '00000000-0000-0000-0000-00000000000b', true)",
    )
    .await?;
    let rows = sailings(usize::try_from(n)?);

    let started = Instant::now();
    let inserted =
        qail!("INSERT INTO sailings (connection_id, vessel_id, departs_at, sail_date, seats_left, price, notes)
               VALUES {rows.*}")
        .execute(&mut conn)
        .await?;
    let unnest = started.elapsed();
    conn.batch_execute("TRUNCATE sailings").await?;
    let started = Instant::now();
    let copied = qail!(
        "COPY sailings (connection_id, vessel_id, departs_at, sail_date, seats_left, price, notes)
               FROM {rows.*}"
    )
    .execute(&mut conn)
    .await?;
    let copy = started.elapsed();
    conn.batch_execute("ANALYZE sailings").await?;
    print_table(
        &["bulk insert", "rows", "time", "rows/s"],
        &[
            insert_row("INSERT … VALUES {rows.*} (UNNEST)", inserted, unnest),
            insert_row("COPY … FROM {rows.*} (binary)", copied, copy),
        ],
    );

    let first = rows.first().map_or(DateTime::UNIX_EPOCH, |r| r.departs_at);
    let forms = [
        ("nothing", Form::default(), Order::Soonest),
        (
            "vessel 3, first 20",
            Form {
                vessel: Some(3),
                limit: Some(20),
                ..Form::default()
            },
            Order::Soonest,
        ),
        (
            "≤ 30.00, ≥ 250 seats",
            Form {
                max_price: Some(Decimal::new(3000, 2)),
                min_seats: Some(250),
                ..Form::default()
            },
            Order::Cheapest,
        ),
        (
            "all four, first 10",
            Form {
                vessel: Some(5),
                max_price: Some(Decimal::new(8000, 2)),
                min_seats: Some(100),
                after: Some(first + chrono_days(30)),
                limit: Some(10),
            },
            Order::MostSeats,
        ),
    ];
    let mut table = Vec::new();
    for (name, form, order) in forms {
        let started = Instant::now();
        let found = search(&mut conn, form, order).await?;
        table.push(vec![
            name.to_owned(),
            format!("{order:?}"),
            thousands(u64::try_from(found.len())?),
            found
                .first()
                .map_or_else(|| "-".to_owned(), |id| id.to_string()),
            human(started.elapsed()),
        ]);
    }
    print_table(&["search", "order", "rows", "first id", "time"], &table);

    let started = Instant::now();
    let (pages, seen) = keyset_pages(&mut conn, 7, 500).await?;
    println!(
        "keyset pagination: vessel 7's {} sailings in {pages} pages of up to 500, {}",
        thousands(seen),
        human(started.elapsed())
    );
    Ok(())
}

/// The search: each filter applies when its field is set; the order is one of three.
async fn search(conn: &mut Connection, form: Form, order: Order) -> Result<Vec<i64>> {
    let Form {
        vessel,
        max_price,
        min_seats,
        after,
        limit,
    } = form;
    let rows = qail!(
        "SELECT id, departs_at, price, seats_left FROM sailings
         WHERE coalesce(notes, '') <> 'cancelled'
           {? AND vessel_id = {vessel} }
           {? AND price <= {max_price} }
           {? AND seats_left >= {min_seats} }
           {? AND departs_at > {after} }
         ORDER BY {sort}
         {? LIMIT {limit} }",
        sort = match order {
            Order::Soonest => "departs_at, id",
            Order::Cheapest => "price, departs_at, id",
            Order::MostSeats => "seats_left DESC, id",
        }
    )
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(|r| r.id).collect())
}

/// Pages through a vessel's sailings by `(departs_at, id)`: the first page has no lower
/// bound, each next one starts after the last row seen. Returns the pages and rows.
async fn keyset_pages(conn: &mut Connection, vessel: i64, size: i64) -> Result<(u64, u64)> {
    let mut after: Option<(DateTime<Utc>, i64)> = None;
    let (mut pages, mut seen) = (0, 0);
    loop {
        let (after_time, after_id) = (after.map(|a| a.0), after.map(|a| a.1));
        let page = qail!(
            "SELECT id, departs_at FROM sailings WHERE vessel_id = {vessel}
             {? AND (departs_at, id) > ({after_time}, {after_id}) }
             ORDER BY departs_at, id LIMIT {size}"
        )
        .fetch_all(&mut *conn)
        .await?;
        let Some(last) = page.last() else { break };
        after = Some((last.departs_at, last.id));
        pages += 1;
        seen += u64::try_from(page.len())?;
    }
    Ok((pages, seen))
}

/// `n` sailings over a year: one every few minutes, a vessel for most, notes for some.
fn sailings(n: usize) -> Vec<NewSailing> {
    let start = DateTime::from_timestamp(1_800_000_000, 0).unwrap_or(DateTime::UNIX_EPOCH);
    let connection = Uuid::from_u128(0xc1);
    (0..n)
        .map(|i| {
            let k = i64::try_from(i).unwrap_or(i64::MAX);
            let departs_at = start + Duration::from_secs(300 * u64::try_from(i).unwrap_or(0));
            NewSailing {
                connection_id: connection,
                vessel_id: (k % 7 != 0).then_some(k % 10 + 1),
                departs_at,
                sail_date: departs_at.date_naive(),
                seats_left: i32::try_from(k * 37 % 400).unwrap_or(0),
                price: Decimal::new(1500 + k % 9000, 2),
                notes: match k % 50 {
                    0 => Some("cancelled".to_owned()),
                    1 => Some(format!("charter {k}")),
                    _ => None,
                },
            }
        })
        .collect()
}

fn chrono_days(days: u64) -> Duration {
    Duration::from_secs(days * 86_400)
}

fn insert_row(what: &str, rows: u64, elapsed: Duration) -> Vec<String> {
    vec![
        what.to_owned(),
        thousands(rows),
        human(elapsed),
        per_second(usize::try_from(rows).unwrap_or(0), elapsed),
    ]
}
