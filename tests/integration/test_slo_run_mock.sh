#!/bin/bash
# SLOs and goodput on a run against the embedded mock in fixed mode (TTFT 50 ms, then 10 ms a
# token): a regime every request meets passes, goodput is every request and its rate is the run's
# request rate; with 20 % injected failures and an E2E bound that only the shorter replies meet,
# the error SLO fails and binds, and goodput counts exactly the ok requests of the trace within
# the bound. results.json carries analysis.slo and the terminal shows the block. A sweep judges
# each level: with 10 ms of fixed ITL, an ITL p50 bound of 8 ms fails both levels, a p95 of 30 ms
# passes, and goodput (every request within the tail bound) is the level's request rate.
# ctest: parallel (SLO bounds 3x or more away from the fixed mock timings; goodput checked against the trace)
source "$(dirname "$0")/protocol_lib.sh"

common() {
    cat <<YAML
seed: 7
target: {ignore_eos: true}
workload:
  input_tokens: 32
  output_tokens: {dist: uniform, min: 8, max: 24}
scheduler: {kind: concurrent, concurrency: 4}
limits: {duration: 3s}
warmup: 500ms
YAML
}

{
    common
    cat <<YAML
mock: {ttft: 50ms, itl: 10ms}
slo:
  ttfc: {p95: 1s}
  itl: {p95: 100ms}
  errors: {max_pct: 2}
YAML
} >"$WORK/pass.yaml"
run_bounded 60 "$WORK/pass.out" "$WORK/pass.err" "$WORK/pass.yaml" --workers 1 --out "$WORK/pass"
[ "$RUN_RC" = 0 ] || fail "passing run exited $RUN_RC: $(tail -5 "$WORK/pass.err")"
check_results "$WORK/pass" <<'PY' || fail "the passing regime is not judged right"
slo = results["analysis"]["slo"]
assert slo["pass"] is True, slo
assert [c["label"] for c in slo["checks"]] == ["TTFC p95 <= 1000 ms", "ITL p95 <= 100 ms",
                                               "errors <= 2 %"], slo["checks"]
ttfc, itl, errors = slo["checks"]
assert abs(ttfc["value"] - level["ttfc_ms"]["p95"]) < 1e-6, (ttfc, level["ttfc_ms"])
assert abs(itl["value"] - level["itl_ms"]["p95"]) < 1e-6, (itl, level["itl_ms"])
assert abs(ttfc["margin"] - (1000 - ttfc["value"]) / 1000) < 1e-9, ttfc
assert errors["value"] == 0 and errors["margin"] == 1, errors
# the least headroom: ITL ~10 ms of 100 (0.9) against TTFC ~50 of 1000 (0.95) and errors (1)
assert slo["binding"] == "ITL p95 <= 100 ms", slo["binding"]
g = slo["goodput"]
assert g["good_requests"] == g["checked_requests"] == level["requests_ok"], (g, level["requests_ok"])
assert g["attainment_pct"] == 100, g
assert abs(g["requests_per_s"] - level["requests_per_s"]) < 1e-9, (g, level["requests_per_s"])
PY
grep -q "^SLOs: all met$" "$WORK/pass.out" || fail "no SLO block: $(tail -8 "$WORK/pass.out")"

{
    common
    cat <<YAML
mock: {ttft: 50ms, itl: 10ms, fail_rate: 0.2}
output: {trace: true}
slo:
  e2e: {p50: 205ms}
  errors: {max_pct: 2}
YAML
} >"$WORK/fail.yaml"
run_bounded 60 "$WORK/fail.out" "$WORK/fail.err" "$WORK/fail.yaml" --workers 1 --out "$WORK/fail" \
    --allow-invalid
[ "$RUN_RC" = 0 ] || fail "failing run exited $RUN_RC: $(tail -5 "$WORK/fail.err")"
check_results "$WORK/fail" <<'PY' || fail "the failing regime is not judged right"
slo = results["analysis"]["slo"]
assert slo["pass"] is False, slo
e2e, errors = slo["checks"]
assert errors["pass"] is False and abs(errors["value"] - level["error_pct"]) < 1e-9, (errors, level)
assert errors["value"] > 10, errors
assert slo["binding"] == "errors <= 2 %", slo["binding"]
# per request: ok, outside the warm-up, E2E within 205 ms (replies of 16 tokens or fewer)
judged = [r for r in rows if not r["warmup"] and r["error"] != "cancelled"]
good = [r for r in judged if r["error"] == "none" and r["e2e_ms"] <= 205]
g = slo["goodput"]
assert g["checked_requests"] == len(judged), (g, len(judged))
assert g["good_requests"] == len(good), (g, len(good))
assert 0 < len(good) < len([r for r in judged if r["error"] == "none"]), len(good)
PY
grep -q "^SLOs: NOT MET$" "$WORK/fail.out" && grep -q "FAIL errors <= 2 %.*(binding)" "$WORK/fail.out" ||
    fail "the SLO block does not say the error SLO failed: $(tail -6 "$WORK/fail.out")"

cat >"$WORK/sweep.yaml" <<YAML
seed: 9
target: {ignore_eos: true}
workload: {input_tokens: 16, output_tokens: 8}
sweep: {concurrency: [1, 3], warmup: 300ms, snapshots: {count: 1, duration: 1500ms}, drain: 5s}
mock: {ttft: 20ms, itl: 10ms}
slo:
  itl: {p95: 30ms, p50: 8ms}
YAML
run_bounded 60 "$WORK/sweep.out" "$WORK/sweep.err" "$WORK/sweep.yaml" --workers 1 --out "$WORK/sweep"
[ "$RUN_RC" = 0 ] || fail "sweep exited $RUN_RC: $(tail -5 "$WORK/sweep.err")"
python3 - "$WORK/sweep/results.json" <<'PY' || fail "the sweep's levels are not judged"
import json, sys
r = json.load(open(sys.argv[1]))
levels, gathered = r["levels"], r["analysis"]["slo"]
assert [g["concurrency"] for g in gathered] == [1, 3], gathered
for level, g in zip(levels, gathered):
    slo = level["slo"]
    assert slo["pass"] is False and slo["binding"] == "ITL p50 <= 8 ms", slo
    p95, p50 = slo["checks"]
    assert p95["pass"] and not p50["pass"], slo["checks"]
    assert abs(p95["value"] - level["itl_ms"]["p95"]) < 1e-6, (p95, level["itl_ms"])
    assert g["checks"] == slo["checks"], (g, slo)
    good = slo["goodput"]  # per request: mean ITL 10 ms within the p95's 30 ms, so every one
    assert good["good_requests"] == good["checked_requests"] > 0, good
    assert abs(good["requests_per_s"] - level["requests_per_s"]) <= 1e-6 * level["requests_per_s"], (
        good, level["requests_per_s"])
PY
grep -Eq "^  concurrency 3 +FAIL ITL p50 <= 8 ms: " "$WORK/sweep.out" ||
    fail "no SLO line per level: $(tail -4 "$WORK/sweep.out")"
echo "PASS"
