#!/usr/bin/env bash
# A run with no target is served by the embedded mock, and every output says so: results.json's
# served_by {"simulated": true, "profile": ...}, the terminal table's first line, report.md,
# report.html and `stampede compare`. The same workload with --target (a mock of the test's own,
# which stampede cannot tell from a real server) is served_by {"simulated": false} and says
# nothing of a simulation. A sweep on the embedded mock is marked as a run is.
# ctest: parallel (outputs' contents only)
set -euo pipefail
source "$STAMPEDE_SRC/tests/integration/protocol_lib.sh"

cat >"$WORK/run.yaml" <<'YAML'
seed: 2
workload: {input_tokens: 32, output_tokens: 8}
scheduler: {kind: concurrent, concurrency: 2}
limits: {max_requests: 12}
mock: {profile: tp1-fp8}
YAML
run_bounded 60 "$WORK/sim.out" "$WORK/sim.err" "$WORK/run.yaml" --workers 1 --out "$WORK/sim"
[ "$RUN_RC" = 0 ] || fail "the run on the embedded mock exited $RUN_RC: $(tail -5 "$WORK/sim.err")"
assert_equal "served_by" "$(json_value "$WORK/sim/results.json" 'json.dumps(r["served_by"], sort_keys=True)')" \
    '{"profile": "tp1-fp8", "simulated": true}'
first=$(grep -m1 '^stampede results' "$WORK/sim.out")
case "$first" in
*"simulated server (profile tp1-fp8)"*) ;;
*) fail "the table's first line does not say simulated: '$first'" ;;
esac
grep -qF '**Server:** simulated server (profile tp1-fp8)' "$WORK/sim/report.md" ||
    fail "report.md does not say simulated server"
grep -qF 'simulated server (profile tp1-fp8)' "$WORK/sim/report.html" ||
    fail "report.html does not say simulated server"

start_mock --profile tp1-fp8
run_bounded 60 "$WORK/real.out" "$WORK/real.err" "$WORK/run.yaml" --workers 1 \
    --target "$MOCK_URL" --out "$WORK/real"
[ "$RUN_RC" = 0 ] || fail "the run with --target exited $RUN_RC: $(tail -5 "$WORK/real.err")"
assert_equal "served_by with --target" \
    "$(json_value "$WORK/real/results.json" 'json.dumps(r["served_by"])')" '{"simulated": false}'
if grep -qi "simulated" "$WORK/real.out" "$WORK/real/report.md" "$WORK/real/report.html"; then
    fail "a run with --target says simulated"
fi

timeout 30 "$STAMPEDE" compare "$WORK/real" "$WORK/sim" >"$WORK/compare.md" 2>&1 ||
    fail "compare exited $?: $(tail -3 "$WORK/compare.md")"
grep -qE '^\| sim \| run, simulated server \(profile tp1-fp8\) \|' "$WORK/compare.md" ||
    fail "compare does not mark the simulated run: $(grep '^| ' "$WORK/compare.md" | head -4)"
grep -qE '^\| real \| run \|' "$WORK/compare.md" || fail "compare marks the real run"
timeout 30 "$STAMPEDE" compare --format json "$WORK/real" "$WORK/sim" >"$WORK/compare.json" 2>&1 ||
    fail "compare --format json exited $?"
python3 - "$WORK/compare.json" <<'PY' || fail "compare --format json does not mark the simulated run"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert [r["simulated"] for r in runs] == [False, True], runs
assert runs[1]["simulated_profile"] == "tp1-fp8", runs
PY

cat >"$WORK/sweep.yaml" <<'YAML'
seed: 2
workload: {input_tokens: 32, output_tokens: 8}
scheduler: {kind: concurrent}
sweep:
  concurrency: [1]
  warmup: 200ms
  snapshots: {count: 1, duration: 400ms}
  drain: 1s
YAML
run_bounded 60 "$WORK/sweep.out" "$WORK/sweep.err" "$WORK/sweep.yaml" --workers 1 \
    --out "$WORK/sweep"
[ "$RUN_RC" = 0 ] || fail "the sweep exited $RUN_RC: $(tail -5 "$WORK/sweep.err")"
assert_equal "the sweep's served_by" \
    "$(json_value "$WORK/sweep/results.json" 'json.dumps(r["served_by"], sort_keys=True)')" \
    '{"profile": "default", "simulated": true}'
[ "$(head -1 "$WORK/sweep.out")" = "stampede sweep - simulated server (profile default)" ] ||
    fail "the sweep table's first line: '$(head -1 "$WORK/sweep.out")'"
grep -qF '**Server:** simulated server (profile default)' "$WORK/sweep/report.md" ||
    fail "the sweep's report.md does not say simulated server"
echo "PASS"
