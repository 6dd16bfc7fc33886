#!/bin/bash
# A worker whose controller goes silent (SIGSTOP) stops its load within a bounded time: the mock
# sees no request running ~3 s later and no token generated after that. When the controller comes
# back (SIGCONT) the worker delivers everything it recorded (resending what the dropped connection
# lost): the controller merges exactly the records the worker announced, and the run ends normally.
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 20 --itl-ms 20
start_run_on_mock p 1 20 output_tokens=50 concurrency=4 duration=40s
start_once_worker w
WORKER=$WORKER_PID
wait_for_line "$WORK/ctl.err" 20 "all workers ready" >/dev/null || fail "the run did not start"
sleep 2.5
running=$(mock_metric vllm:num_requests_running)
[ "${running%.*}" -ge 1 ] || fail "no load before the pause (running = $running)"

kill -STOP "$CONTROLLER_PID"
paused=$(date +%s%N)
wait_mock_idle 8 ||
    { kill -CONT "$CONTROLLER_PID"; fail "the worker kept its load 8 s after the controller went silent"; }
after=$(python3 -c "print(round(($MOCK_IDLE_SINCE - $paused) / 1e9, 2))")
assert_no_tokens_for_1_5_s "tokens generated after the load stopped"
grep -q "no word from the controller for" "$WORK/w.err" && grep -q "stopping the load" "$WORK/w.err" ||
    fail "worker did not say why it stopped: $(cat "$WORK/w.err")"

kill -CONT "$CONTROLLER_PID"
wait_controller 40
assert_equal "controller exit status" "$CONTROLLER_RC" 0
announced=$(grep -Eo "finished: [0-9]+ requests" "$WORK/w.err" | grep -Eo "[0-9]+" | head -1)
[ -n "$announced" ] || fail "the worker did not finish its run: $(tail -5 "$WORK/w.err")"
merged=$(json_value "$WORK/out/results.json" \
    'l["requests_ok"] + l["requests_failed"] + l["requests_cancelled"] + l["requests_warmup"]')
assert_equal "records merged vs announced by the worker" "$merged" "$announced"
grep -q "records announced" "$WORK/ctl.err" && fail "controller reports missing records: $(cat "$WORK/ctl.err")"
# Released by the controller's Stop, or (when that Stop went down with the old connection) on its
# own once the controller went quiet after acknowledging every record; --once then exits 0.
wait_exit "$WORKER" 15
assert_equal "worker exit status" "$EXIT_STATUS" 0
grep -Eq "released by the controller|acknowledging every record of the run" "$WORK/w.err" ||
    fail "the worker was not released: $(tail -3 "$WORK/w.err")"
echo "ok: load stopped $after s after the controller went silent; $merged of $announced records merged"
