#!/usr/bin/env bash
# report.html in headless Chromium: a short run on the embedded mock (server metrics on) writes
# OUT/report.html; Chromium's screenshot is not blank, every chart in its DOM has a data mark, and
# the page references no network URL (src/href).
# ctest: parallel (rendering and DOM content only)
set -euo pipefail
source "$STAMPEDE_SRC/tests/integration/protocol_lib.sh"
command -v chromium >/dev/null || fail "chromium is not installed (make deps installs it)"

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
echo "PASS"
