#!/usr/bin/env bash
# Creates (or re-creates) the benchmark database `qail_bench` with deterministic data.
# Safe to run again: every table is dropped and rebuilt with the same contents.
#
#   DATABASE_URL=postgres://postgres@127.0.0.1:5432 bench/setup.sh
#
# DATABASE_URL names the server; its database part, if any, is ignored.
#
# bench/qail.schema.json is this schema's snapshot, which the `qail` driver's `qail!` queries
# are checked against when the harness compiles. After changing the tables below, write it
# again: cargo qail schema pull --database-url "$server/qail_bench" --out bench/qail.schema.json
set -euo pipefail

source "$(dirname "$0")/database.sh"
if ! command -v pg_config >/dev/null || [[ ! -f "$(pg_config --includedir)/libpq-fe.h" ]]; then
    echo "libpq headers missing; installing libpq-dev for the C peer" >&2
    apt-get install -y libpq-dev >/dev/null || {
        echo "could not install libpq-dev: run 'apt-get update && apt-get install -y libpq-dev'" >&2
        exit 1
    }
fi

bench_database qail_bench

psql "$server/qail_bench" -v ON_ERROR_STOP=1 -q <<'SQL'
SET client_min_messages = warning;
BEGIN;
DROP TABLE IF EXISTS odyssey_connections, operators, harbors, bench_wide, harbors_small,
    bench_insert, bench_search, bench_bulk CASCADE;

-- A stable uuid from a label, so every run builds the same data.
CREATE OR REPLACE FUNCTION pg_temp.uid(label text) RETURNS uuid
    LANGUAGE sql IMMUTABLE AS $$ SELECT md5(label)::uuid $$;

CREATE TABLE harbors (
    id uuid PRIMARY KEY,
    name text NOT NULL,
    country text NOT NULL,
    latitude float8,
    longitude float8,
    created_at timestamptz NOT NULL DEFAULT '2025-01-01T00:00:00Z'
);
INSERT INTO harbors (id, name, country, latitude, longitude)
SELECT pg_temp.uid('harbor' || i), 'Harbor ' || i,
       (ARRAY['GR', 'IT', 'HR', 'ES', 'FR', 'TR', 'NO', 'SE'])[1 + i % 8],
       30 + (i % 300) / 10.0, -10 + (i % 400) / 10.0
FROM generate_series(1, 1000) AS i;

CREATE TABLE operators (
    id uuid PRIMARY KEY,
    name text NOT NULL,
    website text,
    created_at timestamptz NOT NULL DEFAULT '2025-01-01T00:00:00Z'
);
INSERT INTO operators (id, name, website)
SELECT pg_temp.uid('operator' || i), 'Operator ' || i, 'https://operator' || i || '.example'
FROM generate_series(1, 100) AS i;

CREATE TABLE odyssey_connections (
    id uuid PRIMARY KEY,
    name text NOT NULL,
    origin_harbor_id uuid NOT NULL REFERENCES harbors (id),
    destination_harbor_id uuid NOT NULL REFERENCES harbors (id),
    operator_id uuid REFERENCES operators (id),
    is_enabled bool NOT NULL,
    departure_time time,
    duration_minutes int4,
    price numeric(10, 2),
    created_at timestamptz NOT NULL DEFAULT '2025-01-01T00:00:00Z'
);
-- 80% enabled (i % 5 <> 0), 10% without operator (i % 10 = 3).
INSERT INTO odyssey_connections (id, name, origin_harbor_id, destination_harbor_id,
    operator_id, is_enabled, departure_time, duration_minutes, price)
SELECT pg_temp.uid('connection' || i),
       'Route ' || lpad(((i * 7919) % 10000)::text, 5, '0'),
       pg_temp.uid('harbor' || (1 + i % 1000)),
       pg_temp.uid('harbor' || (1 + (i * 31) % 1000)),
       CASE WHEN i % 10 = 3 THEN NULL ELSE pg_temp.uid('operator' || (1 + i % 100)) END,
       i % 5 <> 0,
       make_time(i % 24, (i * 7) % 60, 0),
       30 + i % 600,
       round((5 + (i % 2000) * 0.37)::numeric, 2)
FROM generate_series(1, 10000) AS i;
CREATE INDEX odyssey_connections_enabled_name ON odyssey_connections (name) WHERE is_enabled;
-- The foreign key the nested workloads load children by (10 per harbor).
CREATE INDEX odyssey_connections_origin ON odyssey_connections (origin_harbor_id);

CREATE TABLE bench_wide (
    id int8 PRIMARY KEY,
    i4 int4 NOT NULL,
    i8 int8 NOT NULL,
    f8 float8 NOT NULL,
    b bool NOT NULL,
    t text NOT NULL,
    ts timestamptz NOT NULL,
    u uuid NOT NULL,
    n numeric(12, 2),
    j jsonb NOT NULL
);
INSERT INTO bench_wide
SELECT i, i % 100000, i::int8 * 1000003, i / 7.0, i % 2 = 0,
       substr(repeat(md5(i::text), 2), 1, 20 + i % 41),
       '2025-01-01T00:00:00Z'::timestamptz + i * interval '1 minute',
       pg_temp.uid('wide' || i),
       CASE WHEN i % 7 = 0 THEN NULL ELSE round((i * 1.37)::numeric, 2) END,
       jsonb_build_object('k', i, 'tag', 't' || i % 10, 'ok', i % 3 = 0)
FROM generate_series(1, 50000) AS i;

CREATE TABLE harbors_small (id int8 PRIMARY KEY, name text NOT NULL);
INSERT INTO harbors_small SELECT i, 'Harbor ' || i FROM generate_series(1, 10000) AS i;

-- Target of the insert workloads; unlogged so the server's WAL does not dominate.
CREATE UNLOGGED TABLE bench_insert (id int8 NOT NULL, name text NOT NULL, qty int4 NOT NULL,
    price float8 NOT NULL);

-- The search workload: 100,000 listings, four filterable columns.
CREATE TABLE bench_search (
    id int8 PRIMARY KEY,
    name text NOT NULL,
    region text NOT NULL,
    price float8 NOT NULL,
    day date NOT NULL,
    status text NOT NULL
);
INSERT INTO bench_search
SELECT i, 'Listing ' || i,
       (ARRAY['north', 'south', 'east', 'west', 'central', 'islands', 'coast', 'mountains'])[1 + i % 8],
       (i * 37 % 10000) / 100.0,
       '2025-01-01'::date + (i * 13 % 365),
       (ARRAY['open', 'sold', 'draft', 'closed'])[1 + i * 7 % 4]
FROM generate_series(1, 100000) AS i;
CREATE INDEX bench_search_region ON bench_search (region);
CREATE INDEX bench_search_day ON bench_search (day);

-- Target of the bulk insert workloads (a nullable column); unlogged like bench_insert.
CREATE UNLOGGED TABLE bench_bulk (id int8 NOT NULL, name text NOT NULL, qty int4 NOT NULL,
    note text);
COMMIT;
ANALYZE;
SQL

psql "$server/qail_bench" -Atqc "SELECT 'qail_bench ready: ' ||
    (SELECT count(*) FROM harbors) || ' harbors, ' ||
    (SELECT count(*) FROM operators) || ' operators, ' ||
    (SELECT count(*) FROM odyssey_connections) || ' connections (' ||
    (SELECT count(*) FROM odyssey_connections WHERE is_enabled) || ' enabled), ' ||
    (SELECT count(*) FROM bench_wide) || ' wide rows, ' ||
    (SELECT count(*) FROM harbors_small) || ' small harbors'"
