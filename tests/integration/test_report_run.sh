#!/bin/bash
# A run and a sweep leave report.md, results.csv, report.html and hgrm/*.hgrm beside
# results.json, and `stampede report DIR` re-renders them byte for byte (each .hgrm a valid
# HdrHistogram percentile distribution). A graph (diamond) sweep's levels pool their repetitions'
# roles and sessions, and its report.md and report.html show them per level. The workload file's deployment: map
# reaches config.yaml, results.json run.deployment and the report's Deployment Details. A results
# file of another schema version and a missing run directory exit 1 naming the file.
# ctest: parallel (files and byte-for-byte re-renders only)
source "$(dirname "$0")/protocol_lib.sh"

cat >"$WORK/run.yaml" <<YAML
seed: 3
target: {ignore_eos: true}
workload: {input_tokens: 64, output_tokens: 16}
scheduler: {kind: concurrent, concurrency: 2}
limits: {max_requests: 20}
deployment:
  Model: "mock-llama | simulated"
  GPU: none
  max-num-seqs: 64
YAML
run_bounded 120 /dev/null "$WORK/run.err" "$WORK/run.yaml" --workers 1 --out "$WORK/run"
[ "$RUN_RC" = 0 ] || fail "run exited $RUN_RC: $(tail -5 "$WORK/run.err")"
for f in report.md results.csv hgrm/01-c2-ttft.hgrm hgrm/01-c2-tpot.hgrm hgrm/01-c2-itl.hgrm \
    hgrm/01-c2-e2e.hgrm hgrm/01-c2-ttfc.hgrm; do
    [ -s "$WORK/run/$f" ] || fail "the run left no $f"
done
for f in report.md results.csv hgrm/01-c2-ttft.hgrm; do
    assert_equal "mode of $f" "$(stat -c %a "$WORK/run/$f")" 640
done
grep -qxF '| Model | mock-llama \| simulated |' "$WORK/run/report.md" ||
    fail "report.md lacks the deployment's Model row"
assert_equal "run.deployment in results.json" \
    "$(json_value "$WORK/run/results.json" 'r["run"]["deployment"]["max-num-seqs"]')" 64
grep -q '^deployment: {"Model":"mock-llama | simulated"' "$WORK/run/config.yaml" ||
    fail "config.yaml lacks the deployment map"
assert_equal "results.csv rows (header, all, the endpoint, the role)" \
    "$(wc -l <"$WORK/run/results.csv")" 4
assert_equal ".hgrm total count = ttft_ms.count" \
    "$(sed -n 's/^#\[Max .*Total count *= *\([0-9]*\)\]$/\1/p' "$WORK/run/hgrm/01-c2-ttft.hgrm")" \
    "$(json_value "$WORK/run/results.json" 'l["ttft_ms"]["count"]')"

# Every .hgrm is an HdrHistogram percentile distribution: the header row, rows of value,
# percentile (0..1, non-decreasing, ending at 1), total count (non-decreasing, ending at the
# footer's Total count) and 1/(1-percentile), then the footer; values non-decreasing.
python3 - "$WORK/run/hgrm" <<'PY' || fail "an .hgrm file is not a valid HdrHistogram distribution"
import os, re, sys
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    lines = open(os.path.join(d, name)).read().splitlines()
    assert lines[0].split() == ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"], \
        f"{name}: header {lines[0]!r}"
    rows = []
    for line in lines[1:]:
        if not line.strip():
            continue
        if line.startswith("#"):
            break
        fields = line.split()  # the last row (percentile 1) has no 1/(1-percentile)
        assert len(fields) == 4 or len(fields) == 3 and float(fields[1]) == 1, f"{name}: {line!r}"
        v, p, c = fields[:3]
        rows.append((float(v), float(p), int(c), fields[3] if len(fields) == 4 else None))
    assert rows, f"{name}: no rows"
    footer = "\n".join(l for l in lines if l.startswith("#"))
    mean = re.search(r"#\[Mean\s*=\s*([0-9.]+), StdDeviation\s*=\s*([0-9.]+)\]", footer)
    top = re.search(r"#\[Max\s*=\s*([0-9.]+), Total count\s*=\s*([0-9]+)\]", footer)
    buckets = re.search(r"#\[Buckets\s*=\s*([0-9]+), SubBuckets\s*=\s*([0-9]+)\]", footer)
    assert mean and top and buckets, f"{name}: footer {footer!r}"
    for (v0, p0, c0, _), (v1, p1, c1, _) in zip(rows, rows[1:]):
        assert v1 >= v0 and p1 >= p0 and c1 >= c0, f"{name}: not monotonic at {v1} {p1} {c1}"
    for v, p, c, inv in rows:
        assert 0 <= p <= 1 and c >= 1, f"{name}: row {v} {p} {c}"
        assert inv is None or abs(float(inv) - 1 / (1 - p)) <= 0.01 / (1 - p) + 0.01, \
            f"{name}: 1/(1-p) {inv} at p {p}"
    assert rows[-1][1] == 1.0, f"{name}: last percentile {rows[-1][1]}"
    assert rows[-1][2] == int(top.group(2)), f"{name}: last count {rows[-1][2]} != {top.group(2)}"
    assert abs(rows[-1][0] - float(top.group(1))) <= 0.01 * float(top.group(1)) + 1e-6, \
        f"{name}: the last value {rows[-1][0]} is not Max {top.group(1)}"
    assert float(mean.group(1)) <= float(top.group(1)), f"{name}: mean above max"
