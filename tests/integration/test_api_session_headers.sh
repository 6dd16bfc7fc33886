#!/bin/bash
# target.session_header and target.replica_header against truth_server.py (--api messages): 4 chat
# sessions of 3 turns, 2 at a time. The server logs each POST's X-Dynamo-Session-ID and the
# messages in its body, and names the replica that answered in X-Replica ("r0" or "r1" by the
# session id), except that session 1 moves to the other replica from its second turn:
#  - every request carries the header; 4 distinct ids, each on 3 requests whose histories grow
#    1, 3, 5 messages (so one id is one session), none sent without it;
#  - affinity.replica and per_endpoint's replica_affinity say 4 sessions checked, 1 moved, not
#    held, and the table prints "replica affinity: BROKEN (1 of 4 sessions moved replica)".
# Then the same sessions over Responses with target.previous_response_id: true: a session's first
# turn sends its one input item and no previous_response_id; each later turn names the id the
# server gave the session's previous turn and sends only its new input item.
# ctest: parallel (counts and messages only)
source "$(dirname "$0")/protocol_lib.sh"

start_test_server truth_server.py sessions --api messages --tokens 4 --gap-ms 1 \
    --session-header X-Dynamo-Session-ID --replica-header X-Replica --move-session 1 \
    --log "$WORK/requests.log"
cat >"$WORK/sessions.yaml" <<YAML
seed: 3
target:
  api: messages
  model: truth
  session_header: X-Dynamo-Session-ID
  replica_header: X-Replica
workload:
  kind: chat
  turns: 3
  input_tokens: 8
  output_tokens: 4
scheduler:
  kind: concurrent
  concurrency: 2
limits:
  max_sessions: 4
YAML
run_bounded 60 "$WORK/table" "$WORK/err" "$WORK/sessions.yaml" --workers 1 --target "$URL" \
    --out "$WORK/out" --trace
assert_equal "exit status" "$RUN_RC" 0
check_results "$WORK/out" "$WORK/requests.log" "$URL" <<'PY'
log = [json.loads(line) for line in open(argv[0])]
assert len(log) == 12 and all(e["session"] is not None for e in log), log
by = collections.defaultdict(list)
for e in log:
    by[e["session"]].append(e["messages"])
assert len(by) == 4, f"{len(by)} session ids: {dict(by)}"
assert all(sorted(counts) == [1, 3, 5] for counts in by.values()), dict(by)
expected = {"sessions_checked": 4, "sessions_moved": 1, "held": False}
assert level["affinity"]["replica"] == expected, level["affinity"]
assert level["per_endpoint"][argv[1]]["replica_affinity"] == expected, level["per_endpoint"]
print(f"ok: ids {sorted(by)} each on 3 requests; replica affinity {level['affinity']['replica']}")
PY
grep -q "replica affinity: BROKEN (1 of 4 sessions moved replica)" "$WORK/table" ||
    fail "no replica affinity line: $(grep -i affinity "$WORK/table")"
start_test_server truth_server.py chained --api responses --tokens 4 --gap-ms 1 \
    --log "$WORK/chained.log"
sed -e 's/api: messages/api: responses\n  previous_response_id: true/' \
    -e '/session_header\|replica_header/d' "$WORK/sessions.yaml" >"$WORK/chained.yaml"
run_bounded 60 "$WORK/chained.table" "$WORK/chained.err" "$WORK/chained.yaml" --workers 1 \
    --target "$URL" --out "$WORK/chained.out" --trace
assert_equal "chained: exit status" "$RUN_RC" 0
check_results "$WORK/chained.out" "$WORK/chained.log" <<'PY'
log = [json.loads(line) for line in open(argv[0])]
assert len(log) == 12 and level["requests_ok"] == 12, (len(log), level["errors"])
given = {e["response_id"]: e for e in log}
firsts = [e for e in log if e["previous_response_id"] is None]
assert len(firsts) == 4, f"{len(firsts)} requests without previous_response_id, expected 4"
depth = {}
for e in log:  # in arrival order: a turn's parent answered before it was sent
    prev = e["previous_response_id"]
    assert e["messages"] == 1, f"{e}: the history was sent"
    depth[e["response_id"]] = 1 if prev is None else depth[prev] + 1
    assert prev is None or prev in given, f"{prev} was never given"
assert sorted(depth.values()) == [1] * 4 + [2] * 4 + [3] * 4, sorted(depth.values())
print("ok: Responses turns chained by previous_response_id, one input item each")
PY
echo "ok: the session header names each session; the replica check finds the one that moved"
