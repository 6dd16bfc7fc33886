#!/bin/bash
# The diamond presets as shipped (examples/diamond-a2a.yaml, diamond-langgraph.yaml), 24 tasks at
# concurrency 8 on a fast mock that keeps their max_model_len 4096: the frameworks budget
# max_tokens against 4096 from the prompt they count (graph.context_limit), and A2A's envelope
# (message_overhead_tokens), which its framework does not count, pushes the long tasks' executor
# contexts past 4096: the mock answers HTTP 400 with vLLM's message, as the scaling report saw
# (§4.7). LangGraph, on the same seed and the same tasks, fits its budget and gets fewer (none).
# Each framework's per-step overhead (graph.step_overhead) is a wait before every hand-off.
# ctest: parallel (counts of 400s and waits of 100-500 ms checked as lower bounds)
source "$(dirname "$0")/protocol_lib.sh"

for fw in a2a langgraph; do
    sed -e 's/^  concurrency: 24$/  concurrency: 8/' -e 's/^  max_sessions: 48$/  max_sessions: 24/' \
        -e 's/^  profile: tp1-fp8$/  ttft: 5ms\n  itl: 1ms/' \
        "$STAMPEDE_SRC/examples/diamond-$fw.yaml" >"$WORK/$fw.yaml"
    grep -q "^  concurrency: 8$" "$WORK/$fw.yaml" && grep -q "^  itl: 1ms$" "$WORK/$fw.yaml" &&
        grep -q "^  max_model_len: 4096$" "$WORK/$fw.yaml" || fail "$fw: the preset changed shape"
    run_bounded 90 /dev/null "$WORK/$fw.err" "$WORK/$fw.yaml" --workers 2 --trace \
        --allow-invalid --out "$WORK/$fw"
    [ "$RUN_RC" = 0 ] || fail "$fw: the run exited $RUN_RC: $(tail -5 "$WORK/$fw.err")"
done

check_results "$WORK/a2a" "$WORK/langgraph" <<'PY' || fail "A2A did not get more 400s than LangGraph"
def run(out):
    rows = [json.loads(line) for line in open(os.path.join(out, "requests.jsonl"))]
    return rows, [r for r in rows if r["status"] == 400]
a2a, a2a_400 = run(sys.argv[1])
lg, lg_400 = run(argv[0])
assert len(a2a_400) >= 2, f"A2A got {len(a2a_400)} HTTP 400s of {len(a2a)} requests"
assert len(lg_400) < len(a2a_400), (len(lg_400), len(a2a_400))
assert all(r["role_name"] == "executor" for r in a2a_400), [r["role_name"] for r in a2a_400]
assert all("maximum context length is 4096" in r["error_message"] for r in a2a_400), a2a_400[0]
# the same tasks: every session LangGraph ran whole, A2A lost only where an executor was refused
lost = {r["session"] for r in a2a_400}
assert {r["session"] for r in lg} == {r["session"] for r in a2a} == set(range(24))
assert len(lg) - len(lg_400) == 96, len(lg)
# a refused executor's budget: LangGraph's twin asked for what 4096 leaves, exactly
twins = {(r["session"], r["node"]): r for r in lg}
for r in a2a_400:
    t = twins[(r["session"], r["node"])]
    assert t["status"] == 200 and t["usage"]["prompt_tokens"] + t["requested_output_tokens"] <= 4096, t
budgeted = [r for r in lg if r["usage"]["prompt_tokens"] + r["requested_output_tokens"] == 4096]
assert budgeted and all(r["requested_output_tokens"] < r["output_length"] for r in budgeted), \
    "no LangGraph request had its max_tokens cut to what 4096 leaves"
# step_overhead: every hand-off waits 500 ms (LangGraph) / 100 ms (A2A), and no root waits
for rows, wait in ((lg, 0.5), (a2a, 0.1)):
    assert all(r["wait_after_ready"] == (wait if r["parents"] else 0) for r in rows), wait
print(f"A2A {len(a2a_400)} HTTP 400 of {len(a2a)} requests, LangGraph {len(lg_400)} of {len(lg)}")
PY
echo "ok: A2A's envelopes push executors past max_model_len 4096; LangGraph fits its budget"