PY

cp -r "$WORK/run" "$WORK/first"
rm -r "$WORK/run/report.md" "$WORK/run/results.csv" "$WORK/run/hgrm" "$WORK/run/report.html"
timeout 30 "$STAMPEDE" report "$WORK/run" >"$WORK/report.out" 2>"$WORK/report.err" ||
    fail "stampede report exited $?: $(cat "$WORK/report.err")"
for f in report.md results.csv report.html hgrm/01-c2-ttft.hgrm hgrm/01-c2-itl.hgrm; do
    cmp "$WORK/first/$f" "$WORK/run/$f" || fail "re-rendered $f differs from the run's"
done

cat >"$WORK/sweep.yaml" <<YAML
seed: 5
target: {ignore_eos: true}
workload: {kind: chat, turns: 2, input_tokens: 64, output_tokens: 8, think_time: 50ms}
scheduler: {kind: concurrent}
sweep:
  concurrency: [1, 2]
  warmup: 300ms
  snapshots: {count: 2, duration: 500ms}
  drain: 3s
  repeat: 2
YAML
run_bounded 180 /dev/null "$WORK/sweep.err" "$WORK/sweep.yaml" --workers 1 --out "$WORK/sweep"
[ "$RUN_RC" = 0 ] || fail "sweep exited $RUN_RC: $(tail -5 "$WORK/sweep.err")"
grep -q '^| 2 | ' "$WORK/sweep/report.md" || fail "the sweep's report.md has no row for level 2"
assert_equal "sweep results.csv rows (header + 2 levels x (2 repetitions x 3 slices + pooled))" \
    "$(wc -l <"$WORK/sweep/results.csv")" 15
[ -s "$WORK/sweep/hgrm/02-c2-ttft.hgrm" ] || fail "the sweep left no hgrm/02-c2-ttft.hgrm"
cp "$WORK/sweep/report.md" "$WORK/sweep.md"
cp "$WORK/sweep/results.csv" "$WORK/sweep.csv"
cp "$WORK/sweep/report.html" "$WORK/sweep.html"
timeout 30 "$STAMPEDE" report "$WORK/sweep" >/dev/null 2>"$WORK/report.err" ||
    fail "stampede report on the sweep exited $?: $(cat "$WORK/report.err")"
cmp "$WORK/sweep.md" "$WORK/sweep/report.md" || fail "the sweep's report.md re-rendered differs"
cmp "$WORK/sweep.csv" "$WORK/sweep/results.csv" || fail "the sweep's results.csv differs"
cmp "$WORK/sweep.html" "$WORK/sweep/report.html" || fail "the sweep's report.html differs"

