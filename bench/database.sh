# Sourced by the benchmarks' set-up scripts: `bench_database NAME` checks that psql is there
# and the server `DATABASE_URL` names answers (its database part, if any, is ignored), creates
# database NAME if it does not exist, and sets `server` to the server's URL without a database.
bench_database() {
    local url="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432}"
    # Strip ?options and a trailing /dbname to reach the server's maintenance database.
    server="${url%%\?*}"
    local rest="${server#*://}"
    if [[ "$rest" == */* ]]; then server="${server%/*}"; fi

    if ! command -v psql >/dev/null; then
        echo "psql not found: install the PostgreSQL client (apt-get install -y postgresql-client)" >&2
        exit 1
    fi
    if ! psql "$server/postgres" -Atqc 'SELECT 1' >/dev/null; then
        echo "cannot reach PostgreSQL at $server: start the server or set DATABASE_URL" >&2
        exit 1
    fi
    local exists
    exists=$(psql "$server/postgres" -Atqc "SELECT 1 FROM pg_database WHERE datname = '$1'")
    if [[ "$exists" != "1" ]]; then
        psql "$server/postgres" -qc "CREATE DATABASE $1"
    fi
}
