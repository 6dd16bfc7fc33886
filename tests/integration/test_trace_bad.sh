#!/bin/bash
# A bad trace is refused by `stampede run` before anything runs, exit 1, with the trace file, line,
# key and reason (docs/workloads.md, "The session-trace format"): an unknown parent, a cycle, a
# history parent that is not an ancestor, a missing key (session and Mooncake formats).
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

check() {
    local name=$1 format=$2 expected=$3
    cat >"$WORK/$name.yaml" <<YAML
target: {endpoints: [http://127.0.0.1:9]}
workload:
  kind: trace
  trace: {path: $name.jsonl, format: $format}
scheduler: {kind: concurrent, concurrency: 2}
YAML
    run_bounded 30 /dev/null "$WORK/$name.err" "$WORK/$name.yaml"
    [ "$RUN_RC" = 1 ] || fail "$name: exit $RUN_RC, expected 1: $(cat "$WORK/$name.err")"
    local got
    got=$(head -1 "$WORK/$name.err")
    [ "$got" = "run: $WORK/$name.jsonl:$expected" ] ||
        fail "$name: expected 'run: $WORK/$name.jsonl:$expected', got '$got'"
    echo "ok: $name: $expected"
}

cat >"$WORK/parent.jsonl" <<'JSONL'
{"session": 1, "node": "a", "new_input_length": 4, "output_length": 2}
{"session": 1, "node": "b", "parents": ["z"], "new_input_length": 4, "output_length": 2}
JSONL
check parent session "2: parents: session '1': node 'b': unknown parent 'z'"

cat >"$WORK/cycle.jsonl" <<'JSONL'
{"session": "s", "node": "a", "parents": ["b"], "new_input_length": 4, "output_length": 2}
{"session": "s", "node": "b", "parents": ["a"], "new_input_length": 4, "output_length": 2}
JSONL
check cycle session "1: parents: session 's': node 'a' is on a cycle: a -> b -> a"

cat >"$WORK/ancestor.jsonl" <<'JSONL'
{"session": 1, "node": "a", "new_input_length": 4, "output_length": 2}
{"session": 1, "node": "b", "parents": ["a"], "new_input_length": 4, "output_length": 2}
{"session": 1, "node": "c", "parents": ["a"], "history_parent": "b", "new_input_length": 4, "output_length": 2}
JSONL
check ancestor session "3: history_parent: session '1': node 'c': history parent 'b' is not an ancestor of it"

cat >"$WORK/mooncake.jsonl" <<'JSONL'
{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}
{"timestamp": 5, "output_length": 2, "hash_ids": [1]}
JSONL
check mooncake mooncake "2: input_length: missing key 'input_length'"
echo "ok: bad traces are refused with file:line, key and reason"
