#!/bin/bash
# `stampede run A.yaml B.yaml --metrics-listen 127.0.0.1:0`: the controller serves Prometheus text
# during the runs, across the runs of the fleet. Scraped during the second run, the first run's
# series (its endpoint's labels) hold every record of run-1/requests.jsonl: the request counters
# match, the TTFT Summary's p50 over the last 60 s agrees with the exact p50 of those records
# within 1 %, promtool finds nothing to say, the loadgen names are there, and a scraper that
# never finishes its request stalls neither the run nor the other scrapes.
# ctest: parallel (the Summary is compared with the exact percentile over the same records; no timing bound)
source "$(dirname "$0")/protocol_lib.sh"
command -v promtool >/dev/null || fail "promtool is not installed (Debian prometheus)"

start_mock --seed 3 --prefill-tokens-per-s 20000 # engine mode: TTFT grows with the prompt
MOCK_A=$MOCK_URL
start_mock --seed 4
MOCK_B=$MOCK_URL
write_workload "$WORK/a.yaml" seed=11 ignore_eos=true endpoints="[$MOCK_A]" \
    input_tokens="{dist: uniform, min: 50, max: 4000}" \
    output_tokens=16 concurrency=16 max_requests=300
write_workload "$WORK/b.yaml" seed=12 ignore_eos=true endpoints="[$MOCK_B]" input_tokens=16 \
    output_tokens=16 concurrency=4 duration=8s

# Bad flags: a clear error naming the flag, non-zero exit, before any worker starts.
rc=0
timeout 20 "$STAMPEDE" run "$WORK/a.yaml" --metrics-listen nope 2>"$WORK/bad.err" || rc=$?
[ "$rc" = 1 ] && grep -q -- "--metrics-listen: 'nope' is not HOST:PORT" "$WORK/bad.err" ||
    fail "--metrics-listen nope: exit $rc, $(cat "$WORK/bad.err")"
rc=0
timeout 20 "$STAMPEDE" run "$WORK/a.yaml" --metrics-listen 127.0.0.1:0 --metrics-compat x \
    2>"$WORK/bad.err" || rc=$?
[ "$rc" = 1 ] && grep -q -- "--metrics-compat knows only 'loadgen'" "$WORK/bad.err" ||
    fail "--metrics-compat x: exit $rc, $(cat "$WORK/bad.err")"

timeout 120 "$STAMPEDE" run "$WORK/a.yaml" "$WORK/b.yaml" --workers 2 --out "$WORK/out" --trace \
    --metrics-listen 127.0.0.1:0 --metrics-compat loadgen >"$WORK/table" 2>"$WORK/run.err" &
RUN_PID=$!
BACKGROUND+=($RUN_PID)
addr=$(wait_for_line "$WORK/run.err" 20 'metrics on http://[0-9.]+:[0-9]+/metrics') ||
    fail "no metrics address on stderr: $(tail -5 "$WORK/run.err")"
