#!/bin/bash
# server_metrics is auto by default: a server whose /metrics answers 404, or a page that is no
# Prometheus page (HTML), is a quiet absence: exactly one line on stderr naming the page, no server
# block and no server table, no "cannot read" error, the run valid and exit 0. server_metrics: none
# asks for nothing. (truth_server.py: 4 tokens 5 ms apart per request.)
# ctest: parallel (messages and contents only)
source "$(dirname "$0")/protocol_lib.sh"

# absent NAME EXTRA_YAML SERVER_ARGS...: a run of 6 requests on a truth server; stdout, stderr and
# results under $WORK/NAME*.
absent() {
    local name=$1 extra=$2
    shift 2
    start_test_server truth_server.py "$name" --tokens 4 --gap-ms 5 "$@"
    cat >"$WORK/$name.yaml" <<YAML
target: {endpoints: [$URL], model: truth}
workload: {kind: requests, input_tokens: 8, output_tokens: 4}
scheduler: {kind: concurrent, concurrency: 2}
limits: {max_requests: 6}
$extra
YAML
    run_bounded 60 "$WORK/$name.out" "$WORK/$name.err" "$WORK/$name.yaml" --workers 1 \
        --out "$WORK/$name"
    [ "$RUN_RC" = 0 ] || fail "$name: the run exited $RUN_RC: $(tail -5 "$WORK/$name.err")"
    check_results "$WORK/$name" <<'PY' || fail "$name: results.json has a server side or is invalid"
assert level["requests_ok"] == 6 and results["validity"]["valid"], results["validity"]
assert level.get("server") is None and level.get("gap") is None, (level.get("server"), level.get("gap"))
PY
    ! grep -q "Server metrics\|Client vs server" "$WORK/$name.out" ||
        fail "$name: a server table on the terminal: $(cat "$WORK/$name.out")"
    ! grep -q "cannot read" "$WORK/$name.err" || fail "$name: said as an error: $(cat "$WORK/$name.err")"
}

absent notfound ""
lines=$(grep -c "server metrics absent: $URL/metrics HTTP 404" "$WORK/notfound.err")
[ "$lines" = 1 ] || fail "a 404 said $lines times, expected once: $(cat "$WORK/notfound.err")"

absent html "server_metrics: auto" --metrics-html
lines=$(grep -c "server metrics absent: $URL/metrics has no vLLM, SGLang or Dynamo names" "$WORK/html.err")
[ "$lines" = 1 ] || fail "an HTML page said $lines times, expected once: $(cat "$WORK/html.err")"
! grep -q "malformed line" "$WORK/html.err" || fail "the HTML page's lines reported: $(cat "$WORK/html.err")"

# Two endpoints, a mock (its /metrics read) and the last truth server (its HTML page): the mock's
# page gives the server side, the other is absent, with no error.
start_mock --ttft-ms 5 --itl-ms 2
cat >"$WORK/mixed.yaml" <<YAML
target: {endpoints: [$MOCK_URL, $URL], model: truth}
workload: {kind: requests, input_tokens: 8, output_tokens: 4}
scheduler: {kind: concurrent, concurrency: 2}
limits: {max_requests: 8}
YAML
run_bounded 60 "$WORK/mixed.out" "$WORK/mixed.err" "$WORK/mixed.yaml" --workers 1 --out "$WORK/mixed"
[ "$RUN_RC" = 0 ] || fail "mixed: the run exited $RUN_RC: $(tail -5 "$WORK/mixed.err")"
check_results "$WORK/mixed" <<'PY' || fail "mixed: the absent page is not quiet beside the read one"
read, gone = level["server"]["pages"]
assert read["dialect"] == "vllm" and read["requests"] == 4 and read["absent"] is None, read
assert gone["absent"] == "absent: has no vLLM, SGLang or Dynamo names" and gone["error"] is None, gone
assert gone["requests"] is None and gone["ttft"] is None, gone  # absent, never zero
PY
grep -q "absent: has no vLLM" "$WORK/mixed.out" || fail "mixed: the table does not say which page is absent"

absent none "server_metrics: none"
! grep -q "server metrics" "$WORK/none.err" || fail "server_metrics: none still scraped: $(cat "$WORK/none.err")"
echo "PASS"
