#!/usr/bin/env bash
# A run and a sweep in which every request fails (the embedded mock answers 500 to all) print no
# "nan" and no "inf" anywhere: not on the terminal, not in the progress and level lines, not in
# results.json, report.md, report.html, results.csv, the trace, nor in `stampede compare` and
# `stampede report` of them. A figure with no sample is "-" or "—" (or null in JSON).
# ctest: parallel (outputs' contents only)
set -euo pipefail
source "$STAMPEDE_SRC/tests/integration/protocol_lib.sh"

cat >"$WORK/run.yaml" <<'YAML'
seed: 1
workload: {input_tokens: 32, output_tokens: 8}
scheduler: {kind: concurrent, concurrency: 2}
limits: {duration: 1s}
mock: {fail_rate: 1}
YAML
run_bounded 60 "$WORK/run.out" "$WORK/run.err" "$WORK/run.yaml" --workers 1 --trace \
    --allow-invalid --out "$WORK/run"
[ -s "$WORK/run/results.json" ] || fail "the run wrote no results.json (exit $RUN_RC)"
assert_equal "ok requests" "$(json_value "$WORK/run/results.json" 'l["requests_ok"]')" 0
[ "$(json_value "$WORK/run/results.json" 'l["requests_failed"]')" -gt 0 ] ||
    fail "no request failed: the mock's fail_rate did not apply"

cat >"$WORK/sweep.yaml" <<'YAML'
seed: 1
workload: {input_tokens: 32, output_tokens: 8}
scheduler: {kind: concurrent}
mock: {fail_rate: 1}
sweep:
  concurrency: [1]
  warmup: 200ms
  snapshots: {count: 1, duration: 500ms}
  drain: 1s
YAML
run_bounded 60 "$WORK/sweep.out" "$WORK/sweep.err" "$WORK/sweep.yaml" --workers 1 \
    --allow-invalid --out "$WORK/sweep"
[ -s "$WORK/sweep/results.json" ] || fail "the sweep wrote no results.json (exit $RUN_RC)"
grep -q "level 1 done: .*TTFT p50 - ms" "$WORK/sweep.err" ||
    fail "the sweep's level line does not say '-' for a TTFT with no sample: $(grep 'done' "$WORK/sweep.err")"

timeout 30 "$STAMPEDE" compare "$WORK/run" "$WORK/sweep" >"$WORK/compare.out" 2>&1 ||
    fail "stampede compare exited $?: $(tail -3 "$WORK/compare.out")"
timeout 30 "$STAMPEDE" report "$WORK/run" "$WORK/sweep" >"$WORK/report.out" 2>&1 ||
    fail "stampede report exited $?: $(tail -3 "$WORK/report.out")"
[ -s "$WORK/run/report.html" ] && [ -s "$WORK/sweep/results.csv" ] || fail "reports missing"

found=$(grep -rnIiwE 'nan|-nan|inf|-inf' "$WORK/run.out" "$WORK/run.err" "$WORK/sweep.out" \
    "$WORK/sweep.err" "$WORK/compare.out" "$WORK/report.out" "$WORK/run" "$WORK/sweep" |
    grep -v '/mock.log:' | head -5 || true)
[ -z "$found" ] || fail "an output prints nan or inf: $found"
echo "PASS"
