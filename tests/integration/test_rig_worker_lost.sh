#!/bin/bash
# A worker lost mid-run on the rig is handled as in a plain run (issue 20, "Faults"; docs/rig.md):
# a run on two workers, one SIGKILLed in its middle, is carried to its end by the other (its share
# taken over), ends done with results.json saying 2 started, 1 lost, carried by 1; the next run
# starts on the one worker left without waiting for --expect-workers again.
# ctest: parallel (counts and messages; the only timings are bounds of seconds)
source "$(dirname "$0")/protocol_lib.sh"
source "$(dirname "$0")/rig_lib.sh"

rig_worker_key w2
start_serve "$WORK/serve.err" --expect-workers 2
start_rig_worker
start_rig_worker w2
W2_PID=$WORKER_PID

write_workload "$WORK/a.yaml" ignore_eos=true duration=4s concurrency=4 heartbeat=250ms liveness=4
write_workload "$WORK/b.yaml" ignore_eos=true max_requests=20 concurrency=2
as alice submit "$WORK/a.yaml" >/dev/null 2>&1 || fail "alice's run was not queued"
wait_state 1 running 10
wait_for_line "$WORK/serve.err" 10 "run 1: .*" >/dev/null || fail "run 1 said nothing"
sleep 1.5
kill -9 "$W2_PID"
wait_for_line "$WORK/serve.err" 10 "worker w2 .*lost" >/dev/null ||
    fail "serve did not declare w2 lost: $(tail -20 "$WORK/serve.err")"
wait_state 1 done 20
workers=$(json_value "$WORK/arch/runs/1/results.json" \
    '[l["workers"][k] for k in ("started", "lost", "carried_by")]')
assert_equal "run 1's workers: started, lost, carried by" "$workers" "[2, 1, 1]"
ok=$(json_value "$WORK/arch/runs/1/results.json" 'l["requests_ok"]')
[ "$ok" -gt 0 ] || fail "run 1 completed no request after the loss"

as bob submit "$WORK/b.yaml" >/dev/null 2>&1 || fail "bob's run was not queued"
wait_state 2 done 20
assert_equal "run 2's share" "$(db "select workers from runs where id = 2")" 1
assert_equal "run 2's requests" "$(json_value "$WORK/arch/runs/2/results.json" 'l["requests_ok"]')" 20
echo "ok: w2 lost mid-run: run 1 carried to its end by w1 ($ok requests), run 2 ran on w1 alone"
