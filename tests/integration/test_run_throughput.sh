#!/bin/bash
# Throughput with a warm-up and a duration limit: `stampede run` with 2 workers, 8 slots, against
# a fixed-mode mock (TTFT 10 ms, ITL 20 ms, 50 tokens per reply, ignore_eos). Every slot is busy
# for the whole measured window [start + warmup, start + duration], so the truth follows from the
# mock's timing alone: each slot delivers 50 tokens and completes 1 request every
# 10 + 49 x 20 = 990 ms. output_tokens_per_s and requests_per_s must be within 3 % of it although
# requests sent during the warm-up keep streaming into the window and the last ones drain after it.
source "$(dirname "$0")/protocol_lib.sh"

CONCURRENCY=8
TTFT_MS=10
ITL_MS=20
TOKENS=50
start_mock --ttft-ms "$TTFT_MS" --itl-ms "$ITL_MS"

# ramp_up spreads the slots' phases over one request time, so completions are spread evenly and
# the count inside the window is off by at most about one per worker instead of one per slot.
write_workload "$WORK/throughput.yaml" seed=3 ignore_eos=true input_tokens=16 \
    output_tokens="$TOKENS" concurrency="$CONCURRENCY" ramp_up=1s warmup=2s duration=10s

run_bounded 90 "$WORK/table" "$WORK/run.err" "$WORK/throughput.yaml" --workers 2 \
    --target "$MOCK_URL" --out "$WORK/out"
[ "$RUN_RC" = 0 ] || fail "stampede run exited $RUN_RC: $(tail -5 "$WORK/run.err")"
R="$WORK/out/results.json"
[ -f "$R" ] || fail "no results.json"

read -r cycle_s tok_truth req_truth < <(python3 -c "
c, ttft, itl, n = $CONCURRENCY, $TTFT_MS, $ITL_MS, $TOKENS
cycle = (ttft + (n - 1) * itl) / 1000
print(cycle, c * n / cycle, c / cycle)")
tok=$(json_value "$R" 'l["output_tokens_per_s"]')
req=$(json_value "$R" 'l["requests_per_s"]')
duration=$(json_value "$R" 'l["duration_s"]')
echo "window $duration s; output $tok tok/s (truth $tok_truth); $req req/s (truth $req_truth)"

# the window is exactly warmup .. duration, not stretched by the drain after it
assert_within "duration_s" "$duration" 8 0.001
assert_within "output_tokens_per_s" "$tok" "$tok_truth" 0.03
assert_within "requests_per_s" "$req" "$req_truth" 0.03
# the per-endpoint block (one endpoint here) divides the same window
assert_within "per_endpoint output_tokens_per_s" \
    "$(json_value "$R" 'list(l["per_endpoint"].values())[0]["output_tokens_per_s"]')" "$tok" 1e-9
# latency statistics still leave the warm-up requests out: E2E is the mock's request time
assert_within "E2E mean (ms)" "$(json_value "$R" 'l["e2e_ms"]["mean"]')" \
    "$(python3 -c "print($cycle_s * 1000)")" 0.03
[ "$(json_value "$R" 'l["requests_warmup"] > 0')" = True ] || fail "no warm-up request counted"
echo "ok: $tok tok/s and $req req/s within 3 % of $tok_truth and $req_truth"
