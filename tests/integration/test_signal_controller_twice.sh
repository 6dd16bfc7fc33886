#!/bin/bash
# SIGTERM twice on `stampede controller` with a separate `stampede worker --once` (docs/protocol.md,
# "Signals"). The mock answers slowly (ITL 20 ms, 2000 tokens: 40 s a request), so a drain could
# only end by the grace (60 s here): only the second signal can end the run in time.
#  - first SIGTERM: the controller says it drains (Stop{cancel: false}), the worker says "stop";
#  - second SIGTERM: the controller exits at once (130) with results marked partial, after sending
#    the worker Stop{abandon}; the worker acts on it even when it reads it after its controller
#    has gone, and exits within 10 s (a second or two; not the 60 s a --once worker waits for a
#    lost controller), with status 1 (an abandoned run) and no request left running on the mock.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 20 --itl-ms 20
write_workload "$WORK/t.yaml" ignore_eos=true endpoints="[$MOCK_URL]" output_tokens=2000 \
    concurrency=4 duration=60s
start_controller "$WORK/ctl.err" "$WORK/t.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 1 \
    --out "$WORK/out" --register-timeout 20 --grace 60s
start_once_worker w1
WORKER=$WORKER_PID
wait_run_reaches "$WORK/ctl.err" 20 2
kill -TERM "$CONTROLLER_PID"
wait_for_line "$WORK/ctl.err" 10 "draining for up to 60.0 s" >/dev/null ||
    fail "no drain after the first SIGTERM: $(cat "$WORK/ctl.err")"
wait_for_line "$WORK/w1.err" 10 "stop: interrupted at the controller" >/dev/null ||
    fail "the worker was not told to stop: $(cat "$WORK/w1.err")"
[ "$(mock_metric vllm:num_requests_running)" -ge 1 ] || fail "the drain did not let the requests in flight go on"
kill -TERM "$CONTROLLER_PID"
signalled=$(date +%s%N)
wait_controller 10
assert_equal "controller exit status after two SIGTERMs" "$CONTROLLER_RC" 130
grep -q "interrupted again: 1 worker told to abandon the run" "$WORK/ctl.err" ||
    fail "the controller did not tell the worker to abandon: $(cat "$WORK/ctl.err")"
assert_equal "partial" "$(json_value "$WORK/out/results.json" 'r["partial"]')" True
wait_exit "$WORKER" 10
[ "$EXIT_STATUS" != timeout ] || fail "the --once worker still runs 10 s after the controller quit: $(cat "$WORK/w1.err")"
exited_ms=$((($(date +%s%N) - signalled) / 1000000))
assert_equal "worker exit status (abandoned run)" "$EXIT_STATUS" 1
grep -q "abandoning run .*: the controller was interrupted twice" "$WORK/w1.err" ||
    fail "the worker did not say why it left: $(cat "$WORK/w1.err")"
wait_mock_idle 5 || fail "requests still running on the mock after the worker left"

# The same with the worker frozen (SIGSTOP) across the second SIGTERM and woken 4 s after its
# controller exited: it declares the controller lost first, then reads the queued Stop{abandon}
# and acts on it (exits within 10 s of waking, status 1) instead of waiting 60 s for a controller
# that is gone.
start_controller "$WORK/ctl2.err" "$WORK/t.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 1 \
    --out "$WORK/out2" --register-timeout 20 --grace 60s
start_once_worker w2
WORKER=$WORKER_PID
wait_run_reaches "$WORK/ctl2.err" 20 2
kill -TERM "$CONTROLLER_PID"
wait_for_line "$WORK/w2.err" 10 "stop: interrupted at the controller" >/dev/null ||
    fail "the second worker was not told to stop: $(cat "$WORK/w2.err")"
kill -STOP "$WORKER"
kill -TERM "$CONTROLLER_PID"
wait_controller 10
assert_equal "second controller exit status" "$CONTROLLER_RC" 130
sleep 4
kill -CONT "$WORKER"
woken=$(date +%s%N)
wait_exit "$WORKER" 10
[ "$EXIT_STATUS" != timeout ] || fail "the woken --once worker still runs 10 s later: $(cat "$WORK/w2.err")"
woken_ms=$((($(date +%s%N) - woken) / 1000000))
assert_equal "woken worker exit status" "$EXIT_STATUS" 1
grep -q "abandoning run .*: the controller was interrupted twice" "$WORK/w2.err" ||
    fail "the woken worker did not act on the Stop: $(cat "$WORK/w2.err")"
echo "ok: the --once worker exited $exited_ms ms after the second SIGTERM (status 1, abandoned); one frozen meanwhile exited $woken_ms ms after waking"
