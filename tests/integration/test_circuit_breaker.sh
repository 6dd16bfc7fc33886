#!/bin/bash
# limits.max_error_pct, the circuit breaker, against a mock failing half its requests with HTTP
# 500 (`--faults 500:0.5`):
#  - a single run (max_requests 3000, concurrency 4, max_error_pct 10) stops soon after the
#    breaker's 50-request sample: the terminal says "circuit breaker"; results.json's stop_reason
#    names it with the counts; the run is invalid (validity.reasons; exit 3) and partial; far
#    fewer than 3000 requests ran; the failures are http_500 and stay out of the latencies;
#  - the same run with max_error_pct 90 is not stopped (stop_reason max_requests reached, exit 0);
#  - a sweep of two concurrency levels (5 s windows) with max_error_pct 10 stops each level's
#    repetition early with the breaker's reason, and still runs the second level;
#  - a max_error_pct out of (0, 100) is refused naming file:line:key.
# ctest: parallel (counts and reasons; the only time bound is the sweep's 5 s windows)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 2 --itl-ms 1 --seed 7 --faults 500:0.5
single() { # FILE MAX_ERROR_PCT
    cat >"$1" <<YAML
seed: 3
target: {ignore_eos: true}
workload: {kind: requests, input_tokens: 8, output_tokens: 8}
scheduler: {kind: concurrent, concurrency: 4}
limits: {max_requests: 3000, max_error_pct: $2}
YAML
}
single "$WORK/trip.yaml" 10
run_bounded 120 "$WORK/t1" "$WORK/e1" "$WORK/trip.yaml" --workers 2 --target "$MOCK_URL" \
    --out "$WORK/trip" --trace
assert_equal "exit status (breaker tripped: invalid)" "$RUN_RC" 3
grep -q "circuit breaker: [0-9]* of [0-9]* requests failed" "$WORK/e1" ||
    fail "the terminal does not say the breaker stopped the run: $(tail -5 "$WORK/e1")"
check_results "$WORK/trip" <<'PY'
stop = results["run"]["stop_reason"]
assert stop.startswith("circuit breaker: ") and "max_error_pct 10 %" in stop, stop
n = int(re.search(r"of (\d+) requests", stop).group(1))
assert n >= 50, f"tripped after {n} requests, before the 50-request sample"
v = results["validity"]
assert not v["valid"] and any("circuit breaker" in r for r in v["reasons"]), v
assert results["partial"], "a stopped run is partial"
done = level["requests_ok"] + level["requests_failed"]
assert done < 1000, f"{done} requests finished: the breaker did not stop the run"
assert set(k for k, c in level["errors"].items() if c) == {"http_500"}, level["errors"]
assert level["ttft_ms"]["count"] == level["requests_ok"], level["ttft_ms"]
print(f"stopped: {stop}; {done} finished, {level['requests_cancelled']} cancelled")
PY

single "$WORK/hold.yaml" 90
run_bounded 120 "$WORK/t2" "$WORK/e2" "$WORK/hold.yaml" --workers 2 --target "$MOCK_URL" \
    --out "$WORK/hold"
assert_equal "exit status (under the breaker's threshold)" "$RUN_RC" 0
grep -q "circuit breaker" "$WORK/e2" && fail "the breaker tripped at 90 %: $(grep breaker "$WORK/e2")"
assert_equal "stop_reason" "$(json_value "$WORK/hold/results.json" 'r["run"]["stop_reason"]')" \
    "max_requests reached"

cat >"$WORK/sweep.yaml" <<YAML
seed: 3
target: {ignore_eos: true}
workload: {kind: requests, input_tokens: 8, output_tokens: 8}
scheduler: {kind: concurrent}
limits: {max_error_pct: 10}
sweep:
  concurrency: [2, 4]
  warmup: 0s
  snapshots: {count: 1, duration: 5s}
  drain: 5s
validity: {max_schedule_lag: 2s}
YAML
run_bounded 120 "$WORK/t3" "$WORK/e3" "$WORK/sweep.yaml" --workers 2 --target "$MOCK_URL" \
    --out "$WORK/sweep"
[ "$(grep -c "circuit breaker" "$WORK/e3")" -ge 2 ] ||
    fail "the breaker did not stop both levels: $(grep -i "level\|breaker" "$WORK/e3" | head)"
check_results "$WORK/sweep" <<'PY'
levels = results["levels"]
assert [l["concurrency"] for l in levels] == [2, 4], "the sweep did not go on to its next level"
for l in levels:
    rep = l["repetitions"][0]
    assert rep["stopped_early"], (l["concurrency"], rep)
    assert rep["stop_reason"].startswith("circuit breaker: "), rep["stop_reason"]
    assert any("circuit breaker" in r for r in rep["validity"]["reasons"]), rep["validity"]
    assert rep["window"]["requests_failed"] > 0, rep["window"]
print("sweep:", [(l["concurrency"], l["repetitions"][0]["stop_reason"]) for l in levels])
PY

single "$WORK/bad.yaml" 150
run_bounded 30 /dev/null "$WORK/e4" "$WORK/bad.yaml" --workers 1 --target "$MOCK_URL" --out "$WORK/bad"
[ "$RUN_RC" -ne 0 ] || fail "max_error_pct 150 was accepted"
grep -q "bad.yaml:5.*limits.max_error_pct.*150" "$WORK/e4" || fail "message: $(cat "$WORK/e4")"
echo "ok: the circuit breaker stops a run and each sweep level, says why, and the sweep goes on"
