#!/bin/bash
# Session history on the embedded mock (real prefix cache):
#  - a linear session's requests after its first find the conversation cached (cached tokens >
#    0 from the second request on) with the prefix cache on, and none with prefix_cache: false
#    (the mock's --no-prefix-cache). That request N+1's prompt holds request N's reply verbatim
#    is test_run_graph_linear_fanout.sh's, and a history `none` sub-agent sharing only the scaffold
#    is test_run_scaffold.sh's.
#  - A2A's envelope around inter-agent messages (examples/diamond-a2a.yaml) gets more HTTP 400s
#    (max_model_len) than LangGraph (examples/diamond-langgraph.yaml) on the same seed and limit.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

for cache in true false; do
    cat >"$WORK/cache-$cache.yaml" <<YAML
seed: 6
target: {ignore_eos: true}
workload:
  kind: graph
  system_prompt_tokens: 48
  graph:
    shape: linear
    length: 5
    nodes:
      turn: {input_tokens: 40, output_tokens: 8}
scheduler: {kind: concurrent, concurrency: 2}
limits: {max_sessions: 4}
mock: {ttft: 2ms, itl: 1ms, prefix_cache: $cache}
YAML
    run_bounded 60 /dev/null "$WORK/cache-$cache.err" "$WORK/cache-$cache.yaml" --workers 1 \
        --trace --out "$WORK/cache-$cache"
    [ "$RUN_RC" = 0 ] || fail "cache $cache: run exited $RUN_RC: $(tail -5 "$WORK/cache-$cache.err")"
    check_results "$WORK/cache-$cache" "$cache" <<'PY' || fail "cached tokens with prefix_cache: $cache"
on = argv[0] == "true"
assert len(rows) == 20, f"{len(rows)} requests, expected 4 sessions of 5"
for r in rows:
    cached = r["usage"]["cached_tokens"]
    if not on:
        assert cached == 0, f"cache off: session {r['session']} node {r['node']} cached {cached}"
    elif r["node"] > 0:  # the previous turn's prompt and reply, at least, are cached
        assert cached >= 48 + 40 * r["node"], \
            f"session {r['session']} node {r['node']}: cached {cached} of {r['usage']['prompt_tokens']}"
print(f"ok: prefix_cache {argv[0]}")
PY
done

# The example shapes with 12 tasks, a fast mock and a context limit the aggregators straddle:
# LangGraph's aggregator context is ~825 prompt + ~640 completion tokens, A2A's 240 more.
for shape in langgraph a2a; do
    sed -e 's/^  concurrency: 24$/  concurrency: 12/' -e 's/^  max_sessions: 48$/  max_sessions: 12/' \
        -e '/^output:$/,$d' "$STAMPEDE_SRC/examples/diamond-$shape.yaml" >"$WORK/$shape.yaml"
    grep -q "max_sessions: 12" "$WORK/$shape.yaml" || fail "examples/diamond-$shape.yaml changed shape"
    echo "mock: {max_model_len: 1600, ttft: 2ms, itl: 1ms}" >>"$WORK/$shape.yaml"
    run_bounded 60 /dev/null "$WORK/$shape.err" "$WORK/$shape.yaml" --workers 1 --allow-invalid \
        --out "$WORK/$shape"
    [ "$RUN_RC" = 0 ] || fail "$shape run exited $RUN_RC: $(tail -5 "$WORK/$shape.err")"
done
langgraph=$(json_value "$WORK/langgraph/results.json" 'l["errors"]["context_length"]')
a2a=$(json_value "$WORK/a2a/results.json" 'l["errors"]["context_length"]')
[ "$a2a" -gt "$langgraph" ] || fail "A2A got $a2a 400s, LangGraph $langgraph: A2A should get more"
echo "ok: history is cached on the mock only with its prefix cache; A2A $a2a 400s > LangGraph $langgraph"
