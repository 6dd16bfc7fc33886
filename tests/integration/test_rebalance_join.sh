#!/bin/bash
# fleet.rebalance_on_join (docs/protocol.md "Worker loss and rebalancing", Joining):
# `stampede controller` expecting three `stampede worker --once` against a fixed-mode mock (TTFT
# 50 ms, ITL 10 ms, 30 tokens: 0.34 s a request), concurrency 8 (3, 3 and 2 slots), 14 s by
# duration. A fourth worker connects at ~3 s. Checked:
#  - it joins the run ("connected during the run: it joins it"): it is probed, assigned with no
#    load of its own, started, and given 2 slots, one from each of the two workers holding 3
#    ("gave up 1 of 1 slots"): every worker then runs 2;
#  - the load stays at the target: the mock runs 8 requests (at most 9 at 2 of 30 polls, while a
#    donor's last session on a moved slot finishes);
#  - no session runs twice (requests.jsonl), the joiner's requests are merged and all ok, and it
#    is released like the others (exit 0); the run is valid (exit 0), not partial, not degraded;
#  - without the key (the default), a worker connecting mid-run waits for the next run: that is
#    test_protocol_late_worker.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 50 --itl-ms 10
start_run_on_mock j 3 20 --trace seed=2 output_tokens=30 concurrency=8 duration=14s \
    rebalance_on_join=true
start_once_workers w1 w2 w3
wait_workers_ready
wait_run_reaches "$WORK/ctl.err" 15 3
start_once_worker joiner
WORKER_PIDS+=("$WORKER_PID")
wait_log_says "$WORK/ctl.err" 10 "worker joiner .* connected during the run: it joins it" \
    "the late worker did not join"
wait_log_says "$WORK/ctl.err" 10 "worker joiner joined the run: 2 slots from session [0-9]+" \
    "the joiner was not given 2 slots"
wait_log_says "$WORK/joiner.err" 10 "took over 2 of 2 slots" "the joiner did not take its slots"
sleep 1
poll_mock_running 30 8 7
[ "$POLLS_ABOVE" -le 2 ] ||
    fail "the mock ran more than 8 requests at $POLLS_ABOVE of 30 polls after the join"
[ "$POLLS_BELOW" -le 5 ] ||
    fail "the mock ran fewer than 7 requests at $POLLS_BELOW of 30 polls after the join"

wait_controller_ok 30
assert_exit_0 worker 15 "${WORKER_PIDS[@]}"
gave=$(cat "$WORK"/w[123].err | grep -c "gave up 1 of 1 slots" || true)
assert_equal "donors that gave a slot" "$gave" 2
check_results "$WORK/out" "$WORK/ctl.err" "$WORK" <<'PY'
ctl_log, work = argv
assert results["validity"]["valid"], results["validity"]
assert not results["partial"] and not level["degraded"], (results.get("partial_reason"), level["worker_losses"])
names, by = rows_by_worker_name(ctl_log)
assert_each_session_once()
joiner = by["joiner"]
assert len(joiner) >= 20, f"the joiner ran only {len(joiner)} requests"
assert all(r["error"] == "none" for r in joiner)
announced = re.findall(r"finished: (\d+) requests", open(f"{work}/joiner.err").read())
assert announced and int(announced[0]) == len(joiner), (announced, len(joiner))
print(f"joiner ran {len(joiner)} requests; {len(rows)} rows, every session once")
PY
echo "ok: a worker joining mid-run took 2 slots from the two busiest workers; load held at 8"
