#!/bin/bash
# The API key reaches the server and nothing else: `stampede run` with target.api_key_env and a
# secret-looking extra header against a small recording server. Asserted:
#  - every request carried "Authorization: Bearer <key>" and the X-Api-Key header, the preflight
#    before the start as well;
#  - neither secret appears anywhere stampede wrote: stdout, stderr, results.json, config.yaml
#    (where the header is redacted), requests.jsonl, workers.log.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

KEY="sk-stampede-test-$RANDOM$RANDOM$RANDOM"
HEADER_SECRET="hdr-secret-$RANDOM$RANDOM"
start_test_server recording_server.py recording serve "$WORK/seen.jsonl"

write_workload "$WORK/w.yaml" endpoints="[$URL]" \
    api_key_env=STAMPEDE_TEST_API_KEY headers="{X-Api-Key: $HEADER_SECRET}" input_tokens=4 \
    output_tokens=2 concurrency=2 max_requests=10
STAMPEDE_TEST_API_KEY=$KEY timeout 60 "$STAMPEDE" run "$WORK/w.yaml" --workers 2 \
    --out "$WORK/out" --trace >"$WORK/stdout" 2>"$WORK/stderr" ||
    fail "run failed: $(cat "$WORK/stderr")"

python3 "$TESTS_DIR/recording_server.py" check "$WORK/seen.jsonl" "$KEY" "$HEADER_SECRET" 10 \
    "$WORK/stdout" "$WORK/stderr" "$WORK"/out/* || fail "the secrets went astray"
for f in results.json config.yaml requests.jsonl; do
    [ -s "$WORK/out/$f" ] || fail "$f was not written"
done
grep -q "redacted" "$WORK/out/config.yaml" || fail "config.yaml does not show the header as redacted"
echo "ok: the key and the secret header reached the server on all 10 requests (and the preflight) and nowhere else"
