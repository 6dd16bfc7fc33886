#!/bin/bash
# workload.compaction on a server that records every request (each reply is 4 words):
#  - a summarise request goes out exactly when a turn's prompt + max_tokens would pass the limit;
#    it holds the turn's conversation and then the instruction, with max_tokens summary_tokens;
#  - the turn then goes out with the scaffold, the server's summary verbatim and its own text,
#    none of the turns before it; the next turn continues from there;
#  - the count is reported: the terminal's session line, results.json sessions.compactions and a
#    compaction row in roles.
# Both for a linear graph (history through the history parent) and a chat (every ancestor).
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

for kind in linear chat; do
    shape='kind: chat, turns: 8'
    [ "$kind" = chat ] || shape='kind: graph, graph: {shape: linear, length: 8, nodes: {turn: {}}}'
    run_on_graph_server "$kind" 4 2 2 <<YAML
workload: {$shape,
  system_prompt_tokens: 10,
  input_tokens: 10, output_tokens: 4,
  compaction: {limit_tokens: 60, summary_tokens: 7, prompt_tokens: 5}}
YAML

    python3 - "$WORK/$kind.jsonl" "$WORK/out-$kind/results.json" "$WORK/$kind.out" "$kind" <<'PY'
import json, sys
rows = sorted((json.loads(line) for line in open(sys.argv[1])), key=lambda r: r["n"])
words = lambda r: sum(len(m["content"].split()) for m in r["messages"])
summarise = [i for i, r in enumerate(rows) if r["max_tokens"] == 7]
# 20 + 14k words at turn k: turn 3 (62 + 4 > 60) compacts; from the summary (24 words at
# turn 3) turn 6 (66 + 4) compacts again: two per session of 8 turns
assert len(summarise) == 4, f"{len(summarise)} summarise requests, expected 2 per session"
assert len(rows) == 2 * 8 + 4, f"the server saw {len(rows)} requests"
instruction = rows[summarise[0]]["messages"][-1]["content"]
assert len(instruction.split()) == 5, instruction
for i in summarise:
    s, before, after = rows[i], rows[i - 1], rows[i + 1]
    assert s["messages"][-1]["content"] == instruction, "the instruction differs"
    # the summarise request continues the conversation the turn would have continued
    assert s["messages"][:-1] == before["messages"] + [{"role": "assistant",
                                                        "content": before["reply"]}], \
        f"request {i} does not hold the conversation"
    turn_words = words(before) + 4 + 10  # the turn it replaces: previous prompt, reply, new text
    assert turn_words + 4 > 60 and words(before) + 4 <= 60, (i, turn_words)
    m = after["messages"]
    assert [x["role"] for x in m] == ["system", "user", "user"], m
    assert m[0] == s["messages"][0], "the scaffold changed across the compaction"
    assert m[1]["content"] == s["reply"], "the summary is not the server's reply verbatim"
    assert not any(before["reply"] in x["content"] for x in m), "a turn before the compaction"
    nxt = rows[i + 2]
    assert nxt["messages"][:3] == m and nxt["messages"][3]["content"] == after["reply"], \
        "the turn after the compaction does not continue from the summary"
level = json.load(open(sys.argv[2]))["levels"][0]
c = level["sessions"]["compactions"]
assert c["total"] == 4 and c["mean"] == 2 and c["max"] == 2, c
assert level["roles"]["compaction"]["requests"] == 4, level["roles"].keys()
role = "turn" if sys.argv[4] == "linear" else "default"
assert level["roles"][role]["requests"] == 16, level["roles"]
assert level["sessions"]["count"] == 2, level["sessions"]
text = open(sys.argv[3]).read()
assert "2.00 compactions (max 2, 4 in all)" in text, text
print(f"ok: {sys.argv[4]} compaction")
PY
done
echo "ok: compaction summarises at the limit, continues from the summary and is counted"
