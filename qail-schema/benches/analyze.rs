//! How long the analyzer takes on a realistic 40-line report query (target: under 1 ms,
//! since every `qail!` invocation pays it at compile time). "parse only" is sqlparser alone.
#![allow(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]

use criterion::{Criterion, criterion_group, criterion_main};
use qail_schema::Snapshot;
use qail_schema::check::check;

const REPORT: &str = "
WITH recent AS (
    SELECT b.sailing_id,
           count(*) AS bookings,
           sum(b.seats) AS seats,
           sum(b.total) AS revenue
    FROM bookings b
    WHERE b.booked_at > now() - $1::interval
      AND b.status <> 'cancelled'
    GROUP BY b.sailing_id
)
SELECT c.id,
       c.name,
       o.name AS origin,
       o.country AS origin_country,
       d.name AS destination,
       op.name AS operator,
       op.rating,
       v.name AS vessel,
       v.kind,
       s.departs_at,
       s.arrives_at - s.departs_at AS duration,
       s.seats_left,
       COALESCE(r.bookings, 0) AS bookings,
       COALESCE(r.seats, 0) AS seats_sold,
       COALESCE(r.revenue, 0) AS revenue,
       CASE WHEN s.seats_left = 0 THEN 'full'
            WHEN s.seats_left < 10 THEN 'few'
            ELSE 'open' END AS availability,
       lower(o.code) AS origin_code
FROM odyssey_connections c
JOIN harbors o ON o.id = c.origin_harbor_id
JOIN harbors d ON d.id = c.destination_harbor_id
LEFT JOIN operators op ON op.id = c.operator_id
JOIN sailings s ON s.connection_id = c.id
LEFT JOIN vessels v ON v.id = s.vessel_id
LEFT JOIN recent r ON r.sailing_id = s.id
WHERE c.is_enabled
  AND o.country = ANY($2)
  AND s.sail_date BETWEEN $3 AND $4
ORDER BY s.departs_at, c.name
LIMIT $5 OFFSET $6
";

fn bench(c: &mut Criterion) {
    let snapshot: Snapshot =
        serde_json::from_str(include_str!("../tests/fixtures/app.schema.json"))
            .expect("the fixture snapshot parses");
    let analysis = check(REPORT, &snapshot).expect("the report query checks");
    assert_eq!(analysis.columns.len(), 17);
    c.bench_function("parse only", |b| {
        b.iter(|| {
            sqlparser::parser::Parser::parse_sql(
                &sqlparser::dialect::PostgreSqlDialect {},
                std::hint::black_box(REPORT),
            )
        })
    });
    c.bench_function("check 40-line report", |b| {
        b.iter(|| check(std::hint::black_box(REPORT), &snapshot))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
