#!/usr/bin/env bash
# Build cost of 100 `qail!` queries against the same 100 `sqlx::query!` queries in offline mode
# (SQLX_OFFLINE=true, the committed .sqlx cache, no DATABASE_URL), measured in one run.
#
# Usage: bench/build-cost/run.sh [--prepare]
#   --prepare  first (re)create the scratch database (setup-db.sh) and rewrite sqlx100/.sqlx
#              from it: needed after a query in queries.py changes.
# Env: ROUNDS (5), MODES ("check edit build"), CARGO (cargo), NICE ("nice -n 10").
#
# Only the crate holding the queries is measured: dependencies are built first, then each
# measured build touches the crate's src/lib.rs so cargo recompiles that crate alone. Modes:
# `check` and `build` compile it from scratch (CARGO_INCREMENTAL=0); `edit` is the edit loop, a
# `cargo check` with the incremental cache a previous check left (CARGO_INCREMENTAL=1, cargo's
# default for the dev profile). rustc-wrapper.sh runs that one rustc under /usr/bin/time: wall
# time, CPU time (user + sys) and peak RSS of the compiler process, proc macros included
# (they run inside rustc). Rounds interleave qail, sqlx, qail, sqlx…; the table shows medians.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
rounds="${ROUNDS:-5}"
modes="${MODES:-check edit build}"
cargo="${CARGO:-cargo}"
read -r -a nice <<<"${NICE:-nice -n 10}"

export RUSTC_WRAPPER="$here/rustc-wrapper.sh" CARGO_INCREMENTAL=0
unset BUILDCOST_TIME_FILE SQLX_OFFLINE_DIR

if [ "${1:-}" = "--prepare" ]; then
    url="$("$here/setup-db.sh" | tail -n 1)"
    rm -rf sqlx100/.sqlx && mkdir sqlx100/.sqlx
    touch sqlx100/src/lib.rs
    DATABASE_URL="$url" SQLX_OFFLINE=false SQLX_OFFLINE_DIR="$here/sqlx100/.sqlx" \
        "${nice[@]}" "$cargo" check -q -p sqlx100
    echo "wrote $(find sqlx100/.sqlx -name 'query-*.json' | wc -l) cached queries to sqlx100/.sqlx" >&2
fi

unset DATABASE_URL
export SQLX_OFFLINE=true

samples="$here/target/build-cost-samples.txt"
mkdir -p "$here/target"
: >"$samples"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"

# `edit` is `cargo check` with the incremental cache.
cargo_cmd() {
    case "$1" in
        edit) CARGO_INCREMENTAL=1 "${nice[@]}" "$cargo" check -q -p "$2" ;;
        *) "${nice[@]}" "$cargo" "$1" -q -p "$2" ;;
    esac
}

for mode in $modes; do
    echo "warming the dependencies and the incremental cache ($mode)…" >&2
    for crate in qail100 sqlx100; do
        touch "$crate/src/lib.rs"
        cargo_cmd "$mode" "$crate"
    done
done

for round in $(seq 1 "$rounds"); do
    for mode in $modes; do
        for crate in qail100 sqlx100; do
            touch "$crate/src/lib.rs"
            timing="$(mktemp)"
            start="$(date +%s.%N)"
            BUILDCOST_TIME_FILE="$timing" cargo_cmd "$mode" "$crate"
            end="$(date +%s.%N)"
            line="$(grep "^$crate " "$timing" || true)"
            rm -f "$timing"
            if [ -z "$line" ]; then
                echo "rustc did not run for $crate: is RUSTC_WRAPPER overridden in a cargo config?" >&2
                exit 1
            fi
            echo "$mode $line $(echo "$end - $start" | bc)" >>"$samples"
            echo "round $round/$rounds $mode $line" >&2
        done
    done
done

load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$here/summarize.py" "$samples" \
    --machine "$(nproc) cores, load average $load_before before and $load_after after, $(rustc --version)"
