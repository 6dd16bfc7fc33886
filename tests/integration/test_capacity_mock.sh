#!/bin/bash
# stampede capacity on the embedded mock, whose limit is known: with max_num_seqs 8, a fixed
# 10 ms step (alpha 0, prefill instant) and 40-token replies, up to 8 sessions in flight every
# request starts at once (TTFT ~ one or two steps, 10-20 ms), and from 9 on requests wait for a
# slot (hundreds of ms for some). The search over concurrency with TTFT p95 <= 40 ms must end on
# frontier 8 and first failing level 9, each run twice, within the precision 1. (The early stops
# and the controller form are test_capacity_mock_forms.sh, which asserts no tight timing.)
source "$(dirname "$0")/protocol_lib.sh"

cat >"$WORK/limit.yaml" <<YAML
seed: 3
target: {ignore_eos: true}
workload: {input_tokens: 16, output_tokens: 40}
limits: {duration: 1500ms}
warmup: 300ms
mock: {max_num_seqs: 8, tpot_base: 10ms, alpha: 0, prefill_tokens_per_s: 100000000,
       ttft_overhead: 0ms, prefix_cache: false}
slo:
  ttft: {p95: 40ms}
  errors: {max_pct: 1}
capacity: {axis: concurrency, start: 1, precision: 1, max: 64, repeat_near_boundary: 1}
YAML
timeout 150 "$STAMPEDE" capacity "$WORK/limit.yaml" --workers 1 --out "$WORK/limit" \
    >"$WORK/limit.out" 2>"$WORK/limit.err" || fail "capacity exited $?: $(tail -5 "$WORK/limit.err")"
check_results "$WORK/limit" <<'PY' || fail "the search did not converge on the mock's limit"
c = results["analysis"]["capacity"]
assert c["axis"] == "concurrency" and c["outcome"] == "found", c
assert c["frontier"] == {"level": 8, "passes": 2, "runs": 2}, c["frontier"]
assert c["first_failing"]["level"] == 9 and c["first_failing"]["passes"] == 0, c["first_failing"]
assert c["first_failing"]["binding"] == "TTFT p95 <= 40 ms", c["first_failing"]
assert c["bracket"] <= c["precision"] == 1, c
levels = [t["level"] for t in c["trials"]]
assert levels[:5] == [1, 2, 4, 8, 16], levels  # exponential probing
assert len(levels) <= 12, levels
slo = results["analysis"]["slo"]
assert [s["concurrency"] for s in slo] == levels, (slo, levels)
assert all(s["pass"] == (s["concurrency"] <= 8) for s in slo), [(s["concurrency"], s["pass"]) for s in slo]
assert all(s["goodput"]["checked_requests"] > 0 for s in slo), slo
# every level the search ran is a level of the sweep document, in the same order
assert [l["concurrency"] for l in results["levels"]] == levels, results["levels"]
PY
grep -q "frontier (highest passing):  concurrency 8 sessions" "$WORK/limit.out" &&
    grep -q "first failing:               concurrency 9 sessions (binding: TTFT p95 <= 40 ms)" \
        "$WORK/limit.out" || fail "no capacity summary: $(tail -8 "$WORK/limit.out")"
echo "PASS"
