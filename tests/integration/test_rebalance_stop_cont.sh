#!/bin/bash
# SIGSTOP a worker beyond the liveness window, then SIGCONT it while the run goes on
# (docs/protocol.md "Worker loss and rebalancing"): `stampede controller`, three `stampede worker`
# (the victim without --once, so it can wait for a next run) against a fixed-mode mock (TTFT 50 ms,
# ITL 10 ms, 30 tokens: 0.34 s a request), concurrency 6, 16 s by duration, fleet.heartbeat 500ms
# x fleet.liveness 4 (2 s). Checked:
#  - the victim, stopped at ~3 s, is declared lost and its 2 slots go to the survivors;
#  - woken 2 s later, mid-run, it drops its old load: it abandons the run ("abandoning run"), the
#    controller says its share was taken over and it waits for the next run, and the mock's
#    running gauge is back at the target 6, above it at most 2 of 20 polls over the next 2 s;
#  - nothing runs twice: every session index in requests.jsonl is there once, whoever ran it, and
#    nothing the victim sent after its loss is merged (its rows all end before the survivors'
#    takeover);
#  - the run ends by its duration, exit 0, valid, degraded.
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 50 --itl-ms 10
start_run_on_mock s 3 20 --trace seed=9 output_tokens=30 concurrency=6 duration=16s \
    heartbeat=500ms liveness=4
start_survivors_and_victim long-lived
wait_run_reaches "$WORK/ctl.err" 15 3
stop_victim
wait_log_says "$WORK/ctl.err" 10 "worker victim lost: no heartbeat for 2.0 s" \
    "the stopped worker was not declared lost"
grep -q "victim's share .* taken over by 2 workers" "$WORK/ctl.err" ||
    fail "its share was not taken over: $(grep -v '^\[' "$WORK/ctl.err")"
wake_victim_after 2
wait_log_says "$WORK/ctl.err" 10 "worker victim is back, but its share was taken over" \
    "the controller did not see the victim back"
wait_log_says "$WORK/victim.err" 10 "idle, waiting for the next run" \
    "the woken worker does not wait for the next run"
# The load is the target again, not the target plus the victim's old slots.
poll_mock_running 20 6
[ "$POLLS_ABOVE" -le 2 ] ||
    fail "the mock ran more than 6 requests at $POLLS_ABOVE of 20 polls after the wake-up"

wait_controller_ok 30
assert_exit_0 survivor 15 "$ALIVE1" "$ALIVE2"
check_results "$WORK/out" "$WORK/ctl.err" "$WORK" <<'PY'
ctl_log, work = argv
loss, victim = victim_rows_of_whole_run(ctl_log)
assert victim, "nothing of the victim's was merged before its hang"
taken_us = loss["to_s"] * 1e6
assert all(r["send_us"] < taken_us for r in victim), "a request the victim sent after its loss was merged"
print(f"victim {len(victim)} merged before its hang; {len(rows)} rows, every session once")
PY
woke_sent=$(grep -c "took over" "$WORK/alive1.err" "$WORK/alive2.err" | awk -F: '{s += $2} END {print s}')
assert_equal "survivors that took a slot over" "$woke_sent" 2
echo "ok: stopped worker lost, its share taken over; woken, it dropped its old load; every session once"
