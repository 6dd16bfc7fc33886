#!/bin/bash
# The live line in a log (stderr not a terminal): the first about 1 s in, then one per 10 s by
# default (--progress-interval, or STAMPEDE_PROGRESS_INTERVAL, changes it); a plain run says its
# total ("1.0 s of 3 s"); a sweep says about how long the whole sweep has left; a bad interval is
# refused before any worker starts.
# ctest: parallel (line counts with a second's slack on each side, and messages)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --seed 12 --ttft-ms 5 --itl-ms 2
write_workload "$WORK/r.yaml" seed=12 endpoints="[$MOCK_URL]" concurrency=2 duration=4s
lines() { grep -cE '^\[[0-9:]+\] [0-9]+\.[0-9] s of 4 s \| in flight' "$1" || true; }

# The default: a 4 s run gets one line (at 1 s; the next would be at 11 s).
(unset STAMPEDE_PROGRESS_INTERVAL
 run_bounded 60 "$WORK/t1" "$WORK/e1" "$WORK/r.yaml" --workers 1 --out "$WORK/o1")
assert_equal "live lines by default over 4 s" "$(lines "$WORK/e1")" 1
# Every 500 ms: 6 to 8 lines over the 4 s (the first at 1 s).
run_bounded 60 "$WORK/t2" "$WORK/e2" "$WORK/r.yaml" --workers 1 --out "$WORK/o2" \
    --progress-interval 500ms
n=$(lines "$WORK/e2")
[ "$n" -ge 5 ] && [ "$n" -le 9 ] || fail "$n live lines at 500 ms over 4 s: $(grep 'in flight' "$WORK/e2")"

rc=0
timeout 20 "$STAMPEDE" run "$WORK/r.yaml" --workers 1 --out "$WORK/o3" --progress-interval 0 \
    2>"$WORK/e3" || rc=$?
assert_equal "exit status for --progress-interval 0" "$rc" 1
grep -q -- "--progress-interval wants a duration > 0 such as 10s or 1m, got '0'" "$WORK/e3" ||
    fail "unclear refusal: $(cat "$WORK/e3")"

# A sweep of 2 levels x 1 repetition of 1 s warm-up + 2 s window: the line says the sweep's
# remaining time, which falls as the sweep goes on.
cat >"$WORK/s.yaml" <<YAML
seed: 12
target: {endpoints: [$MOCK_URL], ignore_eos: true}
workload: {kind: requests, input_tokens: 8, output_tokens: 8}
scheduler: {kind: concurrent}
sweep: {concurrency: [1, 2], warmup: 1s, snapshots: {count: 1, duration: 2s}, drain: 1s}
YAML
run_bounded 90 "$WORK/t4" "$WORK/e4" "$WORK/s.yaml" --workers 1 --out "$WORK/o4"
assert_equal "sweep exit status" "$RUN_RC" 0
eta() { grep -E "level $1/2 " "$WORK/e4" | grep -oE 'sweep about [0-9]+ s left' | grep -oE '[0-9]+'; }
first=$(eta 1 | head -1) && [ -n "$first" ] ||
    fail "no sweep ETA in level 1: $(grep 'level 1/2' "$WORK/e4" | head -2)"
last=$(eta 2 | tail -1) && [ -n "$last" ] ||
    fail "no sweep ETA in level 2: $(grep 'level 2/2' "$WORK/e4" | head -2)"
[ "$first" -ge 3 ] && [ "$first" -le 8 ] || fail "level 1's first ETA $first s, expected 3-8 s"
[ "$last" -lt "$first" ] || fail "the ETA did not fall: $first s then $last s"
echo "ok: 1 line by default, $n at 500 ms, sweep ETA $first s -> $last s"
