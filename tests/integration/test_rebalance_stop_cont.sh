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
write_workload "$WORK/s.yaml" seed=9 ignore_eos=true endpoints="[$MOCK_URL]" output_tokens=30 \
    concurrency=6 duration=16s
printf 'fleet:\n  heartbeat: 500ms\n  liveness: 4\n' >>"$WORK/s.yaml"
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
wait_for_line "$WORK/ctl.err" 10 "worker victim lost: no heartbeat for 2.0 s" >/dev/null ||
    fail "the stopped worker was not declared lost: $(grep -v '^\[' "$WORK/ctl.err")"
grep -q "victim's share .* taken over by 2 workers" "$WORK/ctl.err" ||
    fail "its share was not taken over: $(grep -v '^\[' "$WORK/ctl.err")"
sleep 2
kill -CONT "$VICTIM"
wait_for_line "$WORK/victim.err" 10 "abandoning run" >/dev/null ||
    fail "the woken worker did not drop its old load: $(cat "$WORK/victim.err")"
wait_for_line "$WORK/ctl.err" 10 "worker victim is back, but its share was taken over" >/dev/null ||
    fail "the controller did not see the victim back: $(grep -v '^\[' "$WORK/ctl.err")"
wait_for_line "$WORK/victim.err" 10 "idle, waiting for the next run" >/dev/null ||
    fail "the woken worker does not wait for the next run: $(cat "$WORK/victim.err")"
# The load is the target again, not the target plus the victim's old slots.
over=0
for ((i = 0; i < 20; i++)); do
    r=$(mock_metric vllm:num_requests_running)
    [ "${r%.*}" -gt 6 ] && over=$((over + 1))
    sleep 0.1
done
[ "$over" -le 2 ] || fail "the mock ran more than 6 requests at $over of 20 polls after the wake-up"

wait_controller 30
assert_equal "controller exit status" "$CONTROLLER_RC" 0
for pid in $ALIVE1 $ALIVE2; do
    wait_exit "$pid" 15
    assert_equal "survivor exit status" "$EXIT_STATUS" 0
done
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
assert victim, "nothing of the victim's was merged before its hang"
taken_us = loss["to_s"] * 1e6
assert all(r["send_us"] < taken_us for r in victim), "a request the victim sent after its loss was merged"
print(f"victim {len(victim)} merged before its hang; {len(rows)} rows, every session once")
PY
woke_sent=$(grep -c "took over" "$WORK/alive1.err" "$WORK/alive2.err" | awk -F: '{s += $2} END {print s}')
assert_equal "survivors that took a slot over" "$woke_sent" 2
echo "ok: stopped worker lost, its share taken over; woken, it dropped its old load; every session once"
