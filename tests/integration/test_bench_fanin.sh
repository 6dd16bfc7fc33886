#!/bin/bash
# ctest: parallel
# bench_fanin still speaks the protocol the controller speaks: 4 fake workers register, answer the
# clock probes, replay their batches (worker/events.c) and are released by a real
# `stampede controller`, whose results.json then counts exactly the records and tokens sent. A
# protocol change that the bench's fake worker misses fails here, not in `make bench`. No figure
# is asserted (the bench measures; this checks that it can).
source "$(dirname "$0")/protocol_lib.sh"

BENCH="$(dirname "$STAMPEDE")/bench_fanin"
[ -x "$BENCH" ] || fail "no bench_fanin next to $STAMPEDE"
STAMPEDE_BIN="$STAMPEDE" timeout 120 "$BENCH" --workers 4 --duration 6 --rate 2000 --no-pin \
    >"$WORK/out" 2>"$WORK/err" || fail "bench_fanin failed: $(cat "$WORK/out" "$WORK/err")"
line=$(grep '^RESULT name=fanin workers=4 ' "$WORK/out") ||
    fail "no RESULT line for 4 workers: $(cat "$WORK/out" "$WORK/err")"
for key in totals_exact=yes released=4; do
    grep -q " $key " <<<"$line " || fail "expected $key in: $line"
done
records=$(grep -Eo ' records=[0-9]+' <<<"$line" | cut -d= -f2)
[ "$records" -gt 0 ] || fail "no record was replayed: $line"
echo "ok: 4 fake workers, $records records merged exactly"
