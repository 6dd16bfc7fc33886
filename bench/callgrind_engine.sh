#!/usr/bin/env bash
# The client's user-space instructions per streamed token, counted by callgrind over
# bench_engine's measured window: a figure that other tenants of the machine do not move, unlike
# CPU time. 1,000 streams (4 curl shards, as in the timed bench) at a low token rate, because the
# client runs ~50x slower under valgrind; per-token work does not depend on the rate. Prints one
# RESULT line per server: the mock, the benches' own at one event per write and at 2,3; then the
# libcurl floor (bench/curl_floor.h) against the mock, in its own process. The mock sends vLLM's
# chunks byte for byte (--no-sent-ns: no "sent_ns" to parse, which no real server sends). Kernel time
# (recv, poll, epoll) is not counted: see `strace -c` for the system calls per token.
#   bench/callgrind_engine.sh [extra bench_engine options]
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${STAMPEDE_BUILD:-build}
export STAMPEDE_BIN=${STAMPEDE_BIN:-$PWD/$BUILD/stampede}
if ! command -v valgrind >/dev/null; then
    echo "callgrind: valgrind is not installed (apt-get install valgrind); skipped"
    exit 0
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

log="$out/bench.log"
valgrind --tool=callgrind --callgrind-out-file="$out/cg.%p" \
    "$BUILD/bench_engine" --streams 1000 --itl-ms 1000 --tokens 100 --seconds 5 --no-peer \
    --no-floor --coalesce 2,3 --coalesce-streams 1000 --no-sent-ns "$@" >"$log" 2>&1
# One dump per measured window (CALLGRIND_DUMP_STATS_AT), in the order the levels ran: the mock,
# the own server at one event per write, then at 2,3. Their RESULT lines carry the token counts.
# The libcurl floor's child dumps its own window ("curl_floor") in a file of its pid.
main=$(grep -l 'Client Request: window' "$out"/cg.*.1 2>/dev/null | head -1)
main=${main%.1}
n=0
for name in $(grep -o '^RESULT name=stampede[a-z_0-9]*' "$log" | cut -d= -f2); do
    n=$((n + 1))
    tokens=$(grep -o "^RESULT name=$name .*" "$log" | grep -o ' tokens=[0-9]*' | cut -d= -f2)
    if [ -z "$main" ] || [ ! -f "$main.$n" ] || [ -z "$tokens" ] || [ "$tokens" = 0 ]; then
        echo "callgrind: no window for $name (bench_engine's output below)" >&2
        cat "$log" >&2
        exit 1
    fi
    ir=$(awk '/^summary:/ {print $2}' "$main.$n")
    echo "RESULT name=callgrind_$name streams=1000 itl_ms=1000 instructions_per_token=$((ir / tokens)) tokens=$tokens"
done
floor_file=$(grep -l 'Client Request: curl_floor' "$out"/cg.* 2>/dev/null | head -1)
floor_tokens=$(grep -o '^RESULT name=curl_floor .*' "$log" | grep -o ' tokens=[0-9]*' | cut -d= -f2)
if [ -n "$floor_file" ] && [ -n "$floor_tokens" ] && [ "$floor_tokens" != 0 ]; then
    ir=$(awk '/^summary:/ {print $2}' "$floor_file")
    echo "RESULT name=callgrind_curl_floor streams=1000 itl_ms=1000 instructions_per_token=$((ir / floor_tokens)) tokens=$floor_tokens"
fi
if [ $n = 0 ]; then
    echo "callgrind: bench_engine reported nothing (its output below)" >&2
    cat "$log" >&2
    exit 1
fi
