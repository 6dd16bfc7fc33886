#!/bin/bash
# workload.dataset end to end, on a server that records every request (graph_server.py: each
# reply is 4 words of its own), with the ShareGPT fixture of examples/dataset-chat.yaml:
#  - each request's user turns are the conversation's user turns from the file, in order (two in
#    a row joined by a newline), its last one the new turn;
#  - the assistant turns in its history are the server's own replies, never the file's;
#  - max_tokens is the file's reply's length in words (workload.output_tokens for a turn the file
#    gives no reply to), and the server is asked every turn of every conversation once;
#  - the same requests (and workload_digest) with 1 worker and with 3.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
src=${STAMPEDE_SRC:-$(cd "$here/../.." && pwd)}
dataset=$src/examples/datasets/chat-small.json

for workers in 1 3; do
    start_test_server graph_server.py "w$workers" --gap-ms 1 --log "$WORK/w$workers.jsonl"
    cat >"$WORK/w$workers.yaml" <<YAML
seed: 3
target: {api: chat, model: graph, endpoints: [$URL]}
workload:
  kind: chat
  output_tokens: 64
  dataset: {path: $dataset, format: sharegpt}
scheduler: {kind: concurrent, concurrency: 4}
YAML
    run_bounded 60 "$WORK/w$workers.out" "$WORK/w$workers.err" "$WORK/w$workers.yaml" \
        --workers "$workers" --out "$WORK/out-$workers" --allow-invalid
    [ "$RUN_RC" = 0 ] || fail "$workers workers: the run exited $RUN_RC: $(tail -5 "$WORK/w$workers.err")"
done

python3 - "$dataset" "$WORK/w1.jsonl" "$WORK/w3.jsonl" "$WORK/out-1/results.json" \
    "$WORK/out-3/results.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
turns = {}  # the conversation's user turns and the words of the file's reply to each
for row in data:
    t = []
    for m in row["conversations"]:
        if m["from"] == "human":
            if t and t[-1][1] is None:
                t[-1][0] += "\n" + m["value"]
            else:
                t.append([m["value"], None])
        elif m["from"] == "gpt" and t:
            t[-1][1] = len(m["value"].split())
    turns[t[0][0]] = t
files = set(m["value"] for row in data for m in row["conversations"] if m["from"] == "gpt")

def check(path):
    seen = []
    for line in open(path):
        r = json.loads(line)
        msgs = r["messages"]
        users = [m["content"] for m in msgs if m["role"] == "user"]
        conv = turns.get(users[0])
        assert conv, f"request {r['n']}: its first turn is not a conversation's: {users[0]!r}"
        k = len(users) - 1
        assert users == [u for u, _ in conv[:k + 1]], f"request {r['n']}: user turns {users}"
        replies = [m["content"] for m in msgs if m["role"] == "assistant"]
        assert len(replies) == k, f"request {r['n']}: {len(replies)} replies for turn {k}"
        for a in replies:
            assert a not in files, f"request {r['n']}: the file's reply {a!r} in its history"
            assert a.startswith("r") and len(a.split()) == 4, f"not the server's reply: {a!r}"
        expected = conv[k][1] if conv[k][1] else 64
        assert r["max_tokens"] == expected, f"request {r['n']}: max_tokens {r['max_tokens']}, " \
            f"expected {expected}"
        seen.append((users[0], k, r["max_tokens"]))
    want = sorted((c[0][0], k, c[k][1] or 64) for c in turns.values() for k in range(len(c)))
    assert sorted(seen) == want, f"{path}: {len(seen)} requests, expected {len(want)}"
    return sorted(seen)

one, three = check(sys.argv[2]), check(sys.argv[3])
assert one == three, "1 and 3 workers sent different requests"
digests = [json.load(open(p))["levels"][0]["workload_digest"] for p in sys.argv[4:6]]
assert digests[0] == digests[1], digests
print(f"ok: {len(one)} requests, the same for 1 and 3 workers (digest {digests[0]})")
PY
[ $? = 0 ] || fail "the requests sent are not the dataset's"
echo "ok: a dataset's conversations replayed with their real user turns and the server's replies"
