#!/usr/bin/env bash
# Creates the scratch database sqlx's online build describes the queries against:
# `qail_buildcost` with the fixture schema (qail-analyzer/tests/fixtures/app.sql), the schema the
# committed qail.schema.json snapshot was pulled from. Idempotent: drops and recreates it.
#
# Env: PGHOST (127.0.0.1), PGPORT (5432), PGUSER (postgres), BUILDCOST_DB (qail_buildcost).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export PGHOST="${PGHOST:-127.0.0.1}" PGPORT="${PGPORT:-5432}" PGUSER="${PGUSER:-postgres}"
db="${BUILDCOST_DB:-qail_buildcost}"
psql -v ON_ERROR_STOP=1 -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
psql -v ON_ERROR_STOP=1 -q -d "$db" -f "$root/qail-analyzer/tests/fixtures/app.sql"
echo "postgres://$PGUSER@$PGHOST:$PGPORT/$db"
