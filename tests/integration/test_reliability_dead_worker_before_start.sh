#!/bin/bash
# A worker that dies after registering but before the run starts: `stampede controller
# --expect-workers 2`, worker "early" registers and is SIGKILLed, then worker "late" registers
# (2 of 2: the controller begins its clock probes, which the dead one never answers). Asserted:
#  - the controller does not hang: it exits within 15 s of the kill, status 1 (the run could not
#    start), with "cannot run: worker early ..." naming the dead worker;
#  - no load was sent (the mock saw no request) and no results.json was written (there is no run
#    to report).
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 20 --itl-ms 10
start_run_on_mock b 2 30 output_tokens=20 concurrency=4 duration=5s
start_once_worker early
wait_for_line "$WORK/ctl.err" 10 "worker early \(.*registered \(1 of 2\)" >/dev/null ||
    fail "worker early did not register: $(cat "$WORK/ctl.err")"
kill -KILL "$WORKER_PID"
killed=$(date +%s%N)
start_once_worker late
wait_for_line "$WORK/ctl.err" 10 "worker late \(.*registered \(2 of 2\)" >/dev/null ||
    fail "worker late did not register: $(cat "$WORK/ctl.err")"
wait_controller 15
ended_ms=$((($(date +%s%N) - killed) / 1000000))
assert_equal "controller exit status" "$CONTROLLER_RC" 1
grep -q "cannot run: worker early " "$WORK/ctl.err" ||
    fail "the message does not name the dead worker: $(grep -v '^\[' "$WORK/ctl.err")"
requests=$(($(mock_metric vllm:request_success_total) + $(mock_metric vllm:num_requests_running)))
assert_equal "requests the mock saw" "$requests" 0
[ ! -e "$WORK/out/results.json" ] || fail "results.json written for a run that never started"
echo "ok: dead worker before the start refused after $ended_ms ms: $(grep 'cannot run' "$WORK/ctl.err")"
