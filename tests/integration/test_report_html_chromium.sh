#!/usr/bin/env bash
# report.html in headless Chromium: a short run on the embedded mock (server metrics on, --trace)
# writes OUT/report.html with a single run's charts (its requests over time from the trace, its
# load, its CDFs); a sweep of doubling levels writes the sweep's (log2 level axis, latency against
# throughput with its Pareto front). Chromium's screenshots are not blank, every chart in the DOM
# has a data mark, no page references a network URL (src/href); and the run's page prints:
# --print-to-pdf draws every chart's data points.
# ctest: parallel (rendering and DOM content only)
set -euo pipefail
source "$STAMPEDE_SRC/tests/integration/protocol_lib.sh"
command -v chromium >/dev/null || fail "chromium is not installed (make test-deps installs it)"

cat >"$WORK/run.yaml" <<'YAML'
seed: 3
target:
  api: chat
  ignore_eos: true
workload:
  kind: chat
  turns: 2
  input_tokens: 64
  output_tokens: {dist: uniform, min: 8, max: 24}
  think_time: 50ms
scheduler:
  kind: concurrent
  concurrency: 4
limits:
  duration: 3s
server_metrics: auto
scrape_interval: 500ms
YAML
run_bounded 60 "$WORK/run.out" "$WORK/run.err" "$WORK/run.yaml" --workers 1 --trace \
    --out "$WORK/out"
[ "$RUN_RC" = 0 ] || fail "stampede run exited $RUN_RC: $(tail -5 "$WORK/run.err")"
[ -s "$WORK/out/report.html" ] || fail "no report.html in $WORK/out"

# Chromium keeps its profile in HOME; a private one keeps runs apart.
export HOME="$WORK/home"
mkdir -p "$HOME"
chrome=(chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions
    --disable-background-networking --user-data-dir="$WORK/profile")
timeout 90 "${chrome[@]}" --window-size=1400,3000 --screenshot="$WORK/shot.png" \
    "file://$WORK/out/report.html" >"$WORK/shot.log" 2>&1 ||
    fail "chromium --screenshot failed: $(tail -5 "$WORK/shot.log")"
timeout 90 "${chrome[@]}" --dump-dom "file://$WORK/out/report.html" >"$WORK/dom.html" \
    2>"$WORK/dom.log" || fail "chromium --dump-dom failed: $(tail -5 "$WORK/dom.log")"
[ -s "$WORK/shot.png" ] || fail "no screenshot written"
# in flight, TTFT/ITL/E2E over time, TTFT against prompt, ITL against position, client series,
# server ×2, decode overlap, CDF ×3 (no error chart: none failed; no role bars: one role)
timeout 60 python3 "$STAMPEDE_SRC/tests/integration/report_html_check.py" \
    "$WORK/out/report.html" "$WORK/shot.png" "$WORK/dom.html" 13 || fail "report.html checks"
for title in "Requests in flight" "TTFT per request" "ITL per token gap" \
    "E2E latency per request" "TTFT against prompt length" "ITL against token position"; do
    grep -qF "<title>$title</title>" "$WORK/dom.html" || fail "the run's page lacks '$title'"
done
grep -qF "Latency against the level" "$WORK/dom.html" &&
    fail "a single run's page draws charts against the level (one dot each)"
grep -qF "Errors by class: no request failed." "$WORK/dom.html" ||
    fail "no failure: the errors chart is not one line of text"
# `stampede report` draws the same page again from results.json and the trace
cp "$WORK/out/report.html" "$WORK/run-report.html"
timeout 30 "$STAMPEDE" report "$WORK/out" >/dev/null 2>"$WORK/rerender.err" ||
    fail "stampede report exited $?: $(cat "$WORK/rerender.err")"
cmp -s "$WORK/run-report.html" "$WORK/out/report.html" ||
    fail "stampede report re-rendered a different report.html from the same trace"

# A sweep of doubling levels: the charts against the level use a log2 axis, and latency against
# throughput has a point per level and its Pareto front.
cat >"$WORK/sweep.yaml" <<'YAML'
seed: 5
target: {ignore_eos: true}
workload: {input_tokens: 64, output_tokens: 16}
scheduler: {kind: concurrent}
sweep:
  concurrency: [1, 2, 4]
  warmup: 200ms
  snapshots: {count: 1, duration: 600ms}
  drain: 2s
