#!/bin/bash
# Same file and seed, 1 worker and 4 workers: the same requests are generated (the workload
# digest, an order-independent sum of every request's hash, is equal) and the same number run;
# then the same for every session-graph shape.
# ctest: parallel (content and counts only; no tight timing)
# Its files raise validity.max_schedule_lag to 2 s: beside another test on two cores a timer can
# fire 50-100 ms late, which is a true verdict on that machine but not what this test checks.
source "$(dirname "$0")/protocol_lib.sh"

# same_with_1_and_4_workers NAME FILE WHAT: runs FILE with 1 and then 4 workers (results under
# $WORK/NAME-1 and $WORK/NAME-4) and fails unless both generated the same requests (the workload
# digest, set in DIGEST) and ran as many (REQUESTS).
same_with_1_and_4_workers() {
    local name=$1 file=$2 what=$3 n
    for n in 1 4; do
        run_bounded 120 /dev/null "$WORK/$name-$n.err" "$file" --workers $n --out "$WORK/$name-$n"
        [ "$RUN_RC" = 0 ] || fail "$what with $n workers exited $RUN_RC: $(tail -5 "$WORK/$name-$n.err")"
    done
    DIGEST=$(json_value "$WORK/$name-1/results.json" 'l["workload_digest"]')
    [ -n "$DIGEST" ] && [ "$DIGEST" != "None" ] || fail "$what: no workload_digest in results.json"
    assert_equal "$what: digest, 4 workers vs 1" \
        "$(json_value "$WORK/$name-4/results.json" 'l["workload_digest"]')" "$DIGEST"
    REQUESTS=$(json_value "$WORK/$name-1/results.json" 'l["requests_ok"]')
    assert_equal "$what: requests, 4 workers vs 1" \
        "$(json_value "$WORK/$name-4/results.json" 'l["requests_ok"]')" "$REQUESTS"
}

start_mock --ttft-ms 5 --itl-ms 1
cat >"$WORK/det.yaml" <<YAML
seed: 11
target:
  api: chat
  model: mock-llama
  ignore_eos: true
  endpoints: [$MOCK_URL]
workload:
  kind: chat
  turns: {dist: uniform, min: 1, max: 4}
  input_tokens: {dist: lognormal, mean: 60, sigma: 0.5, min: 4, max: 400}
  output_tokens: {dist: uniform, min: 4, max: 24}
  think_time: 0
  system_prompt_tokens: 32
scheduler:
  kind: concurrent
  concurrency: 8
limits:
  max_sessions: 40
validity: {max_schedule_lag: 2s}
YAML

same_with_1_and_4_workers out "$WORK/det.yaml" "chat"
for n in 1 4; do
    assert_equal "sessions completed ($n workers)" \
        "$(json_value "$WORK/out-$n/results.json" 'l["sessions_completed"]')" 40
done
assert_equal "workers in the 4-worker run" "$(json_value "$WORK/out-4/results.json" 'r["run"]["workers"]')" 4
echo "ok: digest $DIGEST with 1 and 4 workers, $REQUESTS requests each"

# Every session-graph shape: the same graphs, lengths, waits and prompt text with 1 and 4 workers.
shapes=(
    "shape: linear, length: {dist: uniform, min: 2, max: 6}"
    "shape: diamond, executors: parallel, executor_count: 3"
    "shape: diamond, executors: sequential, executor_count: 2, message_overhead_tokens: 7"
    "shape: fanout, children: 3, child_length: {dist: uniform, min: 1, max: 2}"
    "shape: branching, depth: {dist: uniform, min: 1, max: 3}, fan_out: {dist: uniform, min: 1, max: 2}, fan_in: {dist: uniform, min: 1, max: 2}, max_width: 4"
    "shape: template, nodes: [{id: a}, {id: b, parents: [a], history: none}, {id: c, parents: [a, b], append_parent_replies: true}]"
)
for k in "${!shapes[@]}"; do
    cat >"$WORK/graph$k.yaml" <<YAML
seed: 12
target: {api: chat, model: mock-llama, ignore_eos: true, endpoints: [$MOCK_URL]}
workload:
  kind: graph
  input_tokens: {dist: uniform, min: 4, max: 40}
  output_tokens: {dist: uniform, min: 2, max: 8}
  system_prompt_tokens: 8
  graph: {${shapes[$k]}}
scheduler: {kind: concurrent, concurrency: 4}
limits: {max_sessions: 12}
validity: {max_schedule_lag: 2s}
YAML
    same_with_1_and_4_workers "g$k" "$WORK/graph$k.yaml" "graph '${shapes[$k]}'"
    assert_equal "graph '${shapes[$k]}': sessions completed" \
        "$(json_value "$WORK/g$k-4/results.json" 'l["sessions_completed"]')" 12
done
echo "ok: every graph shape gives the same digest with 1 and 4 workers"

# Trace replay (docs/workloads.md): each worker is sent only its own sessions, and the requests are
# the same with 1 and 4 workers: an untimed session trace wrapped past its end (concurrency 3 over
# 7 sessions), and a timed Mooncake trace with shared hash ids.
python3 - "$WORK/sessions.jsonl" "$WORK/mooncake.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for s in range(7):
        nodes = [("root", [], 30 + s), ("left", ["root"], 12), ("right", ["root"], 9),
                 ("join", ["left", "right"], 5)][: 1 + s % 4]
        for node, parents, fresh in nodes:
            f.write(json.dumps({"session": f"s{s}", "node": node, "parents": parents,
                                "role": "agent" if parents else "lead", "new_input_length": fresh,
                                "output_length": 3 + s % 3, "append_parent_replies": bool(parents),
                                "wait_after_ready": 0.002 * s}) + "\n")
with open(sys.argv[2], "w") as f:
    for i in range(30):
        f.write(json.dumps({"timestamp": 20 * i, "input_length": 40 + i, "output_length": 3,
                            "hash_ids": [i % 3, 100 + i]}) + "\n")
PY
traces=(
    "trace: {path: $WORK/sessions.jsonl, format: session, wrap: true}|scheduler: {kind: concurrent, concurrency: 3}|limits: {max_sessions: 20}"
    "trace: {path: $WORK/mooncake.jsonl, format: mooncake, block_size: 16}|scheduler: {kind: rate}|limits: {}"
)
for k in "${!traces[@]}"; do
    IFS='|' read -r trace scheduler limits <<<"${traces[$k]}"
    cat >"$WORK/trace$k.yaml" <<YAML
seed: 13
target: {api: chat, model: mock-llama, ignore_eos: true, endpoints: [$MOCK_URL]}
workload: {kind: trace, $trace}
$scheduler
$limits
validity: {max_schedule_lag: 2s}
YAML
    same_with_1_and_4_workers "t$k" "$WORK/trace$k.yaml" "trace $k"
done
assert_equal "wrapped trace: sessions completed" \
    "$(json_value "$WORK/t0-4/results.json" 'l["sessions_completed"]')" 20
assert_equal "Mooncake trace: requests" "$(json_value "$WORK/t1-4/results.json" 'l["requests_ok"]')" 30
echo "ok: trace replays give the same digest with 1 and 4 workers"
