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
start_run_on_mock s 3 20 --trace seed=11 output_tokens=30 concurrency=6 duration=16s \
    heartbeat=500ms liveness=4 rebalance_on_join=true
start_survivors_and_victim long-lived
wait_run_reaches "$WORK/ctl.err" 15 3
stop_victim
wait_log_says "$WORK/ctl.err" 10 "victim's share .* taken over by 2 workers" \
    "its share was not taken over"
wake_victim_after 2
wait_log_says "$WORK/ctl.err" 10 "worker victim is back, its old share taken over: told to drop its old load, it joins the run again" \
    "the victim did not join again"
wait_log_says "$WORK/ctl.err" 10 "worker victim joined the run: 2 slots from session [0-9]+" \
    "the victim was not given 2 slots"
rejoined=$(date +%s%N)
wait_log_says "$WORK/victim.err" 10 "took over 2 of 2 slots" "the victim did not take its slots"
sleep 1
poll_mock_running 20 6
[ "$POLLS_ABOVE" -le 2 ] ||
    fail "the mock ran more than 6 requests at $POLLS_ABOVE of 20 polls after the rejoin"

wait_controller_ok 30
assert_exit_0 survivor 15 "$ALIVE1" "$ALIVE2"
gave=$(cat "$WORK"/alive[12].err | grep -c "gave up 1 of 1 slots" || true)
assert_equal "survivors that gave a slot back" "$gave" 2
check_results "$WORK/out" "$WORK/ctl.err" "$WORK" <<'PY'
ctl_log, work = argv
loss, victim = victim_rows_of_whole_run(ctl_log)
before = [r for r in victim if r["send_us"] < loss["to_s"] * 1e6]
after = [r for r in victim if r["send_us"] >= loss["to_s"] * 1e6]
assert before and len(after) >= 10, f"victim: {len(before)} rows before its loss, {len(after)} after"
assert all(r["error"] == "none" for r in after), "a request of the rejoined victim failed"
announced = re.findall(r"finished: (\d+) requests", open(f"{work}/victim.err").read())
assert announced and int(announced[-1]) == len(after), (announced, len(after))
print(f"victim: {len(before)} rows before its loss, {len(after)} after rejoining; every session once")
PY
echo "ok: a lost worker that came back dropped its old load and rejoined with 2 slots after $(((rejoined - WOKE) / 1000000)) ms"
