#!/bin/bash
# The --trace output of a run is itself a replay trace (docs/workloads.md, "Trace replay"): a
# template graph with roles, history none/full, appended replies and think times is recorded on
# the mock, replayed from requests.jsonl with 1 and then 3 workers, and each replay sends the same
# requests: the same sessions, nodes, parents, history parents, roles, fresh and output lengths,
# and the same prompt sizes, and the same request bytes: each request's body_hash (XXH3 of the body
# as sent: system prompt, history, upstream replies, fresh text, max_tokens) is the recorded one
# for the same (session, node) (the prompt text is a function of the seed, session and node; the
# mock's reply is a function of its seed and the prompt). A timed
# chat run replays with the same requests and the same session arrivals. A chat that compacts
# records its summarise requests as "compaction": true; its replay, with the same compaction
# settings, skips them and compacts on its own: the same nodes and the same number of summaries.
# ctest: parallel (content and counts only; no tight timing)
# Its files raise validity.max_schedule_lag to 2 s: beside another test on two cores a timer can
# fire 50-100 ms late, which is a true verdict on that machine but not what this test checks.
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 2 --itl-ms 1
run_on_mock record 2 <<YAML
seed: 11
workload:
  kind: graph
  roles: [planner, worker, reviewer]
  system_prompt_tokens: 16
  input_tokens: {dist: uniform, min: 10, max: 40}
  output_tokens: {dist: uniform, min: 3, max: 9}
  graph:
    shape: template
    nodes:
      - {id: plan, role: planner}
      - {id: w1, parents: [plan], role: worker, history: none, append_parent_replies: true}
      - {id: w2, parents: [plan], role: worker, history: none, append_parent_replies: true,
         wait_after_ready: 20ms}
      - {id: review, parents: [w1, w2], history_parent: plan, role: reviewer,
         append_parent_replies: true}
      - {id: again, parents: [review], role: planner}
scheduler: {kind: concurrent, concurrency: 3}
limits: {max_sessions: 9}
validity: {max_schedule_lag: 2s}
YAML

for workers in 1 3; do
    run_on_mock "replay$workers" "$workers" <<YAML
seed: 11
workload:
  kind: trace
  system_prompt_tokens: 16
  trace: {path: $WORK/record/requests.jsonl, format: session}
scheduler: {kind: concurrent, concurrency: 3}
validity: {max_schedule_lag: 2s}
YAML
    python3 - "$WORK/record/requests.jsonl" "$WORK/replay$workers/requests.jsonl" <<'PY'
import json, sys
KEYS = ("parents", "history_parent", "history", "append_parent_replies", "role_name",
        "new_input_length", "output_length", "wait_after_ready", "requested_input_tokens",
        "requested_output_tokens", "status", "body_hash")
def load(path):
    rows = {}
    for line in open(path):
        r = json.loads(line)
        rows[(r["session"], r["node"])] = {k: r.get(k) for k in KEYS}
    return rows
recorded, replayed = load(sys.argv[1]), load(sys.argv[2])
assert len(recorded) == 45, f"the recorded run has {len(recorded)} requests, expected 9 x 5"
assert sorted(recorded) == sorted(replayed), \
    f"different requests: {sorted(set(recorded) ^ set(replayed))}"
for key, row in recorded.items():
    assert row == replayed[key], f"request {key} differs: recorded {row}, replayed {replayed[key]}"
assert recorded[(0, 3)]["parents"] == [1, 2] and recorded[(0, 3)]["history_parent"] == 0
assert recorded[(0, 1)]["history"] == 0 and recorded[(0, 3)]["role_name"] == "reviewer"
hashes = [row["body_hash"] for row in recorded.values()]
assert all(isinstance(h, str) and len(h) == 16 for h in hashes), f"body hashes: {hashes}"
assert len(set(hashes)) == len(hashes), "two requests of the recorded run sent the same bytes"
print(f"ok: {len(replayed)} requests replayed identically, byte for byte")
PY
done
echo "ok: record -> replay gives the same requests, with 1 and 3 workers"

# A timed chat run (rate scheduler) round-trips too: turns continue the conversation, and each
# session's arrival is recorded, so the replay is timed like the original.
run_on_mock chat 2 <<YAML
seed: 12
workload:
  kind: chat
  turns: {dist: uniform, min: 2, max: 4}
  input_tokens: {dist: uniform, min: 5, max: 30}
  output_tokens: {dist: uniform, min: 2, max: 6}
  think_time: 10ms
scheduler: {kind: rate, rate: 20/s}
limits: {max_sessions: 12}
validity: {max_schedule_lag: 2s}
YAML
run_on_mock chat-replay 3 <<YAML
seed: 12
workload: {kind: trace, trace: {path: $WORK/chat/requests.jsonl}}
scheduler: {kind: rate}
validity: {max_schedule_lag: 2s}
YAML
python3 - "$WORK/chat/requests.jsonl" "$WORK/chat-replay/requests.jsonl" <<'PY'
import json, sys
KEYS = ("parents", "history_parent", "new_input_length", "output_length", "wait_after_ready",
        "requested_input_tokens", "arrival", "intended_us", "body_hash")
def load(path):
    return {(r["session"], r["node"]): {k: r.get(k) for k in KEYS} for r in map(json.loads, open(path))}
recorded, replayed = load(sys.argv[1]), load(sys.argv[2])
assert sorted(recorded) == sorted(replayed), f"different requests: {sorted(set(recorded) ^ set(replayed))}"
for key, row in recorded.items():
    got = replayed[key]
    # a session's first request starts at its arrival; later turns depend on the replies' timing
    if key[1] == 0:
        assert abs(row["intended_us"] - got["intended_us"]) < 1, f"{key}: arrival moved"
    row, got = dict(row, intended_us=None), dict(got, intended_us=None)
    assert row == got, f"chat request {key} differs: recorded {row}, replayed {got}"
print(f"ok: {len(replayed)} chat requests replayed identically, timed")
PY
echo "ok: a timed chat run replays with the same requests and arrivals"

run_on_mock compact 1 <<YAML
seed: 3
workload:
  kind: chat
  turns: 6
  input_tokens: 60
  output_tokens: 20
  compaction: {limit_tokens: 200, summary_tokens: 30}
scheduler: {kind: concurrent, concurrency: 2}
limits: {max_sessions: 4}
validity: {max_schedule_lag: 2s}
YAML
run_on_mock compact-replay 2 < <(sed -e '/^target:/d' -e '/^limits:/d' \
    -e "s|kind: chat|kind: trace\n  trace: {path: $WORK/compact/requests.jsonl}|" "$WORK/compact.yaml")
python3 - "$WORK/compact/requests.jsonl" "$WORK/compact-replay/requests.jsonl" <<'PY'
import json, sys
def load(path):
    rows = [json.loads(line) for line in open(path)]
    nodes = sorted((r["session"], r["node"]) for r in rows if not r.get("compaction"))
    return nodes, sum(1 for r in rows if r.get("compaction"))
(nodes_a, summaries_a), (nodes_b, summaries_b) = load(sys.argv[1]), load(sys.argv[2])
assert summaries_a > 0, "the recorded run never compacted"
assert nodes_a == nodes_b, f"different nodes: {sorted(set(nodes_a) ^ set(nodes_b))}"
assert summaries_a == summaries_b, f"{summaries_a} summaries recorded, {summaries_b} replayed"
print(f"ok: {len(nodes_b)} nodes and {summaries_b} summarise requests replayed")
PY
echo "ok: a compacting chat replays with its own compaction"
