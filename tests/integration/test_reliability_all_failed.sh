#!/bin/bash
# Every request fails: a mock answering every request with an HTTP error (--fail-rate 1).
#  - HTTP 500 through `stampede run --workers 2`, 40 requests: exit 1; stderr says "every request
#    failed (40 of 40)" and names the class (http_500), the status, the server's message and the
#    endpoint; results.json is still written (no lost data): 0 ok, 40 failed, errors.http_500 40;
#    the table shows the error class.
#  - HTTP 429 through `stampede controller` + 2 `stampede worker --once`, 20 requests: exit 1,
#    "every request failed (20 of 20)" with class http_429, results.json with errors.http_429 20.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 1 --fail-rate 1
URL500=$MOCK_URL
write_workload "$WORK/f500.yaml" seed=3 ignore_eos=true concurrency=4 max_requests=40
run_bounded 60 "$WORK/table500" "$WORK/run500.err" "$WORK/f500.yaml" --workers 2 \
    --target "$URL500" --out "$WORK/out500"
assert_equal "exit status when every request got HTTP 500" "$RUN_RC" 1
grep -q "every request failed (40 of 40): first error: http_500: HTTP 500: simulated failure (--fail-rate) ($URL500)" \
    "$WORK/run500.err" || fail "message: $(grep -v '^\[' "$WORK/run500.err" | tail -3)"
R="$WORK/out500/results.json"
[ -f "$R" ] || fail "no results.json when every request failed"
assert_equal "requests_ok" "$(json_value "$R" 'l["requests_ok"]')" 0
assert_equal "requests_failed" "$(json_value "$R" 'l["requests_failed"]')" 40
assert_equal "errors" "$(json_value "$R" 'l["errors"]')" \
    '{"connect": 0, "timeout": 0, "http_4xx": 0, "http_5xx": 0, "incomplete": 0, "protocol": 0, "http_429": 0, "context_length": 0, "server_error_event": 0, "not_sse": 0, "no_done": 0, "refused": 0, "reset_before_headers": 0, "reset_mid_stream": 0, "truncated_json": 0, "malformed_sse": 0, "http_500": 40, "http_503": 0, "client_fd_limit": 0, "http_529": 0}'
grep -Eq "errors +http_500 40 \(100\.00 %\)" "$WORK/table500" || fail "table: $(head -5 "$WORK/table500")"

start_mock --ttft-ms 5 --itl-ms 1 --fail-rate 1 --fail-status 429
URL429=$MOCK_URL
write_workload "$WORK/f429.yaml" seed=3 ignore_eos=true concurrency=4 max_requests=20
start_controller "$WORK/ctl.err" "$WORK/f429.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 2 \
    --target "$URL429" --out "$WORK/out429" --register-timeout 20
start_once_worker w1
start_once_worker w2
wait_controller 30
assert_equal "controller exit status when every request got HTTP 429" "$CONTROLLER_RC" 1
grep -q "every request failed (20 of 20): first error: http_429: HTTP 429: .*($URL429)" "$WORK/ctl.err" ||
    fail "message: $(grep -v '^\[' "$WORK/ctl.err" | tail -3)"
R="$WORK/out429/results.json"
[ -f "$R" ] || fail "no results.json when every request failed (controller)"
assert_equal "errors.http_429" "$(json_value "$R" 'l["errors"]["http_429"]')" 20
assert_equal "requests_ok" "$(json_value "$R" 'l["requests_ok"]')" 0
echo "ok: every request failing exits 1 naming the class, status and endpoint; results still written"
