#!/bin/bash
# The preflight: before the start worker 0 sends each endpoint one small request. A dead endpoint
# stops a sweep within 10 s naming the endpoint, the request and curl's answer; a model the
# server does not serve stops the run with its 404 and the models /v1/models lists; an answer that
# is not SSE stops it too. --no-preflight lets the run go on (and fail request by request). The
# embedded mock answers preflight requests outside its counters: its request count is the run's.
# ctest: parallel (content and counts; the one bound is 10 s)
source "$(dirname "$0")/protocol_lib.sh"

DEAD=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$WORK/sweep.yaml" <<YAML
target: {endpoints: [http://127.0.0.1:$DEAD]}
workload: {kind: requests, input_tokens: 8, output_tokens: 3}
scheduler: {kind: concurrent}
sweep:
  concurrency: [1, 2, 4, 8]
  snapshots: {count: 1, duration: 5s}
YAML
started=$(date +%s%N)
run_bounded 60 "$WORK/sweep.out" "$WORK/sweep.err" "$WORK/sweep.yaml" --workers 2 --out "$WORK/sweep"
elapsed_ms=$((($(date +%s%N) - started) / 1000000))
[ "$RUN_RC" != 0 ] || fail "a sweep of a dead endpoint exited 0"
[ "$elapsed_ms" -lt 10000 ] || fail "the dead endpoint stopped the sweep after $elapsed_ms ms"
grep -q "preflight of http://127.0.0.1:$DEAD: POST http://127.0.0.1:$DEAD/v1/chat/completions (model 'mock', max_tokens 1, stream) failed: .*Couldn't connect" \
    "$WORK/sweep.err" || fail "message: $(tail -3 "$WORK/sweep.err")"

start_mock --strict-model --ttft-ms 1 --itl-ms 1
workload() { # file, target lines
    printf 'target:\n%s\nworkload: {kind: requests, input_tokens: 8, output_tokens: 3}\n' "$2" >"$1"
    printf 'scheduler: {kind: concurrent, concurrency: 2}\nlimits: {max_requests: 6}\n' >>"$1"
}
workload "$WORK/model.yaml" "  endpoints: [$MOCK_URL]
  model: llama-3-70b"
run_bounded 60 "$WORK/model.out" "$WORK/model.err" "$WORK/model.yaml" --workers 1 --out "$WORK/model"
[ "$RUN_RC" != 0 ] || fail "a model the server does not serve exited 0"
grep -q "preflight of $MOCK_URL: POST $MOCK_URL/v1/chat/completions (model 'llama-3-70b', max_tokens 1, stream) answered HTTP 404: .*The model \`llama-3-70b\` does not exist.* (the server serves: mock-llama; set target.model)" \
    "$WORK/model.err" || fail "message: $(tail -3 "$WORK/model.err")"

workload "$WORK/mock.yaml" "  endpoints: [$MOCK_URL]
  model: mock-llama"
run_bounded 60 "$WORK/mock.out" "$WORK/mock.err" "$WORK/mock.yaml" --workers 2 --out "$WORK/mock"
assert_equal "exit status on the mock" "$RUN_RC" 0
assert_equal "requests the mock counted" "$(mock_metric vllm:request_success_total)" 6

start_test_server net_server.py json server --log "$WORK/json.log" --not-sse
workload "$WORK/json.yaml" "  endpoints: [$URL]"
run_bounded 60 "$WORK/json.out" "$WORK/json.err" "$WORK/json.yaml" --workers 1 --out "$WORK/json"
[ "$RUN_RC" != 0 ] || fail "a server that does not stream exited 0"
grep -q "preflight of $URL: POST $URL/v1/chat/completions (model 'mock', max_tokens 1, stream) answered HTTP 200 but not an SSE stream (content-type 'application/json'): {\"id\":\"cmpl-net\"" \
    "$WORK/json.err" || fail "message: $(tail -3 "$WORK/json.err")"
assert_equal "requests the JSON server saw" "$(wc -l <"$WORK/json.log")" 1

workload "$WORK/skip.yaml" "  endpoints: [http://127.0.0.1:$DEAD]"
run_bounded 60 "$WORK/skip.out" "$WORK/skip.err" "$WORK/skip.yaml" --workers 1 --out "$WORK/skip" \
    --no-preflight
assert_equal "exit status with --no-preflight" "$RUN_RC" 1
grep -q "every request failed (6 of 6)" "$WORK/skip.err" || fail "message: $(tail -3 "$WORK/skip.err")"
echo "ok: the preflight stops a dead, wrong-model or non-SSE endpoint before the start"
