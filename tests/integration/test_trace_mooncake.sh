#!/bin/bash
# Mooncake trace replay on the mock (docs/workloads.md, "Trace replay"):
#  - two requests whose first hash id is the same share that 512-token block of prompt text, so
#    the second gets at least 512 cached tokens from the mock's prefix cache; a request with other
#    hash ids gets fewer than one block; with --no-prefix-cache nothing is cached;
#  - a timed replay at 200 requests/s puts each request's intended start at its timestamp and
#    sends it within 2 ms of it (p95: a loaded 2-core machine delays a few sends; intended vs
#    actual start in requests.jsonl);
#  - wrap keeps a short trace going for the duration, with new session ids and arrivals offset by
#    the trace's period.
source "$(dirname "$0")/protocol_lib.sh"

cat >"$WORK/shared.jsonl" <<'JSONL'
{"timestamp": 0, "input_length": 600, "output_length": 4, "hash_ids": [7, 100]}
{"timestamp": 600, "input_length": 700, "output_length": 4, "hash_ids": [7, 200]}
{"timestamp": 1200, "input_length": 600, "output_length": 4, "hash_ids": [9, 300]}
JSONL
for cache in on off; do
    flags=()
    [ "$cache" = off ] && flags=(--no-prefix-cache)
    start_mock "${flags[@]}"
    replay_on_mock "shared-$cache" "path: $WORK/shared.jsonl, format: mooncake"
    python3 - "$WORK/shared-$cache/requests.jsonl" "$cache" <<'PY'
import json, sys
rows = {r["session"]: r for r in map(json.loads, open(sys.argv[1]))}
cached = {s: r["usage"]["cached_tokens"] for s, r in rows.items()}
assert sorted(rows) == [0, 1, 2], f"sessions {sorted(rows)}"
assert rows[1]["hash_ids"] == [7, 200], f"requests.jsonl lost the hash ids: {rows[1]}"
if sys.argv[2] == "on":
    assert cached[1] >= 512, f"the request sharing hash id 7 got {cached[1]} cached tokens (< 512)"
    assert cached[2] < 512, f"the request with its own hash ids got {cached[2]} cached tokens"
else:
    assert cached == {0: 0, 1: 0, 2: 0}, f"cached tokens without a prefix cache: {cached}"
print(f"ok: cache {sys.argv[2]}: cached tokens {cached}")
PY
done

python3 - "$WORK/rate.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(400):  # 200 requests/s for 2 s
        f.write(json.dumps({"timestamp": i * 5, "input_length": 16, "output_length": 2}) + "\n")
PY
start_mock --ttft-ms 1 --itl-ms 1
replay_on_mock rate "path: $WORK/rate.jsonl, format: mooncake"
assert_arrivals "$WORK/rate/requests.jsonl" 400 5000 "200/s"
assert_sends_on_time "$WORK/rate/requests.jsonl" "400 arrivals at 200/s"
# wrap: 5 requests 50 ms apart (period 200 ms + the mean gap 50 ms) keep going for the duration,
# with new session ids and arrivals offset by the period: session i is intended at i x 50 ms.
python3 - "$WORK/wrap.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(5):
        f.write(json.dumps({"timestamp": 1000 + 50 * i, "input_length": 8, "output_length": 2}) + "\n")
PY
replay_on_mock wrap "path: $WORK/wrap.jsonl, format: mooncake, wrap: true" "limits: {duration: 1020ms}"
assert_arrivals "$WORK/wrap/requests.jsonl" 21 50000 "wrap (5-request trace, arrivals before 1020 ms)"
echo "ok: Mooncake replay shares hash-id blocks and keeps the trace's arrival times"
