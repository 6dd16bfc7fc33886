#!/bin/bash
# A worker declared lost comes back, with fleet.rebalance_on_join: true (docs/protocol.md "Worker
# loss and rebalancing", Joining): `stampede controller`, three `stampede worker` (the victim
# long-lived) against a fixed-mode mock (TTFT 50 ms, ITL 10 ms, 30 tokens: 0.34 s a request),
# concurrency 6, 16 s by duration, fleet.heartbeat 500ms x liveness 4 (2 s). The victim is
# stopped (SIGSTOP) at ~3 s, declared lost, its 2 slots taken over (the survivors then run 3
# each); woken (SIGCONT) 2 s later. Checked:
#  - it drops its old load ("abandoning run") and joins the run again ("joins the run again"):
#    probed, assigned with no load, started, and given 2 slots back, one from each survivor;
#  - nothing runs twice: every session index in requests.jsonl is there once, its old load's
#    requests sent after its loss are not merged, and its new requests are;
#  - the mock's load is the target 6 after the rejoin (above it at most 2 of 20 polls);
#  - the run ends by its duration, exit 0, valid, degraded by the one loss; all exit 0.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 50 --itl-ms 10
write_workload "$WORK/s.yaml" seed=11 ignore_eos=true endpoints="[$MOCK_URL]" output_tokens=30 \
    concurrency=6 duration=16s
printf 'fleet:\n  heartbeat: 500ms\n  liveness: 4\n  rebalance_on_join: true\n' >>"$WORK/s.yaml"
start_controller "$WORK/ctl.err" "$WORK/s.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 3 \
    --out "$WORK/out" --trace --register-timeout 20
start_once_worker alive1
ALIVE1=$WORKER_PID
start_worker "$WORK/victim.err" --connect "$CONTROLLER_EP" --id victim
VICTIM=$WORKER_PID
start_once_worker alive2
ALIVE2=$WORKER_PID
trap 'kill -CONT "$VICTIM" 2>/dev/null || true; cleanup' EXIT
wait_for_line "$WORK/ctl.err" 20 "all workers ready" >/dev/null ||
    fail "the run did not start: $(cat "$WORK/ctl.err")"
wait_run_reaches "$WORK/ctl.err" 15 3
kill -STOP "$VICTIM"
wait_for_line "$WORK/ctl.err" 10 "victim's share .* taken over by 2 workers" >/dev/null ||
    fail "its share was not taken over: $(grep -v '^\[' "$WORK/ctl.err")"
sleep 2
kill -CONT "$VICTIM"
woke=$(date +%s%N)
wait_for_line "$WORK/victim.err" 10 "abandoning run" >/dev/null ||
    fail "the woken worker did not drop its old load: $(cat "$WORK/victim.err")"
wait_for_line "$WORK/ctl.err" 10 "worker victim is back, its old share taken over: told to drop its old load, it joins the run again" >/dev/null ||
    fail "the victim did not join again: $(grep -v '^\[' "$WORK/ctl.err")"
wait_for_line "$WORK/ctl.err" 10 "worker victim joined the run: 2 slots from session [0-9]+" >/dev/null ||
    fail "the victim was not given 2 slots: $(grep -v '^\[' "$WORK/ctl.err")"
rejoined=$(date +%s%N)
wait_for_line "$WORK/victim.err" 10 "took over 2 of 2 slots" >/dev/null ||
    fail "the victim did not take its slots: $(cat "$WORK/victim.err")"
sleep 1
over=0
for ((i = 0; i < 20; i++)); do
    r=$(mock_metric vllm:num_requests_running)
    [ "${r%.*}" -gt 6 ] && over=$((over + 1))
    sleep 0.1
done
[ "$over" -le 2 ] || fail "the mock ran more than 6 requests at $over of 20 polls after the rejoin"

wait_controller 30
assert_equal "controller exit status" "$CONTROLLER_RC" 0
for pid in $ALIVE1 $ALIVE2; do
    wait_exit "$pid" 15
    assert_equal "survivor exit status" "$EXIT_STATUS" 0
done
gave=$(cat "$WORK"/alive[12].err | grep -c "gave up 1 of 1 slots" || true)
assert_equal "survivors that gave a slot back" "$gave" 2
check_results "$WORK/out" "$WORK/ctl.err" "$WORK" <<'PY'
ctl_log, work = argv
assert results["validity"]["valid"], results["validity"]
assert not results["partial"] and level["degraded"]
(loss,) = level["worker_losses"]
assert loss["worker"] == "victim" and loss["taken_over"], loss
names, by = rows_by_worker_name(ctl_log)
sessions = collections.Counter(r["session"] for r in rows)
dup = [s for s, n in sessions.items() if n > 1]
assert not dup, f"sessions run twice: {dup[:5]}"
victim = by["victim"]
before = [r for r in victim if r["send_us"] < loss["to_s"] * 1e6]
after = [r for r in victim if r["send_us"] >= loss["to_s"] * 1e6]
assert before and len(after) >= 10, f"victim: {len(before)} rows before its loss, {len(after)} after"
assert all(r["error"] == "none" for r in after), "a request of the rejoined victim failed"
announced = re.findall(r"finished: (\d+) requests", open(f"{work}/victim.err").read())
assert announced and int(announced[-1]) == len(after), (announced, len(after))
print(f"victim: {len(before)} rows before its loss, {len(after)} after rejoining; every session once")
PY
echo "ok: a lost worker that came back dropped its old load and rejoined with 2 slots after $(((rejoined - woke) / 1000000)) ms"
