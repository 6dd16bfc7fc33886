#!/bin/bash
# A diamond session graph from the workload file, on a server that records every request:
#  - the executors' prompt opens with the planner's reply, and the aggregator's prompt holds
#    every executor's reply verbatim (upstream text is filled in, not invented);
#  - executors: parallel overlap in time; executors: sequential never do;
#  - results.json names the roles (per_role: planner, executor, aggregator);
#  - with executors of unequal length (the server staggers them), parallel executors wait for their
#    siblings (sibling_wait > 0: the scaling report's idle/wait) and sequential ones never do
#    (exactly 0), and a sequential session's idle (makespan - critical path) is about 0 (a few ms);
#    critical path <= makespan in both.
source "$(dirname "$0")/protocol_lib.sh"

for mode in parallel sequential; do
    run_on_graph_server "$mode" 3 2 60 --stagger-ms 80 <<YAML
workload:
  kind: graph
  system_prompt_tokens: 8
  graph:
    shape: diamond
    executors: $mode
    executor_count: 3
    nodes:
      planner: {input_tokens: 12, output_tokens: 4}
      executor: {input_tokens: 6, output_tokens: 4}
      aggregator: {input_tokens: 5, output_tokens: 4}
YAML

    python3 - "$WORK/$mode.jsonl" "$mode" "$WORK/out-$mode/results.json" <<'PY'
import json, sys
log, mode, results = sys.argv[1], sys.argv[2], sys.argv[3]
rows = sorted((json.loads(line) for line in open(log)), key=lambda r: r["n"])
assert len(rows) == 10, f"{mode}: the server saw {len(rows)} requests, expected 2 sessions of 5"
def last_user(row):
    return [m for m in row["messages"] if m["role"] == "user"][-1]["content"]
for s in range(2):  # concurrency 1: a session's five requests arrive together
    planner, executors, aggregator = rows[5 * s], rows[5 * s + 1:5 * s + 4], rows[5 * s + 4]
    for e in executors:
        assert last_user(e).startswith(planner["reply"] + "\n\n"), \
            f"{mode}: an executor's prompt does not open with the planner's reply: {last_user(e)!r}"
        assert not any(m["role"] == "assistant" for m in e["messages"]), \
            f"{mode}: an executor (history none) inherited turns: {e['messages']!r}"
    report = last_user(aggregator)
    for e in executors:
        assert e["reply"] in report, \
            f"{mode}: the aggregator's prompt lacks executor reply {e['reply']!r}: {report!r}"
        assert planner["reply"] not in report
    spans = sorted((e["start"], e["end"]) for e in executors)
    if mode == "parallel":
        assert max(a for a, _ in spans) < min(b for _, b in spans), \
            f"parallel executors did not overlap: {spans}"
    else:
        for (a0, b0), (a1, b1) in zip(spans, spans[1:]):
            assert a1 >= b0, f"sequential executors overlapped: {spans}"
    assert aggregator["start"] >= max(b for _, b in spans), "the aggregator ran before its parents"
level = json.load(open(results))["levels"][0]
roles = level["per_role"]
for name, n in (("planner", 2), ("executor", 6), ("aggregator", 2)):
    assert name in roles, f"{mode}: per_role lacks {name}: {sorted(roles)}"
    assert roles[name]["requests_ok"] == n, f"{mode}: {name}: {roles[name]['requests_ok']} ok requests"
sess = level["sessions"]
assert sess["count"] == 2, f"{mode}: {sess['count']} sessions counted"
assert sess["critical_path_ms"]["max"] <= sess["makespan_ms"]["max"] + 0.001, sess
wait = sess["sibling_wait_ms"]
if mode == "parallel":
    # executors of 240, 320 and 400 ms sent together: waits of about 160 + 80 ms per session
    assert wait["min"] > 100, f"parallel: sibling wait {wait}"
else:
    assert wait["max"] == 0, f"sequential: sibling wait {wait}"
    # the chain is the whole session: idle = makespan - critical path is only the worker's own
    # gap between a reply's end and the next send (the scaling report's "sequential: idle ~ 0")
    idle = sess["idle_ms"]
    assert idle["max"] <= 10, f"sequential: idle {idle}, expected about 0"
print(f"ok: {mode} diamond, sibling wait {wait['mean']:.1f} ms, idle max {sess['idle_ms']['max']} ms")
PY
done
echo "ok: diamond prompts carry upstream replies; parallel executors overlap, sequential ones do not"
