#!/bin/bash
# Secrets on a secured fleet (a CURVE controller and two workers, loopback): the API key comes from
# a file (target.api_key_file) and the X-Api-Key header from the workers' environment
# ({env: STAMPEDE_TEST_HEADER}, which the controller's environment does not have); the server
# answers every third request with a 401 whose body echoes both. Asserted:
#  - every request carried the key and the header (the preflight before the start too);
#  - neither appears in anything stampede printed or wrote: the controller's stdout and stderr,
#    both workers' logs, results.json, config.yaml, requests.jsonl; the echoed error messages
#    read <redacted> instead;
#  - under umask 022 the output files are created mode 0640.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

KEY="sk-stampede-secret-$RANDOM$RANDOM$RANDOM"
HEADER_SECRET="hdr-secret-$RANDOM$RANDOM"
printf '%s\n' "$KEY" >"$WORK/api.key"
start_test_server recording_server.py recording serve "$WORK/seen.jsonl" --words hi --reject-every 3

(cd "$WORK" && "$STAMPEDE" keygen controller worker >/dev/null) || fail "keygen failed"
mkdir "$WORK/authorized" && cp "$WORK/worker.pub" "$WORK/authorized/"
write_workload "$WORK/w.yaml" endpoints="[$URL]" \
    headers="{X-Api-Key: {env: STAMPEDE_TEST_HEADER}}" input_tokens=4 output_tokens=1 concurrency=2 \
    max_requests=30
sed -i "s|^target:|target:\n  api_key_file: $WORK/api.key|" "$WORK/w.yaml"

umask 022
start_controller "$WORK/ctl.err" "$WORK/w.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 2 \
    --out "$WORK/out" --trace --register-timeout 60 --key "$WORK/controller.key" \
    --authorized-keys "$WORK/authorized"
export STAMPEDE_TEST_HEADER=$HEADER_SECRET
for id in w1 w2; do
    start_once_worker "$id" --key "$WORK/worker.key" --server-key "$WORK/controller.pub"
done
unset STAMPEDE_TEST_HEADER
wait_controller 60
[ "$CONTROLLER_RC" = 0 ] || [ "$CONTROLLER_RC" = 3 ] ||
    fail "controller exit status $CONTROLLER_RC: $(tail -5 "$WORK/ctl.err")"

python3 "$TESTS_DIR/recording_server.py" check "$WORK/seen.jsonl" "$KEY" "$HEADER_SECRET" 30 \
    "$WORK/ctl.err" "$WORK/ctl.err.out" "$WORK/w1.err" "$WORK/w2.err" "$WORK"/out/* ||
    fail "the secrets went astray"
grep -q 'invalid credentials: Bearer <redacted> / <redacted>' "$WORK/out/requests.jsonl" ||
    fail "the echoed 401 messages are not in the trace, redacted: $(grep -m1 401 "$WORK/out/requests.jsonl")"
grep -q 'X-Api-Key"\?: {env: "\?STAMPEDE_TEST_HEADER"\?}' "$WORK/out/config.yaml" ||
    fail "config.yaml does not show where the header comes from: $(grep -A3 headers "$WORK/out/config.yaml")"
for f in results.json config.yaml requests.jsonl; do
    [ -s "$WORK/out/$f" ] || fail "$f was not written"
    assert_equal "mode of $f" "$(stat -c %a "$WORK/out/$f")" 640
done
echo "ok: key and header reached the server on all 30 requests and nowhere else; outputs 0640"
