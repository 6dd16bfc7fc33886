#!/bin/bash
# `stampede read-metrics`: saved pages of tests/data/metrics read offline as a run reads a scraped
# one (dialect, figures by stampede's names); a missing file is named and exits 1, a bad option
# exits 2, and the human form names each figure's metric.
# ctest: parallel (contents and messages only)
source "$(dirname "$0")/protocol_lib.sh"
DATA="$(dirname "$0")/../data/metrics"

"$STAMPEDE" read-metrics --json "$DATA"/*.prom >"$WORK/pages.jsonl" || fail "read-metrics exited $?"
python3 - "$WORK/pages.jsonl" <<'PY' || fail "read-metrics --json is not as expected: $(cat "$WORK/pages.jsonl")"
import json, os, sys
pages = {os.path.basename(p["file"]): p for p in map(json.loads, open(sys.argv[1]))}
assert len(pages) == 5, sorted(pages)
s = pages["sglang_without_requests_total.prom"]
assert s["dialect"] == "sglang" and s["counters"]["requests"]["value"] == 200, s
assert s["counters"]["requests"]["metric"] == "sglang:e2e_request_latency_seconds_count", s
v = pages["vllm_v1_engine_created_deprecated.prom"]
assert v["counters"]["prefix_hits"] == {"metric": "vllm:prefix_cache_hits_total", "value": 100.0}, v
assert abs(v["histograms"]["ttft"]["mean_ms"] - 130) < 1e-6, v["histograms"]
d = pages["dcgm_readme_style_blank.prom"]
assert "gpu_util_pct" not in d["gauges"] and d["gauges"]["gpu_power_w"]["value"] == 250.5, d
assert d["lines_skipped"] == 2 and d["first_error"].startswith("line "), d
assert pages["dynamo_component_only.prom"]["dialect"] is None
PY

"$STAMPEDE" read-metrics "$DATA/dcgm_prof_mig.prom" >"$WORK/human.txt" || fail "the human form exited $?"
grep -q "gpu_util_pct *50 *DCGM_FI_PROF_GR_ENGINE_ACTIVE" "$WORK/human.txt" ||
    fail "the human form does not name the figure and its metric: $(cat "$WORK/human.txt")"

rc=0
"$STAMPEDE" read-metrics "$WORK/nowhere.prom" 2>"$WORK/missing.err" || rc=$?
[ "$rc" = 1 ] && grep -q "nowhere.prom: No such file" "$WORK/missing.err" ||
    fail "a missing file: exit $rc, $(cat "$WORK/missing.err")"
rc=0
"$STAMPEDE" read-metrics --bogus x 2>"$WORK/usage.err" || rc=$?
[ "$rc" = 2 ] && grep -q "unknown option '--bogus'" "$WORK/usage.err" || fail "a bad option: exit $rc"
echo "PASS"
