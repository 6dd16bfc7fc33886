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
write_workload "$WORK/a.yaml" seed=3 ignore_eos=true endpoints="[$MOCK_URL]" output_tokens=20 \
    concurrency=8 duration=30s
printf 'fleet:\n  heartbeat: 500ms\n  liveness: 3\n  abort_on_worker_loss_pct: 20\n' >>"$WORK/a.yaml"
start_controller "$WORK/ctl.err" "$WORK/a.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 4 \
    --out "$WORK/out" --register-timeout 20
pids=()
for w in w1 w2 victim w3; do
    start_once_worker "$w"
    pids+=($WORKER_PID)
done
wait_for_line "$WORK/ctl.err" 20 "all workers ready" >/dev/null ||
    fail "the run did not start: $(cat "$WORK/ctl.err")"
wait_run_reaches "$WORK/ctl.err" 15 2
kill -KILL "${pids[2]}"
killed=$(date +%s)
wait_controller 25
took=$(($(date +%s) - killed))
assert_equal "controller exit status" "$CONTROLLER_RC" 4
[ "$took" -le 20 ] || fail "the run went on for $took s after the loss"
grep -q "ending the run: worker victim lost (no heartbeat for 1.5 s): 25.0 % of the load lost, above fleet.abort_on_worker_loss_pct = 20 %" "$WORK/ctl.err" ||
    fail "the controller did not say why it ended the run: $(grep -v '^\[' "$WORK/ctl.err")"
grep -q "taken over by" "$WORK/ctl.err" && fail "the share was taken over despite the threshold"
for i in 0 1 3; do
    wait_exit "${pids[$i]}" 15
    assert_equal "survivor exit status" "$EXIT_STATUS" 0
done
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
