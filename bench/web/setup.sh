#!/usr/bin/env bash
# Creates (or re-creates) the web benchmark's database `qail_bench_web`: TechEmpower's
# `world` (10,000 rows of id and a random number 1–10,000) and `fortune` (its 12 messages).
# Safe to run again: both tables are dropped and rebuilt.
#
#   DATABASE_URL=postgres://postgres@127.0.0.1:5432 bench/web/setup.sh
#
# DATABASE_URL names the server; its database part, if any, is ignored. The qail servers'
# `qail!` queries are checked against bench/web/qail.schema.json, this schema's snapshot:
# after changing the tables, write it again with
# cargo qail schema pull --database-url "$server/qail_bench_web" --out bench/web/qail.schema.json
set -euo pipefail

source "$(dirname "$0")/../database.sh"
bench_database qail_bench_web

psql "$server/qail_bench_web" -v ON_ERROR_STOP=1 -q <<'SQL'
SET client_min_messages = warning;
BEGIN;
DROP TABLE IF EXISTS world, fortune;
CREATE TABLE world (
    id int4 PRIMARY KEY,
    randomnumber int4 NOT NULL DEFAULT 0
);
-- setseed makes every setup the same table.
\o /dev/null
SELECT setseed(0.42);
\o
INSERT INTO world (id, randomnumber)
SELECT i, 1 + floor(random() * 10000)::int4 FROM generate_series(1, 10000) AS i;

CREATE TABLE fortune (
    id int4 PRIMARY KEY,
    message text NOT NULL
);
INSERT INTO fortune (id, message) VALUES
    (1, 'fortune: No such file or directory'),
    (2, 'A computer scientist is someone who fixes things that aren''t broken.'),
    (3, 'After enough decimal places, nobody gives a damn.'),
    (4, 'A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1'),
    (5, 'A computer program does what you tell it to do, not what you want it to do.'),
    (6, 'Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen'),
    (7, 'Any program that runs right is obsolete.'),
    (8, 'A list is only as strong as its weakest link. — Donald Knuth'),
    (9, 'Feature: A bug with seniority.'),
    (10, 'Computers make very fast, very accurate mistakes.'),
    (11, '<script>alert("This should not be displayed in a browser alert box.");</script>'),
    (12, 'フレームワークのベンチマーク');
COMMIT;
VACUUM ANALYZE world, fortune;
SQL
echo "qail_bench_web ready at $server"
