#!/bin/bash
# Saturation on the mock: a sweep 4 -> 64 against an engine with max_num_seqs 16, step time
# 16 ms x running^0.5 and no prefill cost. TPOT rises with concurrency up to 16 (the batch is full
# from there on: the plateau is at 16), requests queue beyond it (TTFT p50 about 0.7 s at 32, where
# 16 wait for one batch of 10 tokens at 64 ms, and 2 s at 64, where 48 wait for three), and the
# TPOT fit over the unsaturated levels recovers the profile's alpha 0.5 within 10 % (steps of 32
# to 64 ms leave room for a loaded machine's timer delays). About 27 s in all.
source "$(dirname "$0")/protocol_lib.sh"

cat >"$WORK/sat.yaml" <<YAML
seed: 9
target: {ignore_eos: true}
workload: {input_tokens: 16, output_tokens: 10}
scheduler: {kind: concurrent}
sweep:
  concurrency: [4, 8, 16, 32, 64]
  warmup: 500ms
  snapshots: {count: 1, duration: 3s}
  drain: 15s
mock:
  profile: default
  max_num_seqs: 16
  tpot_base: 16ms
  alpha: 0.5
  prefill_tokens_per_s: 100000000
  ttft_overhead: 0ms
  prefix_cache: false
YAML
run_bounded 150 "$WORK/table" "$WORK/sat.err" "$WORK/sat.yaml" --workers 1 --out "$WORK/out"
[ "$RUN_RC" = 0 ] || fail "the sweep exited $RUN_RC: $(tail -5 "$WORK/sat.err")"
grep -Eq "TPOT p50 plateau +concurrency 16" "$WORK/table" ||
    fail "the table does not put the TPOT plateau at 16: $(cat "$WORK/table")"
check_results "$WORK/out" <<'PY' || fail "saturation is not where max_num_seqs 16 puts it"
levels = results["levels"]
tpot = [l["tpot_p50_ms"] for l in levels]
assert tpot[0] < tpot[1] < tpot[2], f"TPOT does not rise with concurrency up to 16: {tpot}"
s = results["analysis"]["saturation"]
assert s["tpot_plateau"]["concurrency"] == 16, s
assert s["ttft_p50_over_1s"]["concurrency"] == 64, s
assert s["first_errors"] is None and s["sustained_errors"] is None, s
fits = results["analysis"]["fits"]
assert fits["unsaturated_levels"] == 3, fits
alpha = fits["tpot_unsaturated"]["exponent"]
assert abs(alpha - 0.5) <= 0.05, f"fitted alpha {alpha}, the profile's is 0.5"
assert fits["tpot_unsaturated"]["r2"] > 0.95, fits["tpot_unsaturated"]
# the fit over every level is bent by the plateau
assert fits["tpot"]["exponent"] < alpha, fits["tpot"]
PY
echo "ok: plateau at max_num_seqs 16, TTFT knee at 64, alpha $(json_value "$WORK/out/results.json" 'round(r["analysis"]["fits"]["tpot_unsaturated"]["exponent"], 3)')"