YAML
run_bounded 90 /dev/null "$WORK/sweep.err" "$WORK/sweep.yaml" --workers 1 --out "$WORK/sweep"
[ "$RUN_RC" = 0 ] || fail "sweep exited $RUN_RC: $(tail -5 "$WORK/sweep.err")"
timeout 90 "${chrome[@]}" --window-size=1400,3000 --screenshot="$WORK/sweep.png" \
    "file://$WORK/sweep/report.html" >"$WORK/sweep-shot.log" 2>&1 ||
    fail "chromium --screenshot of the sweep failed: $(tail -5 "$WORK/sweep-shot.log")"
timeout 90 "${chrome[@]}" --dump-dom "file://$WORK/sweep/report.html" >"$WORK/sweep-dom.html" \
    2>"$WORK/sweep-dom.log" || fail "chromium --dump-dom failed: $(tail -5 "$WORK/sweep-dom.log")"
# latency ×4, against throughput ×2, throughput ×2, CDF ×2, a client series per level
timeout 60 python3 "$STAMPEDE_SRC/tests/integration/report_html_check.py" \
    "$WORK/sweep/report.html" "$WORK/sweep.png" "$WORK/sweep-dom.html" 10 ||
    fail "the sweep's report.html checks"
grep -qF "concurrency (sessions in flight) (log₂ scale)" "$WORK/sweep-dom.html" ||
    fail "levels 1, 2, 4 are not on a log2 axis"
for title in "TTFT p50 against output tokens/s" "TPOT p50 against output tokens/s"; do
    python3 - "$WORK/sweep-dom.html" "$title" <<'PY' || fail "'$title': no point per level or no front"
import re, sys
page, title = open(sys.argv[1]).read(), sys.argv[2]
fig = page[page.index(f"<title>{title}</title>"):]
fig = fig[:fig.index("</svg>")]
levels = re.findall(r"<title>(c=\d+): ", fig)
front = re.findall(r"<title>Pareto front: ", fig)
assert sorted(levels) == ["c=1", "c=2", "c=4"], levels
assert 1 <= len(front) <= 3, front
PY
done

# It prints: --print-to-pdf gives a PDF of at least one page whose content streams draw the
# charts. The same page with every <svg> removed prints with no curve at all, so the curves of the
# full page are the charts': at least one Bézier circle (4 curves) per data point of the page.
python3 -c '
import re, sys
page = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(re.sub(r"<svg.*?</svg>", "", page, flags=re.S))
' "$WORK/out/report.html" "$WORK/out/no-charts.html"
for name in report no-charts; do
    timeout 90 "${chrome[@]}" --no-pdf-header-footer --print-to-pdf="$WORK/$name.pdf" \
        "file://$WORK/out/$name.html" >"$WORK/$name.pdf.log" 2>&1 ||
        fail "chromium --print-to-pdf $name failed: $(tail -5 "$WORK/$name.pdf.log")"
done
timeout 60 python3 - "$WORK/report.pdf" "$WORK/no-charts.pdf" "$WORK/out/report.html" <<'PY' ||
import re, sys, zlib
def drawing(path):
    """(pages, curve ops, line ops) of a PDF's content streams (Flate or plain)."""
    data = open(path, "rb").read()
    assert data.startswith(b"%PDF-"), f"{path}: not a PDF"
    pages = len(re.findall(rb"/Type\s*/Page\b(?!s)", data))
    curves = lines = pos = 0
    while (i := data.find(b"stream\n", pos)) >= 0:
        if data[i - 3:i] == b"end":
            pos = i + 7
            continue
        j = data.find(b"endstream", i)
        raw = data[i + 7:j]
        try:
            raw = zlib.decompressobj().decompress(raw)
        except zlib.error:
            pass
        curves += raw.count(b" c\n")
        lines += raw.count(b" l\n")
        pos = j
    return pages, curves, lines
full, bare, page = sys.argv[1:]
pages, curves, lines = drawing(full)
_, bare_curves, bare_lines = drawing(bare)
marks = open(page).read().count("<circle class=\"mark\"")
print(f"report.pdf: {pages} pages, {curves} curves, {lines} lines; without the charts "
      f"{bare_curves} curves, {bare_lines} lines; {marks} data points")
assert pages >= 1, "no page"
assert bare_curves == 0, "the page without charts draws curves: the count cannot tell charts"
assert marks > 0 and curves >= 4 * marks, f"{curves} curves for {marks} data points"
assert lines > bare_lines, "no chart line printed"
PY
    fail "report.html does not print its charts"
echo "PASS"
