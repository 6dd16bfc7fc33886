#!/bin/bash
# `stampede controller SWEEP.yaml --metrics-listen 127.0.0.1:0 --metrics-prefix x_` with two
# long-lived workers: scraped during each level of a two-level sweep (concurrency 2, then 3),
#  - every series carries the prefix (no stampede_ name at all), and promtool has nothing to say;
#  - the x_level gauge is the level being run (2, then 3), and the request counters carry the
#    numeric level label ("2", then "3" beside the first level's "2");
#  - x_workers_connected is 2 and x_workers_lost 0, until a worker is killed during the second
#    level: then x_workers_lost is 1 and x_workers_connected 1 (only the gauges are asserted: what
#    the run makes of a lost worker is the reliability tests').
# ctest: parallel (scrapes and their content only; the bounds are several times what they wait)
source "$(dirname "$0")/protocol_lib.sh"
command -v promtool >/dev/null || fail "promtool is not installed (Debian prometheus)"

start_mock --ttft-ms 20 --itl-ms 5
cat >"$WORK/sweep.yaml" <<YAML
seed: 9
target: {endpoints: [$MOCK_URL], ignore_eos: true}
workload: {input_tokens: 16, output_tokens: 8}
scheduler: {kind: concurrent}
sweep:
  concurrency: [2, 3]
  warmup: 300ms
  snapshots: {count: 2, duration: 6s}
  drain: 3s
YAML

# A bad prefix: a clear error naming the flag, non-zero exit, before any worker is awaited.
rc=0
timeout 20 "$STAMPEDE" controller "$WORK/sweep.yaml" --bind 'tcp://127.0.0.1:*' \
    --expect-workers 1 --metrics-listen 127.0.0.1:0 --metrics-prefix 'x:' 2>"$WORK/bad.err" ||
    rc=$?
[ "$rc" = 1 ] && grep -q -- "--metrics-prefix 'x:' is not a metric name prefix" "$WORK/bad.err" ||
    fail "--metrics-prefix x: exit $rc, $(cat "$WORK/bad.err")"

start_controller "$WORK/ctl.err" "$WORK/sweep.yaml" --bind 'tcp://127.0.0.1:*' \
    --expect-workers 2 --out "$WORK/out" --register-timeout 30 --allow-invalid \
    --metrics-listen 127.0.0.1:0 --metrics-prefix x_
addr=$(wait_for_line "$WORK/ctl.err" 20 'metrics on http://[0-9.]+:[0-9]+/metrics') ||
    fail "no metrics address on the controller's stderr: $(tail -5 "$WORK/ctl.err")"
URL=${addr#metrics on }
start_worker "$WORK/a.err" --connect "$CONTROLLER_EP" --id a
start_worker "$WORK/b.err" --connect "$CONTROLLER_EP" --id b
B=$WORKER_PID

# The value of a sample (as a number: 2, not 2.0) (name and exact label text) in scrape file $1, empty when absent.
sample() {
    awk -v key="$2" 'substr($0, 1, length(key) + 1) == key " " {print $NF + 0; exit}' "$1"
}
# Scrapes into $WORK/$1 every 0.2 s, at most $2 seconds, until the awk condition $3 holds.
scrape_until() {
    local i
    for ((i = 0; i < $2 * 5; i++)); do
        if curl -s --max-time 5 -o "$WORK/$1" "$URL" && awk "$3 {found = 1} END {exit !found}" "$WORK/$1"; then
            return 0
        fi
        kill -0 "$CONTROLLER_PID" 2>/dev/null || fail "the controller exited before $1: $(tail -5 "$WORK/ctl.err")"
        sleep 0.2
    done
    fail "no scrape within $2 s for $1 ($3): $(grep -v '^#' "$WORK/$1" | grep -v bucket | head -20)"
}

# Level 1 (concurrency 2), once requests have finished in it.
scrape_until level2 60 '$1 == "x_level" && $2 == 2 {l = 1} /^x_requests_total\{.*level="2".*outcome="ok"/ && $NF > 0 {r = 1} l && r'
assert_equal "x_workers_connected during level 2" "$(sample "$WORK/level2" x_workers_connected)" 2
assert_equal "x_workers_lost during level 2" "$(sample "$WORK/level2" x_workers_lost)" 0
# Level 2 (concurrency 3): the gauge moves, the counters get the new label beside the old.
scrape_until level3 60 '$1 == "x_level" && $2 == 3 {l = 1} /^x_requests_total\{.*level="3".*outcome="ok"/ && $NF > 0 {r = 1} l && r'
grep -q '^x_requests_total{.*level="2".*outcome="ok"' "$WORK/level3" ||
    fail "the first level's series are gone in the second level's scrape"
assert_equal "x_workers_lost before the kill" "$(sample "$WORK/level3" x_workers_lost)" 0

# A worker lost during the level: killed, it stops answering; the gauges say so. Killed at once,
# before the scrapes are linted: the loss must be seen while the level still runs, and two
# promtool runs on a loaded machine ate into that.
kill -KILL "$B"
wait "$B" 2>/dev/null || true
scrape_until lost 30 '$1 == "x_workers_lost" && $2 == 1 {l = 1} $1 == "x_workers_connected" && $2 == 1 {c = 1} l && c'
[ "$(sample "$WORK/lost" x_level)" = 3 ] || fail "the level gauge left 3 when the worker was lost"

for f in level2 level3; do
    lint=$(promtool check metrics <"$WORK/$f" 2>&1) || fail "promtool check metrics ($f): $lint"
    [ -z "$lint" ] || fail "promtool has something to say about $f: $lint"
    ! grep -q '^stampede_\|^# [A-Z]* stampede_' "$WORK/$f" || fail "$f has unprefixed names"
    for name in x_requests_total x_ttft_seconds_bucket x_ttft_window_seconds x_in_flight_requests \
        x_level x_workers_connected x_workers_lost x_output_tokens_total; do
        grep -q "^$name" "$WORK/$f" || fail "no $name in $f"
    done
done
wait_controller 60
echo "ok: x_level 2 then 3, level labels 2 and 3, workers lost 0 then 1 (controller exit $CONTROLLER_RC)"
