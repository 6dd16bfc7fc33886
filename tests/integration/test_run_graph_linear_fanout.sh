#!/bin/bash
# Session graphs on a server that records every request:
#  - linear: request N+1's prompt holds every earlier turn, request N's reply verbatim as the last
#    assistant message, so the context grows turn by turn;
#  - fanout: the three sub-agents of a round are in flight at once, each starts from the scaffold
#    and main's reply only, and the continuation continues main's conversation with the three
#    reports appended.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

# run_graph NAME GAP_MS GRAPH: one run of two sessions of the graph GRAPH against a fresh
# graph_server.py answering GAP_MS apart and logging to $WORK/NAME.jsonl.
run_graph() {
    run_on_graph_server "$1" 4 2 "$2" <<YAML
workload:
  kind: graph
  system_prompt_tokens: 8
  input_tokens: 5
  output_tokens: 4
  graph: $3
YAML
}

run_graph linear 20 "{shape: linear, length: 6}"
run_graph fanout 80 "{shape: fanout, children: 3, child_length: 1}"

python3 - "$WORK/linear.jsonl" "$WORK/fanout.jsonl" <<'PY'
import json, sys
def rows(path):
    return sorted((json.loads(line) for line in open(path)), key=lambda r: r["n"])
def turns(row):
    return [m for m in row["messages"] if m["role"] != "system"]
linear = rows(sys.argv[1])
assert len(linear) == 12, f"linear: the server saw {len(linear)} requests, expected 2 x 6"
for s in range(2):
    session = linear[6 * s:6 * s + 6]
    for k, row in enumerate(session):
        t = turns(row)
        assert len(t) == 2 * k + 1, f"linear turn {k} sent {len(t)} messages, expected {2 * k + 1}"
        for j in range(k):  # every earlier turn: its user text, then its reply verbatim
            assert t[2 * j] == turns(session[j])[-1], f"linear turn {k}: turn {j}'s text differs"
            assert t[2 * j + 1] == {"role": "assistant", "content": session[j]["reply"]}, \
                f"linear turn {k}: turn {j}'s reply is not there verbatim: {t[2 * j + 1]!r}"
fanout = rows(sys.argv[2])
assert len(fanout) == 10, f"fanout: the server saw {len(fanout)} requests, expected 2 x 5"
for s in range(2):
    main, children, cont = fanout[5 * s], fanout[5 * s + 1:5 * s + 4], fanout[5 * s + 4]
    starts, ends = [c["start"] for c in children], [c["end"] for c in children]
    assert max(starts) < min(ends), f"fanout: the three children were not in flight together"
    for c in children:
        t = turns(c)
        assert len(t) == 1 and t[0]["content"].startswith(main["reply"] + "\n\n"), \
            f"fanout: a child does not start from main's reply alone: {t!r}"
    t = turns(cont)
    assert t[0] == turns(main)[0] and t[1] == {"role": "assistant", "content": main["reply"]}, \
        f"fanout: the continuation does not continue main's conversation: {t[:2]!r}"
    report = t[2]["content"]
    for c in children:
        assert c["reply"] + "\n\n" in report, f"fanout: the report lacks {c['reply']!r}"
print("ok")
PY
echo "ok: linear context grows with every reply verbatim; fanout children run together and report back"
