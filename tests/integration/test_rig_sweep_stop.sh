#!/bin/bash
# A sweep on the rig stopped before its end (docs/rig.md, "Sweeps" and "Faults"): one cancelled by
# its owner in its level 2 ends cancelled with level 1 whole in its results.json; one serve dies
# during (SIGKILL) after its level 1 is marked interrupted when serve starts again, the level it
# finished kept in its results.json and the archive.
# ctest: parallel (orderings, counts and messages; no timing tighter than seconds)
source "$(dirname "$0")/protocol_lib.sh"
source "$(dirname "$0")/rig_lib.sh"

write_rig_sweep "$WORK/sweep3.yaml" "1, 2, 3" 100ms 500ms
start_serve "$WORK/serve.err"
start_rig_worker
# alice cancels her sweep in its level 2: it ends cancelled with level 1 whole.
as alice submit "$WORK/sweep3.yaml" >/dev/null 2>&1 || fail "run 1 was not queued"
wait_for_line "$SERVE_LOG" 20 "serve: run 1: level 2/3: concurrency 2" >/dev/null ||
    fail "run 1 did not reach level 2: $(grep 'run 1' "$SERVE_LOG")"
as alice runs cancel 1 2>/dev/null || fail "alice could not cancel her sweep"
wait_state 1 cancelled 15
check_results "$WORK/arch/runs/1" <<'PY' || fail "the cancelled sweep's results.json"
levels = results["levels"]
assert results["partial"] is True and results["run"]["stop_reason"] == "interrupted", results["run"]
assert levels[0]["concurrency"] == 1 and not levels[0]["interrupted"], levels[0]["interrupted"]
assert len(levels) == 1 or (len(levels) == 2 and levels[1]["interrupted"]), len(levels)
PY
assert_equal "the cancelled sweep's note" "$(db "select note from runs where id = 1")" \
    "cancelled by alice"

# serve dies after the sweep's level 1 and comes back: the sweep is marked interrupted, the level
# it finished kept in its results.json and the archive.
as alice submit "$WORK/sweep3.yaml" >/dev/null 2>&1 || fail "run 2 was not queued"
wait_for_line "$SERVE_LOG" 20 "serve: run 2: level 1 done" >/dev/null ||
    fail "run 2 did not finish level 1: $(grep 'run 2' "$SERVE_LOG")"
kill -9 "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null || true
start_serve "$WORK/serve2.err"
grep -q "run 2 was in progress when serve stopped: a sweep; the levels it finished are kept" \
    "$WORK/serve2.err" || fail "run 2 was not recovered: $(tail -5 "$WORK/serve2.err")"
assert_equal "the sweep after the restart" "$(db "select state from runs where id = 2")" interrupted
assert_equal "its level kept in the archive" \
    "$(db "select count(*) from levels where run = 2 and level = 0 and requests_ok > 0")" 1
echo "ok: a cancelled sweep and one serve died during keep the levels they finished"
