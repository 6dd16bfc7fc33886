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
    # The example's own mock section (tp1-fp8, max_model_len 4096) gives way to the fast one.
    sed -e 's/^  concurrency: 24$/  concurrency: 12/' -e 's/^  max_sessions: 48$/  max_sessions: 12/' \
        -e '/^mock:$/,$d' "$STAMPEDE_SRC/examples/diamond-$shape.yaml" >"$WORK/$shape.yaml"
    grep -q "max_sessions: 12" "$WORK/$shape.yaml" || fail "examples/diamond-$shape.yaml changed shape"
    grep -A2 "^mock:$" "$STAMPEDE_SRC/examples/diamond-$shape.yaml" | tr -d ' \n' |
        grep -q "^mock:profile:tp1-fp8max_model_len:4096$" ||
        fail "examples/diamond-$shape.yaml: no mock section with profile tp1-fp8 and max_model_len 4096"
    echo "mock: {max_model_len: 1600, ttft: 2ms, itl: 1ms}" >>"$WORK/$shape.yaml"
    run_bounded 60 /dev/null "$WORK/$shape.err" "$WORK/$shape.yaml" --workers 1 --allow-invalid \
        --out "$WORK/$shape"
    [ "$RUN_RC" = 0 ] || fail "$shape run exited $RUN_RC: $(tail -5 "$WORK/$shape.err")"
done
langgraph=$(json_value "$WORK/langgraph/results.json" 'l["errors"]["context_length"]')
a2a=$(json_value "$WORK/a2a/results.json" 'l["errors"]["context_length"]')
[ "$a2a" -gt "$langgraph" ] || fail "A2A got $a2a 400s, LangGraph $langgraph: A2A should get more"
# Per role (the §4.7 table): the aggregators, whose contexts straddle the limit, get the 400s;
# the role's errors_context_length and its errors_http_4xx ("400s") both count them.
role_400s() {
    json_value "$WORK/$1/results.json" \
        "l['roles']['aggregator']['errors_context_length'], l['roles']['aggregator']['errors_http_4xx'], l['roles']['aggregator']['errors']" |
        tr -d '(),'
}
read -r lg_ctx lg_4xx lg_err <<<"$(role_400s langgraph)"
read -r a2a_ctx a2a_4xx a2a_err <<<"$(role_400s a2a)"
[ "$a2a_ctx" -gt 0 ] || fail "A2A's aggregator role has no context-length 400s"
[ "$a2a_ctx" -gt "$lg_ctx" ] ||
    fail "aggregator 400s: A2A $a2a_ctx, LangGraph $lg_ctx: A2A should get more"
[ "$a2a_4xx" -ge "$a2a_ctx" ] && [ "$lg_4xx" -ge "$lg_ctx" ] ||
    fail "errors_http_4xx leaves out the context-length 400s: A2A $a2a_4xx < $a2a_ctx or LangGraph $lg_4xx < $lg_ctx"
[ "$a2a_err" -ge "$a2a_4xx" ] || fail "A2A aggregator errors $a2a_err < its 4xx $a2a_4xx"
echo "ok: history is cached on the mock only with its prefix cache; A2A $a2a 400s > LangGraph $langgraph; aggregator A2A $a2a_ctx > LangGraph $lg_ctx"
