#!/bin/bash
# The client-vs-server gap on a fixed-latency mock (TTFT 130 ms, ITL 20 ms), server_metrics: auto:
# vLLM's TTFT buckets step 100 -> 250 ms, so the p50 interpolated in them reads 175 ms for a
# server whose every TTFT was 130 ms. The gaps are between the exact means (_sum/_count deltas),
# within 5 % everywhere they are shown: results.json, report.md, the terminal and compare. The
# bucket percentile is an estimate carrying its bucket [100, 250] ms, marked bucket-limited.
# ctest: parallel (relative gaps of means and fixed bucket bounds; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

cat >"$WORK/gap.yaml" <<YAML
target: {ignore_eos: true}
workload: {kind: requests, input_tokens: 32, output_tokens: 12}
scheduler: {kind: concurrent, concurrency: 4}
limits: {max_requests: 24}
mock: {ttft: 130ms, itl: 20ms}
server_metrics: auto
validity: {max_schedule_lag: 2s}
YAML
run_bounded 60 "$WORK/gap.out" "$WORK/gap.err" "$WORK/gap.yaml" --workers 1 --out "$WORK/gap"
[ "$RUN_RC" = 0 ] || fail "the run exited $RUN_RC: $(tail -5 "$WORK/gap.err")"

check_results "$WORK/gap" <<'PY' || fail "results.json's gap is not within 5 % or lacks its bounds"
for where, g in [("total", level["gap"]["total"])] + [(e["url"], e) for e in level["gap"]["endpoints"]]:
    for k in ("ttft", "tpot"):
        assert g[k]["gap_pct"] is not None and abs(g[k]["gap_pct"]) <= 5, (where, k, g[k])
    t = g["ttft"]
    assert 125 <= t["server_mean_ms"] <= 140 and t["server_p50_bounds_ms"] == [100.0, 250.0], t
    assert t["server_p50_bucket_limited"] is True and 100 < t["server_p50_estimate_ms"] <= 250, t
a = level["gap"]["total"]["ttft_attribution"]
assert abs(a["network_ms"]) < 0.05 * 130, a  # client mean - server mean: loopback, near zero
p = level["server"]["pages"][0]
assert "p50_ms" not in p["ttft"] and p["ttft"]["p50_bounds_ms"] == [100.0, 250.0], p["ttft"]
assert p["ttft"]["p50_bucket_limited"] and p["ttft"]["percentiles"].startswith("estimates"), p
assert 19 <= p["itl"]["mean_ms"] <= 21, p["itl"]
PY

# report.md: each gap row within 5 %, the estimate with its bucket.
python3 - "$WORK/gap/report.md" <<'PY' || fail "report.md's gaps are not within 5 %: $(grep -A6 'Gap' "$WORK/gap/report.md")"
import re, sys
md = open(sys.argv[1]).read()
for name in ("TPOT", "TTFT"):
    table = md.split(f"### Client-Server {name} Gap")[1].split("\n\n")[1]
    rows = [r for r in table.splitlines() if re.match(r"\| \d", r)]
    assert rows, (name, table)
    for r in rows:
        cells = [c.strip() for c in r.strip("|").split("|")]
        assert abs(float(cells[3].rstrip("%"))) <= 5, (name, r)
        if name == "TTFT":
            assert "[100ms, 250ms] bucket-limited" in cells[5], r
assert "| Server TTFT | Server TPOT | Gen TPS |" in md, "no server figures table"
PY

# The terminal: the client-vs-server rows' gaps within 5 %, the estimate with its bucket.
python3 - "$WORK/gap.out" <<'PY' || fail "the terminal's gaps are not within 5 %: $(grep -A8 'Client vs server' "$WORK/gap.out")"
import re, sys
text = open(sys.argv[1]).read()
block = text.split("Client vs server (means")[1]
rows = [l for l in block.splitlines() if re.match(r"  (http\S+|total) ", l)]
assert len(rows) == 2, rows
for r in rows:
    gaps = re.findall(r"([+-]\d+\.\d)%", r)
    assert len(gaps) == 2 and all(abs(float(g)) <= 5 for g in gaps), r
assert "TTFT 175.00 [100.00, 250.00] bucket-limited" in block or \
    re.search(r"TTFT \d+\.\d\d \[100\.00, 250\.00\] bucket-limited", block), block
assert "b = bucket-limited" in text
PY

# compare: the server columns are the exact means, within 5 % of the client's.
cp -r "$WORK/gap" "$WORK/again"
"$STAMPEDE" compare "$WORK/gap" "$WORK/again" --format json >"$WORK/cmp.json" || fail "compare exited $?"
python3 - "$WORK/cmp.json" <<'PY' || fail "compare's server columns are not within 5 % of the client's"
import json, sys
c = json.load(open(sys.argv[1]))
m = c["levels"][0]["metrics"]
for client, server in (("ttft_p50_ms", "server_ttft_mean_ms"), ("tpot_p50_ms", "server_tpot_mean_ms")):
    cv, sv = m[client]["values"][0], m[server]["values"][0]
    assert sv is not None and abs(cv - sv) / cv <= 0.05, (client, cv, server, sv)
assert m["itl_p99_ms"]["values"][0] >= 19, m["itl_p99_ms"]
assert 30 <= m["prompt_tokens_mean"]["values"][0] <= 40, m["prompt_tokens_mean"]
PY
echo "PASS"