# A graph (diamond) sweep: each level pools its repetitions' roles and sessions exactly (counts
# add up to the repetitions' own), has errors by class, decode overlap and one repetition's client
# series; report.md has the Sessions and Roles tables with a row per level, report.html the
# error-class, client series, decode overlap and per-role charts of each level, with data.
sed -e '/^output:/,$d' "$STAMPEDE_SRC/tests/fixtures/report/sweep-diamond.yaml" >"$WORK/graph.yaml"
run_bounded 180 /dev/null "$WORK/graph.err" "$WORK/graph.yaml" --workers 1 --out "$WORK/graph"
[ "$RUN_RC" = 0 ] || fail "graph sweep exited $RUN_RC: $(tail -5 "$WORK/graph.err")"
timeout 60 python3 - "$WORK/graph" <<'PY' || fail "the graph sweep's pooled levels or reports"
import json, os, re, sys
from html.parser import HTMLParser
out = sys.argv[1]
root = json.load(open(os.path.join(out, "results.json")))
levels = root["levels"]
assert [l["concurrency"] for l in levels] == [1, 2], levels
roles = ["planner", "executor", "aggregator"]
for l in levels:
    c = l["concurrency"]
    reps = [r for r in l["repetitions"] if not r["excluded"]]
    assert len(reps) == 2, f"c={c}: {len(reps)} valid repetitions"
    own = [json.load(open(os.path.join(out, r["results"])))["levels"][0] for r in reps]
    assert sorted(l["roles"]) == sorted(roles), f"c={c}: roles {sorted(l['roles'])}"
    for name in roles:
        got = l["roles"][name]
        for key in ("requests", "errors"):
            want = sum(o["roles"][name][key] for o in own)
            assert got[key] == want, f"c={c} {name} {key}: {got[key]} != {want}"
        want = sum(o["roles"][name]["ttft_ms"]["count"] for o in own)
        assert got["ttft_ms"]["count"] == want > 0, f"c={c} {name} TTFT count {got['ttft_ms']}"
        lo = min(o["roles"][name]["ttft_ms"]["min"] for o in own)
        hi = max(o["roles"][name]["ttft_ms"]["max"] for o in own)
        assert lo <= got["ttft_ms"]["p50"] <= hi, f"c={c} {name}: pooled p50 outside the reps'"
    s = l["sessions"]
    assert s["count"] == sum(o["sessions"]["count"] for o in own) > 0, f"c={c}: sessions {s}"
    assert s["makespan_ms"]["count"] == s["count"], f"c={c}: makespan {s['makespan_ms']}"
    assert sorted(s["critical_path_share"]) == sorted(roles), s["critical_path_share"]
    assert set(l["errors"]) >= {"connect", "timeout", "http_4xx", "http_5xx"}, l["errors"]
    assert sum(l["errors"].values()) == l["requests_failed"], (l["errors"], l["requests_failed"])
    overlap = l["decode_overlap"]
    assert overlap and overlap[0] == {"k": 1, "share": 1.0}, f"c={c}: overlap {overlap}"
    n = l["client_series_from_repetition"]
    assert n in (1, 2) and l["client_series"]["t_s"], f"c={c}: series {n}"
    rep = [o for r, o in zip(reps, own) if r["repetition"] == n][0]
    assert l["client_series"] == rep["client_series"], f"c={c}: not repetition {n}'s series"
md = open(os.path.join(out, "report.md")).read()
assert "## Sessions and Roles" in md, "report.md has no Sessions and Roles"
for l in levels:
    c, s = l["concurrency"], l["sessions"]
    assert f"| {c} | {s['count']} | " in md, f"no Critical Path row for c={c}"
    for name in roles:
        r = l["roles"][name]
        assert f"| {c} | {name} | {r['requests']} | " in md, f"no Per-Role row c={c} {name}"
        assert re.search(rf"^\| {c} \| {name} \| [0-9.]+% \|$", md, re.M), f"no share c={c} {name}"
class Charts(HTMLParser):
    def __init__(self):
        super().__init__()
        self.charts, self.svg, self.title = {}, 0, None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.svg, self.title = 1, None
            self.marks = 0
        elif self.svg and tag == "title" and self.title is None:
            self.title = ""
        elif self.svg and "mark" in (a.get("class") or "").split():
            self.marks += 1
    def handle_data(self, data):
        if self.svg and self.title == "":
            self.title = data
    def handle_endtag(self, tag):
        if tag == "svg":
            self.charts[self.title] = self.marks
            self.svg = 0
p = Charts()
p.feed(open(os.path.join(out, "report.html")).read())
want = ["TTFT p50 against output tokens/s", "TPOT p50 against output tokens/s"]
for c in (1, 2):
    want += [f"Client: in flight and requests/s (c={c})", f"Decode overlap (c={c})",
             f"TTFT p50 per role (c={c})", f"TPOT p50 per role (c={c})"]
for title in want:
    assert p.charts.get(title, 0) > 0, f"report.html: chart {title!r} missing or empty ({p.charts})"
# no request failed, so there is no error chart but one line saying so (a class no level counts
# is not drawn; tests/unit/test_report_html.c draws the classes of a level that has failures)
page = open(os.path.join(out, "report.html")).read()
assert "Errors by class" not in p.charts, "an error chart with nothing to show"
assert "Errors by class: no request failed." in page, "no line in place of the error chart"
print("ok", {t: p.charts[t] for t in want})
PY

mkdir "$WORK/old"
echo '{"schema_version": 1, "levels": []}' >"$WORK/old/results.json"
rc=0
"$STAMPEDE" report "$WORK/old" >/dev/null 2>"$WORK/old.err" || rc=$?
assert_equal "exit status on schema_version 1" "$rc" 1
grep -qF "$WORK/old/results.json: schema_version 1, this stampede reads 2" "$WORK/old.err" ||
    fail "the schema error does not name the file: $(cat "$WORK/old.err")"
rc=0
"$STAMPEDE" report "$WORK/missing" >/dev/null 2>"$WORK/missing.err" || rc=$?
assert_equal "exit status on a missing run directory" "$rc" 1
grep -qF "$WORK/missing: No such file or directory" "$WORK/missing.err" ||
    fail "the error does not name the directory: $(cat "$WORK/missing.err")"
echo "PASS"
