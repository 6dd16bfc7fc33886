#!/bin/bash
# stampede capacity on the normalised request rate rho (the axis of examples/capacity-slo.yaml,
# case study 3 of the Veeksha write-up), end to end on the embedded mock: chat sessions of 2
# turns, so a level of rho requests/s runs the rate scheduler at rho / 2 sessions/s; the mock
# serves 4 sequences at a time, 10 ms a step, 10-token replies (~0.1 s a request: at most ~40
# requests/s; past that, requests queue for a slot and TTFT p95 leaves its 40 ms). The search
# must find a frontier below that limit with a first failing level above it, within 25 %, each
# level's session rate rho / 2 with its requests measured at about rho, and a confidence that
# says how many runs of each end passed.
source "$(dirname "$0")/protocol_lib.sh"

cat >"$WORK/rho.yaml" <<YAML
seed: 3
target: {api: chat, ignore_eos: true}
workload: {kind: chat, turns: 2, input_tokens: 16, output_tokens: 10, think_time: 0s}
scheduler: {kind: rate, rate: 1/s, arrival: constant}
limits: {duration: 3s}
warmup: 500ms
mock: {max_num_seqs: 4, tpot_base: 10ms, alpha: 0, prefill_tokens_per_s: 100000000,
       ttft_overhead: 0ms, prefix_cache: false}
slo:
  ttft: {p95: 40ms}
  errors: {max_pct: 1}
capacity: {axis: rho, start: 8, precision: 25%, max: 128, repeat_near_boundary: 1}
validity: {max_schedule_lag: 2s}
YAML
timeout 150 "$STAMPEDE" capacity "$WORK/rho.yaml" --workers 1 --out "$WORK/rho" \
    >"$WORK/rho.out" 2>"$WORK/rho.err" || fail "capacity exited $?: $(tail -5 "$WORK/rho.err")"
check_results "$WORK/rho" "$WORK/rho.out" <<'PY' || fail "the rho search is not right: $(tail -8 "$WORK/rho.out")"
c = results["analysis"]["capacity"]
assert c["axis"] == "rho" and c["unit"] == "requests/s" and c["requests_per_session"] == 2, c
assert c["outcome"] == "found", c
front, first = c["frontier"], c["first_failing"]
assert 16 <= front["level"] < 44 and front["level"] < first["level"] <= 64, (front, first)
assert c["precision_relative"] and c["bracket"] <= 0.25 * front["level"] + 1e-9, c
trials = c["trials"]
assert [t["level"] for t in trials][:3] == [8, 16, 32], trials  # exponential probing from 8
# each level ran the rate scheduler at rho / 2 sessions/s, and (when not stopped early) sent
# about rho requests/s
assert [l["rate"] for l in results["levels"]] == [t["level"] / 2 for t in trials], results["levels"]
for t, l in zip(trials, results["levels"]):
    if t["pass"]:
        assert abs(l["requests_per_s"] - t["level"]) <= 0.1 * t["level"], (t, l["requests_per_s"])
runs = lambda lv: [t for t in trials if t["level"] == lv["level"]]
assert front["runs"] == len(runs(front)) >= 2 and first["runs"] == len(runs(first)) >= 2, c
assert front["passes"] == sum(t["pass"] for t in runs(front)), (front, runs(front))
assert first["passes"] == sum(t["pass"] for t in runs(first)), (first, runs(first))
assert front["passes"] * 2 > front["runs"] and first["passes"] * 2 <= first["runs"], c
want = (f"frontier passed {front['passes']} of {front['runs']} runs, first failing level failed "
        f"{first['runs'] - first['passes']} of {first['runs']} runs")
assert c["confidence"] == want, (c["confidence"], want)
b = first["binding"]
assert b == "TTFT p95 <= 40 ms" or (b.startswith("TTFT p95 <= 40 ms lost: ") and b.endswith("may have")), b
out = open(argv[0]).read()
assert f"Capacity (rho, {len(trials)} runs):" in out and f"  confidence: {want}\n" in out, out[-800:]
print(f"ok: rho* = {front['level']:g} requests/s, first failing {first['level']:g}; {want}")
PY
echo "PASS"
