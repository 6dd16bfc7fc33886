#!/bin/bash
# The rest of a Messages or Responses reply, against truth_server.py --api (4 requests a run, one
# at a time), through `stampede run --trace`:
#  - a tool call (its arguments in input_json_delta or response.function_call_arguments.delta,
#    after 4 text tokens): ok, finish_reason tool_calls, 8 answer events a request (Messages'
#    empty first input_json_delta is no token);
#  - a mid-stream error after 3 tokens (Messages: event: error with Anthropic's overloaded_error;
#    Responses: response.failed): class server_error_event, with the server's message;
#  - Messages answering HTTP 529 with Anthropic's error body: class http_529, its message shown;
#    and with target.retry_on_429: honour, two 529s (Retry-After: 0) then answers: every request
#    ok, the two resends counted as retries.
# ctest: parallel (counts and messages only)
source "$(dirname "$0")/protocol_lib.sh"

# run NAME API [honour] -- SERVER_ARGS...: one run (with target.retry_on_429: honour and no wait
# cap when asked); results in $WORK/NAME.out.
run() {
    local name=$1 api=$2 honour=
    shift 2
    [ "$1" = -- ] || honour=$1
    shift $([ -n "$honour" ] && echo 2 || echo 1)
    start_test_server truth_server.py "$name" --api "$api" --tokens 8 --gap-ms 2 "$@"
    write_workload "$WORK/$name.yaml" seed=5 api="$api" model=truth timeout=20s max_requests=4
    [ -z "$honour" ] ||
        sed -i 's/^target:$/target:\n  retry_on_429: honour\n  retry_after_max: 0s/' "$WORK/$name.yaml"
    run_bounded 60 "$WORK/$name.table" "$WORK/$name.err" "$WORK/$name.yaml" --workers 1 \
        --target "$URL" --out "$WORK/$name.out" --trace
}

# expect NAME PYTHON: asserts PYTHON over run NAME's results (level, rows, name).
expect() {
    check_results "$WORK/$1.out" "$1" <<PY
name = argv[0]
$2
print(f"ok: {name}: {level['requests_ok']} ok, errors {dict((k, v) for k, v in level['errors'].items() if v)}")
PY
}

for api in messages responses; do
    run "$api-tool" "$api" -- --tool 4
    assert_equal "$api-tool: exit status" "$RUN_RC" 0
    expect "$api-tool" '
assert level["requests_ok"] == 4 and level["finish_reasons"]["tool_calls"] == 4, level["finish_reasons"]
assert [(r["reasoning_chunks"], r["content_chunks"]) for r in rows] == [(0, 8)] * 4, \
    [(r["reasoning_chunks"], r["content_chunks"]) for r in rows]'

    run "$api-error" "$api" -- --error-after 3
    message=$([ "$api" = messages ] && echo Overloaded || echo "engine error")
    expect "$api-error" "
assert level['requests_failed'] == 4 and level['errors']['server_error_event'] == 4, level['errors']
for r in rows:
    assert '$message' in r['error_message'], r['error_message']"
done

run messages-529 messages -- --status 529
expect messages-529 '
assert level["requests_failed"] == 4 and level["errors"]["http_529"] == 4, level["errors"]
assert all(r["error_message"] == "HTTP 529: Overloaded" for r in rows), rows[0]["error_message"]'

run messages-529-retried messages honour -- --status 529 --fail-first 2
assert_equal "messages-529-retried: exit status" "$RUN_RC" 0
expect messages-529-retried '
assert level["requests_ok"] == 4 and level["requests_failed"] == 0, level["errors"]
assert level["retries"]["retries_429"] == 2, level["retries"]'
echo "ok: tool calls, mid-stream errors and 529s of Messages and Responses are classified"
