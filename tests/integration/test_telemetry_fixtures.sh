#!/bin/bash
# Pages of the test's own (tests/integration/metrics_fixture_server.py): an SGLang-named page and
# a Dynamo-named page given as server_metrics, and a DCGM exporter page given as gpu_metrics, are
# read and give the figures their deltas imply: request and token counts, the prefix-cache hit
# rate, TTFT and ITL percentiles interpolated in their buckets, gauges, GPU utilisation, power,
# memory and joules per output token from the energy counter's delta. What a page does not expose
# (SGLang and Dynamo have no per-request TPOT, queue or prefill histograms) is null. The load
# itself goes to a mock; scrape_interval is longer than the run, so each page is read exactly
# twice: at the window's opening (page A) and at its end (page B). A DCGM page with DCGM's blank
# sentinels and a MIG GPU gives absent utilisation and power and the right energy.
# ctest: parallel (fixture pages with exact figures)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 2
# check_page KIND KEY WHAT [YAML LINE] <<'PY' (checks): serves metrics_fixture_server.py's KIND
# pages, runs 40 requests on the mock with the page as KEY (server_metrics or gpu_metrics) and the
# further line, and checks the results with the Python on stdin, which has near(a, b), p (the
# first server page) and g (the GPU figures) bound; fails saying the WHAT page gave wrong figures.
check_page() {
    local kind=$1 key=$2 what=$3
    start_test_server metrics_fixture_server.py "$kind" "$kind"
    cat >"$WORK/$kind.yaml" <<YAML
target: {endpoints: [$MOCK_URL], ignore_eos: true}
workload: {kind: requests, input_tokens: 16, output_tokens: 8}
scheduler: {kind: concurrent, concurrency: 4}
limits: {max_requests: 40}
scrape_interval: 60s
$key: [$URL/metrics]
${4:-}
YAML
    run_bounded 120 "$WORK/$kind.out" "$WORK/$kind.err" "$WORK/$kind.yaml" --workers 1 --out "$WORK/$kind"
    [ "$RUN_RC" = 0 ] || fail "$kind: run exited $RUN_RC: $(tail -5 "$WORK/$kind.err")"
    {
        cat <<'PY'
server = level["server"]
p = (server.get("pages") or [None])[0]
g = server.get("gpu")
near = lambda a, b: a is not None and abs(a - b) < 1e-6
PY
        cat
    } | check_results "$WORK/$kind" || fail "the $what page gave wrong figures"
}

check_page sglang server_metrics SGLang <<'PY'
assert p["dialect"] == "sglang" and p["error"] is None, p
assert p["requests"] == 40 and p["prompt_tokens"] == 4000 and p["generation_tokens"] == 800, p
assert near(p["prefix_cache_hit_rate"], 0.25), p["prefix_cache_hit_rate"]  # 1000 cached / 4000
t = p["ttft"]
assert t["count"] == 40 and near(t["mean_ms"], 62.5), t
assert near(t["p50_estimate_ms"], 50.0) and near(t["p90_estimate_ms"], 90.0), t  # 20 in (0, 50], 20 in (50, 100]
i = p["itl"]  # read from the older name sglang:time_per_output_token_seconds
assert i["count"] == 760 and near(i["mean_ms"], 10.0) and near(i["p50_estimate_ms"], 10.0), i
assert p["tpot"] is None and p["queue"] is None and p["prefill"] is None, p
assert near(p["kv_usage_pct"]["mean"], 20.0) and near(p["kv_usage_pct"]["max"], 30.0), p
assert near(p["running"]["max"], 4.0) and near(p["waiting"]["max"], 2.0), p
gap = level["gap"]["endpoints"][0]
assert gap["tpot"]["server_from"] == "itl" and near(gap["tpot"]["server_p50_estimate_ms"], 10.0), gap
assert gap["ttft_attribution"]["server_queue_ms"] is None, gap["ttft_attribution"]
assert gap["requests"]["server"] == 40 and gap["requests"]["client"] == 40, gap["requests"]
PY

check_page dynamo server_metrics Dynamo <<'PY'
assert p["dialect"] == "dynamo" and p["error"] is None, p
assert p["requests"] == 40 and p["prompt_tokens"] == 3000 and p["generation_tokens"] == 600, p
t = p["ttft"]
assert t["count"] == 40 and near(t["mean_ms"], 150.0) and near(t["p50_estimate_ms"], 150.0), t
assert p["prefix_cache_hit_rate"] is None and p["kv_usage_pct"] is None, p
assert p["tpot"] is None and p["itl"] is None, p
assert near(p["running"]["max"], 8.0) and near(p["waiting"]["mean"], 0.5), p
PY

check_page dcgm gpu_metrics DCGM "server_metrics: auto" <<'PY'
assert g["pages"][0]["dialect"] == "dcgm" and g["pages"][0]["error"] is None, g["pages"]
assert near(g["energy_j"], 123.456), g  # 100000 + 23456 mJ over two GPUs
assert g["output_tokens_from"] == "server" and g["output_tokens"] == 40 * 8, g
assert near(g["joules_per_output_token"], 123.456 / 320), g
assert near(g["gpu_util_pct"]["mean"], 70.0), g  # mean of the GPUs: 60 at A, 80 at B
assert near(g["gpu_power_w"]["mean"], 600.0), g  # summed over the GPUs: 500 at A, 700 at B
assert near(g["gpu_fb_used_mib"]["mean"], 70000.0), g
PY
grep -q 'J per output token' "$WORK/dcgm.out" || fail "no GPU line in the table: $(cat "$WORK/dcgm.out")"

# DCGM's blank sentinels on utilisation and power are "no value": both absent (null, "—"), never
# 9.2e18; the energy counter beside them, with a MIG GPU's repeated counter counted once, gives
# the same joules per output token as above.
check_page dcgm_blank gpu_metrics "DCGM (with blank sentinels)" <<'PY'
assert g["pages"][0]["dialect"] == "dcgm" and g["pages"][0]["error"] is None, g["pages"]
assert g["gpu_util_pct"] is None and g["gpu_power_w"] is None, g
assert g["pages"][0]["gpu_util_pct"] is None and g["pages"][0]["gpu_power_w"] is None, g["pages"]
assert near(g["energy_j"], 123.456), g
assert g["output_tokens"] == 40 * 8 and near(g["joules_per_output_token"], 123.456 / 320), g
assert near(g["gpu_fb_used_mib"]["mean"], 70000.0), g  # per MIG instance: 40000 + 10000 + 20000
PY
grep -q 'GPU: util — %, power — W' "$WORK/dcgm_blank.out" || fail "the GPU line shows a blank: $(grep GPU "$WORK/dcgm_blank.out")"
echo "PASS"
