#!/bin/bash
# ctest: parallel (bounds of seconds and verdicts far from their SLOs: no tight timing)
# stampede capacity's other forms on the embedded mock (the search's convergence on a known limit
# is test_capacity_mock.sh): a server failing 30 % of requests against an error budget of 2 %:
# every level is stopped early, and the search ends with nothing passing; then the controller
# form (--bind, a `stampede worker` of its own, --target a fixed-time mock) searching a range that
# passes entirely.
source "$(dirname "$0")/protocol_lib.sh"

cat >"$WORK/errors.yaml" <<YAML
seed: 5
target: {ignore_eos: true}
workload: {input_tokens: 16, output_tokens: 2}
limits: {duration: 8s}
warmup: 500ms
mock: {ttft: 5ms, itl: 5ms, fail_rate: 0.3}
slo:
  errors: {max_pct: 2}
capacity: {axis: concurrency, start: 4, precision: 1, max: 4, repeat_near_boundary: 0}
YAML
start=$(date +%s)
timeout 100 "$STAMPEDE" capacity "$WORK/errors.yaml" --workers 1 --out "$WORK/errors" \
    >"$WORK/errors.out" 2>"$WORK/errors.err" || true
elapsed=$(($(date +%s) - start))
check_results "$WORK/errors" <<'PY' || fail "the levels were not stopped early: $(tail -5 "$WORK/errors.err")"
c = results["analysis"]["capacity"]
assert c["outcome"] == "none_passes" and c["frontier"] is None, c
assert [t["level"] for t in c["trials"]] == [4, 2, 1], c["trials"]
for t in c["trials"]:
    assert t["stopped_early"] and not t["pass"], t
    assert t["reason"].startswith("errors <= 2 % lost: "), t
assert all(l["stopped_early"] for l in results["levels"]), results["levels"]
PY
# three 8 s levels run to the end would take 25 s and more
[ "$elapsed" -lt 22 ] || fail "the early stops saved no time: $elapsed s"
grep -q "3 levels stopped early once an SLO was clearly lost" "$WORK/errors.out" ||
    fail "the summary does not say the levels stopped early: $(tail -6 "$WORK/errors.out")"

start_mock --ttft-ms 5 --itl-ms 5
cat >"$WORK/remote.yaml" <<YAML
target: {ignore_eos: true}
workload: {input_tokens: 16, output_tokens: 8}
limits: {duration: 1500ms}
warmup: 300ms
slo:
  e2e: {p95: 500ms}
capacity: {axis: concurrency, start: 2, precision: 1, max: 4, repeat_near_boundary: 1}
YAML
"$STAMPEDE" capacity "$WORK/remote.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 1 \
    --target "$MOCK_URL" --out "$WORK/remote" >"$WORK/remote.out" 2>"$WORK/remote.err" &
CONTROLLER_PID=$!
BACKGROUND+=($CONTROLLER_PID)
endpoint=$(wait_for_line "$WORK/remote.err" 10 'tcp://127\.0\.0\.1:[0-9]+') ||
    fail "capacity --bind did not listen: $(cat "$WORK/remote.err")"
start_worker "$WORK/worker.err" --connect "$endpoint" --id remote-0
wait_controller 60
[ "$CONTROLLER_RC" = 0 ] || fail "capacity --bind exited $CONTROLLER_RC: $(tail -5 "$WORK/remote.err")"
check_results "$WORK/remote" <<'PY' || fail "the controller form did not search"
c = results["analysis"]["capacity"]
assert c["outcome"] == "max_passes" and c["first_failing"] is None, c
assert c["frontier"] == {"level": 4, "passes": 2, "runs": 2}, c["frontier"]
assert [t["level"] for t in c["trials"]] == [2, 4, 4], c["trials"]
PY
grep -q "every level up to max 4 sessions met the SLOs" "$WORK/remote.out" ||
    fail "the summary does not say the range passed: $(tail -5 "$WORK/remote.out")"
echo "PASS"
