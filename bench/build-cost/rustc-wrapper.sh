#!/usr/bin/env bash
# RUSTC_WRAPPER for run.sh: runs rustc under /usr/bin/time when it compiles one of the measured
# crates (qail100, sqlx100) and BUILDCOST_TIME_FILE is set, appending
# "<crate> <wall s> <user s> <sys s> <max RSS KiB>" to that file. Every other call goes to rustc
# unchanged, so the wrapper never changes what is built. With BUILDCOST_CALLGRIND set to a file
# name, the measured crate's rustc runs under `valgrind --tool=callgrind` instead, writing its
# profile there (extra valgrind options in BUILDCOST_CALLGRIND_OPTS): instruction counts do not
# depend on the machine's load. Use this script for that too, not another wrapper: cargo
# rebuilds every dependency when RUSTC_WRAPPER changes.
rustc="$1"
shift
crate=""
prev=""
for arg in "$@"; do
    if [ "$prev" = "--crate-name" ]; then
        crate="$arg"
        break
    fi
    prev="$arg"
done
case "$crate" in
    qail100 | sqlx100)
        if [ -n "${BUILDCOST_CALLGRIND:-}" ]; then
            # shellcheck disable=SC2086 # the options are words
            exec valgrind --tool=callgrind --callgrind-out-file="$BUILDCOST_CALLGRIND" \
                ${BUILDCOST_CALLGRIND_OPTS:-} "$rustc" "$@" 2>"$BUILDCOST_CALLGRIND.log"
        fi
        if [ -n "${BUILDCOST_TIME_FILE:-}" ]; then
            out="$(mktemp)"
            /usr/bin/time -f '%e %U %S %M' -o "$out" "$rustc" "$@"
            status=$?
            printf '%s %s\n' "$crate" "$(tail -n 1 "$out")" >>"$BUILDCOST_TIME_FILE"
            rm -f "$out"
            exit "$status"
        fi
        ;;
esac
exec "$rustc" "$@"
