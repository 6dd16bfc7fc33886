#!/bin/bash
# Server telemetry against a real mock: `server_metrics: auto` scrapes the mock's own /metrics at
# the window's edges and every scrape_interval. A run of a known number of requests finds exactly
# its own requests and tokens in the server block, also on a second run over the same mock (the
# counters are cumulative; the deltas are not), the client-vs-server gap compares the same
# counts, what the mock does not expose (GPU figures) is null, never 0, and the run stays valid.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 20 --itl-ms 4
for n in 1 2; do
    cat >"$WORK/run$n.yaml" <<YAML
target: {endpoints: [$MOCK_URL], ignore_eos: true}
workload: {kind: requests, input_tokens: 24, output_tokens: 12}
scheduler: {kind: concurrent, concurrency: 4}
limits: {max_requests: $((30 * n))}
server_metrics: auto
scrape_interval: 100ms
YAML
    run_bounded 120 "$WORK/run$n.out" "$WORK/run$n.err" "$WORK/run$n.yaml" --workers 1 \
        --out "$WORK/out$n"
    [ "$RUN_RC" = 0 ] || fail "run $n exited $RUN_RC: $(tail -5 "$WORK/run$n.err")"
    check_results "$WORK/out$n" $((30 * n)) <<'PY' || fail "run $n: the server block is wrong"
n = int(argv[0])
s = level["server"]
page = s["pages"][0]
assert page["dialect"] == "vllm" and page["error"] is None, page
assert page["endpoint"] == s["endpoints"][0]["url"], (page["endpoint"], s["endpoints"])
# exactly this run's requests and tokens, not the mock's totals since it started
assert page["requests"] == n, (page["requests"], n)
assert page["generation_tokens"] == 12 * n, page["generation_tokens"]
assert page["ttft"]["count"] == n and page["e2e"]["count"] == n, (page["ttft"], page["e2e"])
# the mock's TTFT is 20 ms: the server's mean says so, and its p50 is interpolated inside vLLM's
# (10, 20] ms bucket (le is inclusive), never outside the bucket that holds the observations
assert 20 <= page["ttft"]["mean_ms"] < 25, page["ttft"]
assert 10 < page["ttft"]["p50_estimate_ms"] <= 20 or 20 < page["ttft"]["p50_estimate_ms"] <= 40, page["ttft"]
assert page["generation_tokens_per_s"] > 0 and page["running"]["samples"] >= 2, page
assert s["total"]["requests"] == n
gap = level["gap"]["endpoints"][0]
assert gap["requests"]["client"] == n and gap["requests"]["server"] == n, gap["requests"]
assert gap["output_tokens"]["client"] == gap["output_tokens"]["server"] == 12 * n, gap
assert gap["prompt_tokens"]["client"] == gap["prompt_tokens"]["server"] == page["prompt_tokens"] > 0, gap
# the client sees the server's TTFT plus the network: its mean is the larger
assert gap["ttft"]["client_mean_ms"] >= gap["ttft"]["server_mean_ms"] - 0.5, gap["ttft"]
a = gap["ttft_attribution"]
parts = a["client_queue_ms"] + a["network_ms"] + a["server_queue_ms"] + a["prefill_ms"] + a["server_other_ms"]
assert abs(parts - a["ttft_from_intended_mean_ms"]) < 0.5, a
# what the mock does not expose is absent, never zero
assert s["gpu"]["energy_j"] is None and s["gpu"]["joules_per_output_token"] is None, s["gpu"]
assert s["gpu"]["gpu_util_pct"] is None, s["gpu"]
assert s["guard"] == {"shared": False, "shared_reason": None, "restarted": False,
                      "restarted_reason": None}, s["guard"]
assert results["validity"]["valid"], results["validity"]
PY
    grep -q '^Server metrics' "$WORK/run$n.out" || fail "run $n printed no server table"
    grep -q '^Client vs server' "$WORK/run$n.out" || fail "run $n printed no gap table"
done
grep -q '^server_metrics: auto$' "$WORK/out1/config.yaml" ||
    fail "config.yaml lacks server_metrics: $(cat "$WORK/out1/config.yaml")"
echo "PASS"
