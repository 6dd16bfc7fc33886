#!/bin/bash
# Azure LLM inference trace replay on the mock (docs/workloads.md, "Azure traces"): a CSV of
# TIMESTAMP,ContextTokens,GeneratedTokens with wall-clock timestamps of seven fractional digits
# (CRLF line ends, as Azure's files have them).
#  - a timed replay at 200 requests/s puts each request's intended start at its timestamp (to the
#    microsecond, across a second boundary) and sends it within 2 ms of it (p95: a loaded 2-core
#    machine delays a few sends; intended vs actual start in requests.jsonl), with the row's
#    prompt and max_tokens;
#  - time_scale 2 halves the speed and wrap keeps the trace going, arrivals offset by its period.
source "$(dirname "$0")/protocol_lib.sh"

python3 - "$WORK/rate.csv" <<'PY'
import sys
with open(sys.argv[1], "w", newline="") as f:
    f.write("TIMESTAMP,ContextTokens,GeneratedTokens\r\n")
    base = 59 * 10**7 + 1234567  # 18:17:59.5912345..: the rows cross into the next minute
    for i in range(400):  # 200 requests/s for 2 s
        t = base + i * 50000  # in 100 ns units: 5 ms apart
        s, frac = divmod(t, 10**7)
        m, s = divmod(s, 60)
        f.write(f"2023-11-16 18:{17 + m:02d}:{s:02d}.{frac:07d},{16 + i % 7},{2 + i % 2}\r\n")
PY
start_mock --ttft-ms 1 --itl-ms 1
# --allow-invalid: what is checked is the p95 below; the run's own verdict (schedule lag p99 within
# 10 ms) fails on a shared machine when a neighbour holds the CPU for a few sends
replay_on_mock rate "path: $WORK/rate.csv, format: azure" "" --allow-invalid
assert_arrivals "$WORK/rate/requests.jsonl" 400 5000 "Azure at 200/s"
python3 - "$WORK/rate/requests.jsonl" <<'PY'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    i = r["session"]
    assert r["output_length"] == 2 + i % 2, f"session {i}: max_tokens {r['output_length']}"
    assert r["new_input_length"] == 16 + i % 7, f"session {i}: prompt {r['new_input_length']}"
PY
assert_sends_on_time "$WORK/rate/requests.jsonl" "400 Azure arrivals at 200/s"
# time_scale 2 and wrap: 4 rows 50 ms apart (period 150 ms + the mean gap 50 ms = 200 ms) at half
# speed: session i is intended at i x 100 ms, for the 1050 ms of the run.
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n' >"$WORK/wrap.csv"
for i in 0 1 2 3; do
    printf '2023-11-16 23:59:59.%07d,8,2\n' $((8000000 + 500000 * i)) >>"$WORK/wrap.csv"
done
# --allow-invalid: 11 sends make p99 lag the slowest one; the intended times are what is checked
replay_on_mock wrap "path: $WORK/wrap.csv, format: azure, time_scale: 2, wrap: true" \
    "limits: {duration: 1050ms}" --allow-invalid
assert_arrivals "$WORK/wrap/requests.jsonl" 11 100000 "time_scale 2 + wrap (4-row trace, arrivals before 1050 ms)"
echo "ok: Azure replay keeps the trace's wall-clock arrival times"
