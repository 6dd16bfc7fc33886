#!/bin/bash
# A sweep's repetitions and drain (docs/sweeps.md):
#  - mixed: of three repetitions, the second runs against a mock that fails half its requests
#    (the test swaps the server on the same port between repetitions). It is excluded and counted
#    ("2/3"); the level's figures are pooled over repetitions 1 and 3 only (their counts added,
#    no error of the second), and the mean across repetitions is over those two only;
#  - bounded drain: requests of up to 30 s outlast the window and `drain: 1s`, so the drain is
#    cut (`drain_cut`), what is in flight is cancelled, and the level ends in seconds, not 30.
# ctest: parallel (counts, flags and a bound 2x away from what it measures; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 5
MOCK_PID=${BACKGROUND[-1]}
PORT=${MOCK_URL##*:}
swap_mock() { # options of the next mock on the same port
    kill "$MOCK_PID"
    wait "$MOCK_PID" 2>/dev/null || true
    : >"$WORK/mock-next.out"
    "$STAMPEDE" mock --port "$PORT" --ttft-ms 5 --itl-ms 5 "$@" >"$WORK/mock-next.out" 2>&1 &
    MOCK_PID=$!
    BACKGROUND+=($MOCK_PID)
    wait_for_line "$WORK/mock-next.out" 10 'listening on' >/dev/null ||
        fail "the mock did not start again: $(cat "$WORK/mock-next.out")"
}

cat >"$WORK/mixed.yaml" <<YAML
seed: 4
target: {endpoints: [$MOCK_URL], ignore_eos: true, timeout: 5s}
workload: {input_tokens: 16, output_tokens: 6}
scheduler: {kind: concurrent}
sweep:
  concurrency: [3]
  warmup: 1s
  snapshots: {count: 2, duration: 1s}
  drain: 2s
  repeat: 3
  exclude_error_pct: 5
validity: {max_schedule_lag: 2s}
YAML
# --no-preflight: the mock is swapped while the next repetition is being prepared, and the
# preflight would find its port closed for that moment and stop the sweep
timeout 120 "$STAMPEDE" run "$WORK/mixed.yaml" --workers 1 --allow-invalid --out "$WORK/mixed" \
    --no-preflight >"$WORK/mixed.out" 2>"$WORK/mixed.err" &
RUN_PID=$!
BACKGROUND+=($RUN_PID)
# each repetition announces its end; the next one probes clocks and starts after a warm-up of 1 s
wait_for_line "$WORK/mixed.err" 60 "repetition 1/3:" >/dev/null ||
    fail "repetition 1 did not end: $(tail -5 "$WORK/mixed.err")"
swap_mock --fail-rate 0.5
wait_for_line "$WORK/mixed.err" 60 "repetition 2/3:" >/dev/null ||
    fail "repetition 2 did not end: $(tail -5 "$WORK/mixed.err")"
swap_mock
wait_exit "$RUN_PID" 60
[ "$EXIT_STATUS" = 0 ] || fail "the mixed sweep exited $EXIT_STATUS: $(tail -5 "$WORK/mixed.err")"
check_results "$WORK/mixed" <<'PY' || fail "the level is not pooled over its valid repetitions only"
l = results["levels"][0]
reps = l["repetitions"]
assert [r["excluded"] for r in reps] == [False, True, False], [r["excluded_reason"] for r in reps]
assert "above exclude_error_pct 5" in reps[1]["excluded_reason"], reps[1]["excluded_reason"]
assert reps[1]["window"]["error_pct"] > 20, reps[1]["window"]["error_pct"]
assert l["valid_runs"] == 2 and l["repetitions_run"] == 3 and l["valid_runs_label"] == "2/3", l
assert l["pooled_over"] == "valid"
kept = [reps[0]["window"], reps[2]["window"]]
for key in ("requests_ok", "requests_failed", "output_tokens", "session_starts"):
    assert l[key] == sum(w[key] for w in kept), (key, l[key], [w[key] for w in kept])
assert l["requests_failed"] == 0 and l["error_pct"] == 0, (l["requests_failed"], l["error_pct"])
assert l["ttft_ms"]["count"] == sum(w["ttft_ms"]["count"] for w in kept)
assert abs(l["duration_s"] - 4.0) < 1e-6, l["duration_s"]  # two windows of 2 s
for fig in ("tpot_p50_ms", "ttft_p50_ms", "actual_rps"):
    a = l["across_repetitions"][fig]
    mean = (kept[0][fig] + kept[1][fig]) / 2
    assert a["n"] == 2 and abs(a["mean"] - mean) < 1e-9, (fig, a, mean)
# snapshot_mean averages the kept repetitions' four snapshots
snaps = reps[0]["snapshots"] + reps[2]["snapshots"]
mean = sum(s["ttft_p50_ms"] for s in snaps) / 4
assert abs(l["snapshot_mean"]["ttft_p50_ms"] - mean) < 1e-9, (l["snapshot_mean"], mean)
print(f"ok: 2/3 valid, pooled {l['requests_ok']} ok requests of repetitions 1 and 3")
PY
grep -Eq "^c 3 +2/3 " "$WORK/mixed.out" || fail "the table does not say 2/3: $(cat "$WORK/mixed.out")"

# Requests of 5 ms per token: 19 in 20 of 10 tokens, the others of 6000 (30 s), which outlast a
# window of 1 s and a drain of 1 s: the drain is cut and the level ends about 3 s after its start (bounded
# at 15 s here), the short ones counted.
cat >"$WORK/drain.yaml" <<YAML
seed: 8
target: {endpoints: [$MOCK_URL], ignore_eos: true}
workload:
  input_tokens: 16
  output_tokens: {dist: empirical, values: [10, 6000], weights: [19, 1]}
scheduler: {kind: concurrent}
sweep:
  concurrency: [6]
  warmup: 200ms
  snapshots: {count: 1, duration: 1s}
  drain: 1s
validity: {max_schedule_lag: 2s}
YAML
start=$(date +%s.%N)
run_bounded 60 /dev/null "$WORK/drain.err" "$WORK/drain.yaml" --workers 1 --allow-invalid \
    --out "$WORK/drain"
elapsed=$(python3 -c "import sys, time; print(round(time.time() - float(sys.argv[1]), 1))" "$start")
[ "$RUN_RC" = 0 ] || fail "the drain sweep exited $RUN_RC: $(tail -5 "$WORK/drain.err")"
grep -q "the drain's bound (1 s) ran out" "$WORK/drain.err" ||
    fail "no word of the drain's bound: $(tail -5 "$WORK/drain.err")"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 15 else 1)" "$elapsed" ||
    fail "the sweep took $elapsed s: the drain did not bound the level"
check_results "$WORK/drain" <<'PY' || fail "the cut drain is not recorded (the sweep took $elapsed s)"
l = results["levels"][0]
rep = l["repetitions"][0]
assert rep["drain_cut"] is True and rep["stop_reason"], rep
assert l["requests_ok"] > 0 and l["duration_s"] == 1.0, (l["requests_ok"], l["duration_s"])
assert l["tpot_p50_ms"] < 50, l["tpot_p50_ms"]  # the short requests, at 5 ms per token
PY
echo "ok: 2/3 repetitions pooled over the valid ones; a drain cut at its bound after $elapsed s"
