#!/bin/bash
# A worker without --once serves run after run: it runs a first controller's run, returns to idle
# when released, and when a second controller comes up on the same endpoint it registers with it
# and runs that run too.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 1
write_workload "$WORK/l.yaml" ignore_eos=true endpoints="[$MOCK_URL]" concurrency=2 \
    max_requests=30
start_controller "$WORK/c1.err" "$WORK/l.yaml" --bind "tcp://127.0.0.1:*" --expect-workers 1 \
    --out "$WORK/out1" --register-timeout 20
EP=$CONTROLLER_EP
DATA_PORT=$(grep -Eo "data port [0-9]+" "$WORK/c1.err" | grep -Eo "[0-9]+")
start_worker "$WORK/w.err" --connect "$EP" --id keeper
W=$WORKER_PID
wait_controller 40
assert_equal "first controller exit status" "$CONTROLLER_RC" 0
wait_for_line "$WORK/w.err" 10 "released by the controller; idle, waiting for the next run" >/dev/null ||
    fail "the worker did not return to idle: $(cat "$WORK/w.err")"
kill -0 "$W" 2>/dev/null || fail "the worker exited after its first run"

# The same ports again, now free.
start_controller "$WORK/c2.err" "$WORK/l.yaml" --bind "$EP" --data-port "$DATA_PORT" \
    --expect-workers 1 --out "$WORK/out2" --register-timeout 30
wait_controller 60
assert_equal "second controller exit status" "$CONTROLLER_RC" 0
assert_equal "first run requests" "$(json_value "$WORK/out1/results.json" 'l["requests_ok"]')" 30
assert_equal "second run requests" "$(json_value "$WORK/out2/results.json" 'l["requests_ok"]')" 30
[ "$(grep -c "finished: 30 requests" "$WORK/w.err")" = 2 ] ||
    fail "the worker did not run both runs: $(cat "$WORK/w.err")"
kill -0 "$W" 2>/dev/null || fail "the long-lived worker exited"
echo "ok: one worker served two controllers' runs"
