#!/bin/bash
# Fan-out 3 on the real mock: one session at a time whose main node spawns three sub-agents of one
# request each. The mock's own vllm:num_requests_running gauge, polled during the run, must reach
# exactly 3 (the three children in flight at once) and never more (main and the continuation run
# alone), and the run's results agree: 2 sessions of 1 + 3 + 1 requests, all ok.
source "$(dirname "$0")/protocol_lib.sh"

# Fixed timings: a child of 30 tokens streams for about 50 + 30 x 25 ms = 0.8 s.
start_mock --ttft-ms 50 --itl-ms 25
cat >"$WORK/fanout.yaml" <<YAML
seed: 6
target: {api: chat, model: mock-llama, ignore_eos: true, endpoints: [$MOCK_URL]}
workload:
  kind: graph
  input_tokens: 8
  output_tokens: 30
  graph: {shape: fanout, children: 3, child_length: 1}
scheduler: {kind: concurrent, concurrency: 1}
limits: {max_sessions: 2}
YAML

timeout 90 "$STAMPEDE" run "$WORK/fanout.yaml" --workers 1 --out "$WORK/out" \
    >"$WORK/run.out" 2>"$WORK/run.err" &
RUN_PID=$!
BACKGROUND+=($RUN_PID)
max=0
seen3=0
# Bounded: at most 600 polls (about 60 s); the run takes about 4 s.
for ((i = 0; i < 600; i++)); do
    kill -0 "$RUN_PID" 2>/dev/null || break
    n=$(mock_metric vllm:num_requests_running)
    ((n > max)) && max=$n
    ((n == 3)) && seen3=$((seen3 + 1))
    sleep 0.1
done
wait "$RUN_PID" || fail "stampede run exited $?: $(tail -5 "$WORK/run.err")"
[ "$max" = 3 ] || fail "the mock's running gauge peaked at $max, expected the 3 children at once"
((seen3 >= 2)) || fail "the gauge showed 3 running at only $seen3 polls"

python3 - "$WORK/out/results.json" <<'PY'
import json, sys
level = json.load(open(sys.argv[1]))["levels"][0]
assert level["requests_ok"] == 10, f"{level['requests_ok']} ok requests, expected 2 x (1 + 3 + 1)"
assert level["requests_failed"] == 0, level["requests_failed"]
assert level["sessions"]["count"] == 2, level["sessions"]
PY
echo "ok: fan-out 3 puts exactly three children in flight at once on the mock ($seen3 polls at 3)"
