#!/usr/bin/env bash
# `make bench`: every benchmark, each printing its own figures, then a summary of the engine's
# figures as ratios measured in the same run. Nothing here passes or fails on time; a benchmark
# fails only if it could not run. Set BENCH_ONLY=name to run one.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${STAMPEDE_BUILD:-build}
export STAMPEDE_BIN="$PWD/$BUILD/stampede"
export STAMPEDE_BUILD=$BUILD
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run() {
    local name=$1
    shift
    [ -n "${BENCH_ONLY:-}" ] && [ "$BENCH_ONLY" != "$name" ] && return 0
    echo "== $name"
    if ! "$@" 2>&1 | tee -a "$log"; then
        echo "!! $name failed" >&2
        failed=1
    fi
    echo
}

run histogram "$BUILD/bench_histogram"
run merge "$BUILD/bench_merge"
run journal "$BUILD/bench_journal"
run trace "$BUILD/bench_trace"
run sse "$BUILD/bench_sse"
run body "$BUILD/bench_body"
run mock "$BUILD/bench_mock"
run engine "$BUILD/bench_engine" --pairs 3
# The CPU goal as it is judged: vLLM's chunks (no sent_ns, so no delay figures), at 1,000 and
# 10,000 streams, with pairs enough for the median's interval (about 12 minutes).
run engine-goal "$BUILD/bench_engine" --streams 1000,10000 --itl-ms 50,500 --no-peer \
    --no-coalesce --no-floor --no-sent-ns --pairs 11
run callgrind bash bench/callgrind_engine.sh
run fanin "$BUILD/bench_fanin"
run studies bash bench/sim_studies.sh
run parity bash bench/bench_sim_parity.sh
[ -f bench/run_system.sh ] && run system bash bench/run_system.sh
run rig python3 bench/system_rig.py

# The engine's RESULT lines as one table, then its RATIO and NOTE lines: absolute figures move
# with the machine's other tenants, ratios within one run much less, instruction counts not at all.
if grep -q '^RESULT name=\(stampede\|floor\|curl_floor\|aiohttp\|callgrind\)' "$log"; then
    echo "== summary: the worker engine (client pinned to CPU 0, server to CPU 1)"
    awk '
        function field(key,   i) {
            for (i = 2; i <= NF; i++)
                if (index($i, key "=") == 1)
                    return substr($i, length(key) + 2)
            return "-"
        }
        /^RESULT name=(stampede|floor|curl_floor|aiohttp|callgrind)/ {
            if (!header++)
                printf "%-30s %7s %6s %12s %12s %12s %13s %14s %10s\n", "client", "streams",
                       "itl_ms", "us/token", "delay p50", "delay p99", "tokens/recv",
                       "instr/token", "KB/stream"
            printf "%-30s %7s %6s %12s %12s %12s %13s %14s %10s\n", field("name"),
                   field("streams"), field("itl_ms"), field("cpu_us_per_token"),
                   field("delay_p50_us"), field("delay_p99_us"), field("tokens_per_socket_event"),
                   field("instructions_per_token"), field("rss_kb_per_stream")
        }
        /^(RATIO|NOTE)/ { ratios[++n] = $0 }
        END { for (i = 1; i <= n; i++) print ratios[i] }
    ' "$log"
fi
exit $failed
