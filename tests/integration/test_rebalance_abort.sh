#!/bin/bash
# fleet.abort_on_worker_loss_pct (docs/config.md): with 20 %, losing one of four workers (25 % of
# concurrency 8) ends the run instead of rebalancing it. `stampede controller` and four
# `stampede worker --once` against a fixed-mode mock, 30 s by duration, fleet.heartbeat 500ms x
# liveness 3; one worker is killed at ~2 s. Checked:
#  - the controller says why it ends the run (25.0 % of the load lost, above 20 %) and stops the
#    survivors: it exits 4 well before the 30 s duration, the survivors are released (exit 0);
#  - nothing was taken over ("taken over" is never said, no survivor "took over");
#  - results.json is written, partial (naming the victim), with ended_on_worker_loss saying why and
#    the loss listed as not taken over; the table says "Run ended early".
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 50 --itl-ms 10
start_run_on_mock a 4 20 seed=3 output_tokens=20 concurrency=8 duration=30s heartbeat=500ms \
    liveness=3 abort_on_worker_loss_pct=20
start_once_workers w1 w2 victim w3
wait_workers_ready
wait_run_reaches "$WORK/ctl.err" 15 2
kill -KILL "${WORKER_PIDS[2]}"
killed=$(date +%s)
wait_controller 25
took=$(($(date +%s) - killed))
assert_equal "controller exit status" "$CONTROLLER_RC" 4
[ "$took" -le 20 ] || fail "the run went on for $took s after the loss"
grep -q "ending the run: worker victim lost (no heartbeat for 1.5 s): 25.0 % of the load lost, above fleet.abort_on_worker_loss_pct = 20 %" "$WORK/ctl.err" ||
    fail "the controller did not say why it ended the run: $(grep -v '^\[' "$WORK/ctl.err")"
grep -q "taken over by" "$WORK/ctl.err" && fail "the share was taken over despite the threshold"
assert_exit_0 survivor 15 "${WORKER_PIDS[0]}" "${WORKER_PIDS[1]}" "${WORKER_PIDS[3]}"
grep -l "took over" "$WORK"/w*.err && fail "a survivor took over a slot"
grep -q "Run ended early: worker victim lost" "$WORK/ctl.err.out" ||
    fail "the table does not say the run ended early: $(tail -5 "$WORK/ctl.err.out")"
check_results "$WORK/out" <<'PY'
assert results["partial"], "the aborted run is not marked partial"
assert "victim" in level["partial_reason"], level["partial_reason"]
assert "abort_on_worker_loss_pct = 20 %" in level["ended_on_worker_loss"], level["ended_on_worker_loss"]
(loss,) = level["worker_losses"]
assert loss["worker"] == "victim" and not loss["taken_over"] and loss["to_s"] is None, loss
assert level["requests_ok"] > 0
print(f"aborted with {level['requests_ok']} requests ok; partial: {level['partial_reason']}")
PY
echo "ok: a 25 % loss above the 20 % threshold ended the run in $took s with exit 4"
