/* The SQL of the benchmark workloads: the same text as src/workload.rs. */
#ifndef QAIL_BENCH_QUERIES_H
#define QAIL_BENCH_QUERIES_H

#define POINT_SQL "SELECT id, name FROM harbors_small WHERE id = $1"
#define PIPELINE_SQL "SELECT id, name FROM harbors_small LIMIT $1"
#define JOIN_SQL                                                                             \
    "SELECT c.id, c.name, o.name AS origin, d.name AS destination, op.name AS operator, "     \
    "c.departure_time, c.duration_minutes, c.price FROM odyssey_connections c "                \
    "LEFT JOIN harbors o ON o.id = c.origin_harbor_id "                                      \
    "LEFT JOIN harbors d ON d.id = c.destination_harbor_id "                                 \
    "LEFT JOIN operators op ON op.id = c.operator_id "                                       \
    "WHERE c.is_enabled ORDER BY c.name LIMIT 50"
#define WIDE_SQL                                                                             \
    "SELECT id, i4, i8, f8, b, t, ts, u, n, j FROM bench_wide WHERE id > $1 ORDER BY id "    \
    "LIMIT 1000"
#define PARAMS16_SQL                                                                         \
    "SELECT id, name FROM harbors_small WHERE id IN ($1::int4, $2::int4, $3::int4, "         \
    "$4::int4, $5::int4, $6::int4, $7::int4, $8::int4, $9::int4, $10::int4, $11::int4, "     \
    "$12::int4, $13::int4, $14::int4, $15::int4, $16::int4)"
#define INSERT_SQL "INSERT INTO bench_insert (id, name, qty, price) VALUES ($1, $2, $3, $4)"
#define BULK_COPY_SQL "COPY bench_bulk (id, name, qty, note) FROM STDIN"
#define COPY_SQL "COPY bench_insert (id, name, qty, price) FROM STDIN"

#endif
