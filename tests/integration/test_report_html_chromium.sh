#!/usr/bin/env bash
# report.html in headless Chromium: a short run on the embedded mock (server metrics on) writes
# OUT/report.html; Chromium's screenshot is not blank, every chart in its DOM has a data mark, and
# the page references no network URL (src/href); and it prints: --print-to-pdf draws every
# chart's data points.
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
run_bounded 60 "$WORK/run.out" "$WORK/run.err" "$WORK/run.yaml" --workers 1 --out "$WORK/out"
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
# latency ×4, throughput ×2, errors, CDF ×2, client series, server ×2, decode overlap, roles ×2
timeout 60 python3 "$STAMPEDE_SRC/tests/integration/report_html_check.py" \
    "$WORK/out/report.html" "$WORK/shot.png" "$WORK/dom.html" 15 || fail "report.html checks"

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