URL=${addr#metrics on }
HOSTPORT=${URL#http://}
HOSTPORT=${HOSTPORT%/metrics}

# A scraper that sends half a request and then nothing: its connection must not hold anyone.
python3 -c '
import socket, sys, time
h, p = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((h, int(p)))
s.sendall(b"GET /metr")
time.sleep(30)
' "$HOSTPORT" &
BACKGROUND+=($!)

# Scrape every 0.2 s until the second run's endpoint shows up (the first run is then merged
# whole: its results were written before the second run started), keeping that scrape.
got=""
for ((i = 0; i < 400; i++)); do
    if curl -s --max-time 5 -o "$WORK/scrape" "$URL" &&
        grep -q "stampede_requests_total{endpoint=\"$MOCK_B\"" "$WORK/scrape"; then
        got=1
        break
    fi
    kill -0 "$RUN_PID" 2>/dev/null || break
    sleep 0.2
done
[ -n "$got" ] || fail "no scrape showed the second run: $(tail -5 "$WORK/run.err")"
sleep 1
curl -s --max-time 5 -o "$WORK/scrape" "$URL" || fail "a scrape during the second run failed"

lint=$(promtool check metrics <"$WORK/scrape" 2>&1) || fail "promtool check metrics failed: $lint"
[ -z "$lint" ] || fail "promtool has something to say: $lint"
for name in loadgen_ttft_all_seconds loadgen_ttft_seconds_bucket loadgen_requests_total \
    stampede_ttfc_seconds_bucket stampede_itl_seconds_bucket stampede_tpot_seconds_bucket \
    stampede_e2e_seconds_bucket stampede_in_flight_requests stampede_workers_connected \
    stampede_input_tokens_total stampede_output_tokens_total stampede_itl_window_seconds; do
    grep -q "^$name" "$WORK/scrape" || fail "no $name in the scrape"
done
curl -s --max-time 5 -o /dev/null -w '%{http_code}' "http://$HOSTPORT/nope" | grep -qx 404 ||
    fail "an unknown path is not answered 404"

wait "$RUN_PID" || fail "stampede run exited $?: $(tail -5 "$WORK/run.err")"
T="$WORK/out/run-1/requests.jsonl"
[ -f "$T" ] || fail "no $T"

python3 - "$WORK/scrape" "$T" "$MOCK_A" <<'PY' || fail "the live metrics disagree with the trace"
import json, math, re, sys
scrape, trace, endpoint = sys.argv[1:]
samples = {}
for line in open(scrape):
    if line.startswith("#") or not line.strip():
        continue
    m = re.match(r'([a-zA-Z_0-9]+)(\{.*\})? (\S+)$', line.strip())
    labels = dict(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
    samples.setdefault(m.group(1), []).append((labels, float(m.group(3))))

def value(name, **want):
    hits = [v for l, v in samples.get(name, []) if all(l.get(k) == w for k, w in want.items())]
    assert len(hits) == 1, f"{name} {want}: {len(hits)} samples"
    return hits[0]

records = [json.loads(l) for l in open(trace)]
ok = [r for r in records if r["error"] == "none"]
failed = len(records) - len(ok)
ttft = sorted(r["ttft_ms"] for r in ok if not r["warmup"] and r["ttft_ms"] is not None)
n = len(ttft)
exact = ttft[math.ceil(0.5 * n) - 1] / 1000
sel = dict(endpoint=endpoint, level="run", role="role 0")
live_ok = value("stampede_requests_total", outcome="ok", **sel)
live_count = value("stampede_ttft_window_seconds_count", **sel)
p50 = value("stampede_ttft_window_seconds", quantile="0.5", **sel)
print(f"requests ok {len(ok)} live {live_ok}; TTFT samples {n} live {live_count}; "
      f"p50 exact {exact:.6f} s live {p50:.6f} s ({(p50 / exact - 1) * 100:+.3f} %); "
      f"spread p10 {ttft[n // 10] / 1000:.4f} s p90 {ttft[9 * n // 10] / 1000:.4f} s")
assert len(ok) == 300 and failed == 0, f"{len(ok)} ok, {failed} not"
assert live_ok == len(ok), "requests_total ok"
assert live_count == n, "the Summary's count"
assert abs(p50 / exact - 1) <= 0.01, "the Summary's p50 is not within 1 % of the exact p50"
for q in (0.9, 0.99):
    live = value("stampede_ttft_window_seconds", quantile=str(q), **sel)
    want = ttft[math.ceil(q * n) - 1] / 1000
    assert abs(live / want - 1) <= 0.01, f"the Summary's p{q * 100:g} {live} is not {want}"
assert value("stampede_ttft_seconds_count", **sel) == n, "the histogram's count"
assert value("stampede_ttft_seconds_bucket", le="+Inf", **sel) == n, "the +Inf bucket"
PY
echo "ok: live metrics at $URL agree with the trace"
