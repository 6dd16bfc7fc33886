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

# Starts a controller on t.yaml (stderr $1, results in $2) and --once worker $3 (pid in WORKER);
# once the run is 2 s in, sends the controller its first SIGTERM and waits at most 10 s for the
# worker to be told to stop.
start_and_interrupt() {
    local log=$1 out=$2 id=$3
    start_controller "$log" "$WORK/t.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 1 \
        --out "$out" --register-timeout 20 --grace 60s
    start_once_worker "$id"
    WORKER=$WORKER_PID
    wait_run_reaches "$log" 20 2
    kill -TERM "$CONTROLLER_PID"
    wait_for_line "$WORK/$id.err" 10 "stop: interrupted at the controller" >/dev/null ||
        fail "worker $id was not told to stop: $(cat "$WORK/$id.err")"
}

# Sends the controller its second SIGTERM (at SIGNALLED, date +%s%N); it must exit 130 within 10 s
# ($1 names that status in the message).
interrupt_again() {
    kill -TERM "$CONTROLLER_PID"
    SIGNALLED=$(date +%s%N)
    wait_controller 10
    assert_equal "$1" "$CONTROLLER_RC" 130
}

# Waits at most 10 s for worker $1 (pid WORKER) to leave the abandoned run: exit status 1, saying
# why; sets LEFT_MS to the milliseconds since $2 (date +%s%N). $3 describes the worker.
assert_worker_abandons() {
    local id=$1 since=$2 what=$3
    wait_exit "$WORKER" 10
    [ "$EXIT_STATUS" != timeout ] ||
        fail "the $what --once worker still runs 10 s later: $(cat "$WORK/$id.err")"
    LEFT_MS=$((($(date +%s%N) - since) / 1000000))
    assert_equal "$what worker exit status (abandoned run)" "$EXIT_STATUS" 1
    grep -q "abandoning run .*: the controller was interrupted twice" "$WORK/$id.err" ||
        fail "the $what worker did not act on the Stop: $(cat "$WORK/$id.err")"
    # Its exit line says the records went with the run, not "0 records in 0 batches".
    grep -Eq "exiting: run [0-9a-f]+ was abandoned \(.*interrupted twice.*\): [0-9]+ requests completed, their records discarded" \
        "$WORK/$id.err" || fail "the $what worker's exit line: $(grep exiting "$WORK/$id.err")"
}

start_and_interrupt "$WORK/ctl.err" "$WORK/out" w1
wait_for_line "$WORK/ctl.err" 10 "draining for up to 60.0 s" >/dev/null ||
    fail "no drain after the first SIGTERM: $(cat "$WORK/ctl.err")"
[ "$(mock_metric vllm:num_requests_running)" -ge 1 ] || fail "the drain did not let the requests in flight go on"
interrupt_again "controller exit status after two SIGTERMs"
grep -q "interrupted again: 1 worker told to abandon the run" "$WORK/ctl.err" ||
    fail "the controller did not tell the worker to abandon: $(cat "$WORK/ctl.err")"
assert_equal "partial" "$(json_value "$WORK/out/results.json" 'r["partial"]')" True
assert_worker_abandons w1 "$SIGNALLED" first
exited_ms=$LEFT_MS
wait_mock_idle 5 || fail "requests still running on the mock after the worker left"

# The same with the worker frozen (SIGSTOP) across the second SIGTERM and woken 4 s after its
# controller exited: it declares the controller lost first, then reads the queued Stop{abandon}
# and acts on it (exits within 10 s of waking, status 1) instead of waiting 60 s for a controller
# that is gone.
start_and_interrupt "$WORK/ctl2.err" "$WORK/out2" w2
kill -STOP "$WORKER"
interrupt_again "second controller exit status"
sleep 4
kill -CONT "$WORKER"
assert_worker_abandons w2 "$(date +%s%N)" woken
woken_ms=$LEFT_MS
echo "ok: the --once worker exited $exited_ms ms after the second SIGTERM (status 1, abandoned); one frozen meanwhile exited $woken_ms ms after waking"
