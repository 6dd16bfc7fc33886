#!/usr/bin/env bash
# `make bench`: every benchmark, each printing its own figures. Nothing here passes or fails on
# time; a benchmark fails only if it could not run. Set BENCH_ONLY=name to run one.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${STAMPEDE_BUILD:-build}
export STAMPEDE_BIN="$PWD/$BUILD/stampede"
failed=0

run() {
    local name=$1
    shift
    [ -n "${BENCH_ONLY:-}" ] && [ "$BENCH_ONLY" != "$name" ] && return 0
    echo "== $name"
    if ! "$@"; then
        echo "!! $name failed" >&2
        failed=1
    fi
    echo
}

run histogram "$BUILD/bench_histogram"
run merge "$BUILD/bench_merge"
run sse "$BUILD/bench_sse"
run body "$BUILD/bench_body"
run mock "$BUILD/bench_mock"
run engine "$BUILD/bench_engine"
[ -f bench/run_system.sh ] && run system bash bench/run_system.sh
exit $failed
