#!/bin/bash
# workload.scaffold on a server that records every request:
#  - every request carries the system prompt and a tools array of valid OpenAI function tools,
#    the same bytes in every session of a role; each role has its own, of its own sizes;
#  - with tool_results: 1 every turn after the first answers a tool call: a role "tool" message
#    with the tool_call_id of the assistant message before it, which carries the call;
#  - a history `none` sub-agent (a diamond executor) shares only the scaffold with the planner.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

run_on_graph_server linear 11 3 5 <<YAML
workload:
  kind: graph
  scaffold: {system_tokens: 30, tools: 3, tool_tokens: 12, tool_results: 1}
  graph:
    shape: linear
    length: 4
    nodes:
      turn: {input_tokens: 6, output_tokens: 4}
YAML

python3 - "$WORK/linear.jsonl" <<'PY'
import json, sys
rows = sorted((json.loads(line) for line in open(sys.argv[1])), key=lambda r: r["n"])
assert len(rows) == 12, f"the server saw {len(rows)} requests, expected 3 sessions of 4"
tools = json.dumps(rows[0]["tools"])
system = rows[0]["messages"][0]
assert system["role"] == "system" and len(system["content"].split()) == 30, system
assert len(rows[0]["tools"]) == 3, rows[0]["tools"]
for k, tool in enumerate(rows[0]["tools"]):
    assert tool["type"] == "function", tool
    f = tool["function"]
    assert f["name"] == f"tool_{k}" and len(f["description"].split()) == 12, f
    assert f["parameters"]["type"] == "object" and "input" in f["parameters"]["properties"], f
for r in rows:
    assert json.dumps(r["tools"]) == tools, f"request {r['n']}: the tools array differs"
    assert r["messages"][0] == system, f"request {r['n']}: the system prompt differs"
for s in range(3):  # concurrency 1: a session's four turns arrive together
    turns = rows[4 * s:4 * s + 4]
    assert turns[0]["messages"][-1]["role"] == "user", "a first turn has no call to answer"
    for prev, turn in zip(turns, turns[1:]):
        m = turn["messages"]
        result, call = m[-1], m[-2]
        assert result["role"] == "tool", f"request {turn['n']}: last message {result!r}"
        assert call["role"] == "assistant" and call["content"] == prev["reply"], call
        calls = call["tool_calls"]
        assert len(calls) == 1 and calls[0]["type"] == "function", calls
        assert calls[0]["id"] == result["tool_call_id"], (calls, result)
        assert calls[0]["function"]["name"] in {f"tool_{k}" for k in range(3)}, calls
        json.loads(calls[0]["function"]["arguments"])
        # the prompt before the new turn is the previous request's prompt and reply, verbatim
        assert m[:len(prev["messages"])] == prev["messages"], \
            f"request {turn['n']} does not continue request {prev['n']}"
print("ok: linear tools and tool results")
PY

run_on_graph_server diamond 11 2 5 <<YAML
workload:
  kind: graph
  roles: [planner, executor, aggregator]
  scaffold:
    system_tokens: 20
    tools: 2
    tool_tokens: 8
    roles: {executor: {system_tokens: 12, tools: 1}}
  graph:
    shape: diamond
    executor_count: 2
    nodes:
      planner: {input_tokens: 6, output_tokens: 4}
      executor: {input_tokens: 5, output_tokens: 4}
      aggregator: {input_tokens: 5, output_tokens: 4}
YAML

python3 - "$WORK/diamond.jsonl" <<'PY'
import json, sys
rows = sorted((json.loads(line) for line in open(sys.argv[1])), key=lambda r: r["n"])
assert len(rows) == 8, f"the server saw {len(rows)} requests, expected 2 sessions of 4"
roles = {}
for s in range(2):
    planner, e0, e1, aggregator = rows[4 * s:4 * s + 4]
    for name, r in (("planner", planner), ("executor", e0), ("executor", e1),
                    ("aggregator", aggregator)):
        scaffold = (json.dumps(r["messages"][0]), json.dumps(r["tools"]))
        assert roles.setdefault(name, scaffold) == scaffold, f"{name}: scaffold differs"
    for e in (e0, e1):  # history none: the executor's scaffold and its own task, nothing more
        assert [m["role"] for m in e["messages"]] == ["system", "user"], e["messages"]
        assert e["messages"][1]["content"].startswith(planner["reply"] + "\n\n")
        assert planner["messages"][1]["content"] not in e["messages"][1]["content"]
assert len({v for v in roles.values()}) == 3, "two roles share a scaffold"
sizes = {name: (len(json.loads(m)["content"].split()), len(json.loads(t)),
                len(json.loads(t)[0]["function"]["description"].split()))
         for name, (m, t) in roles.items()}
assert sizes == {"planner": (20, 2, 8), "executor": (12, 1, 8), "aggregator": (20, 2, 8)}, sizes
print("ok: one scaffold per role, the same in every session")
PY
echo "ok: scaffold tools, tool results and per-role scaffolds as agents send them"
