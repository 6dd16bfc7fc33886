#!/bin/bash
# A worker that connects after the start is welcomed but told to wait for the next run: it sends
# no load in this run (the run still has exactly one worker) and stays connected, idle.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 20 --itl-ms 20
start_run_on_mock late 1 20 output_tokens=20 concurrency=2 duration=4s
start_once_worker first
wait_for_line "$WORK/ctl.err" 20 "all workers ready" >/dev/null || fail "the run did not start"
start_worker "$WORK/late.err" --connect "$CONTROLLER_EP" --id late
wait_for_line "$WORK/ctl.err" 10 "worker late \(host [^)]*\) connected after the start: told to wait for the next run" >/dev/null ||
    fail "controller did not tell the late worker to wait: $(cat "$WORK/ctl.err")"
wait_for_line "$WORK/late.err" 10 "a run is in progress on this controller; this worker waits and is used for the next run" >/dev/null ||
    fail "late worker was not told to wait: $(cat "$WORK/late.err")"
wait_controller 30
assert_equal "controller exit status" "$CONTROLLER_RC" 0
assert_equal "workers in the run" "$(json_value "$WORK/out/results.json" 'r["run"]["workers"]')" 1
grep -q "assigned run" "$WORK/late.err" && fail "the late worker was given a share of the run"
grep -q "stopping the load" "$WORK/late.err" && fail "the late worker thought its controller lost during the run"
echo "ok: late worker told to wait"
