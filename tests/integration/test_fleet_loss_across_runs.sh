#!/bin/bash
# A sweep, or a list of runs, survives a lost worker (docs/protocol.md "After a loss: the next
# runs and levels"). `stampede controller --expect-workers 3` and three long-lived workers against
# a fixed-mode mock (TTFT 20 ms, ITL 10 ms, 10 tokens), fleet.heartbeat 250ms x liveness 4 (a
# silence of 1 s). Three scenarios:
#  A. a 3-level sweep, one worker SIGKILLed during level 2: level 2 is taken over, level 3 starts
#     at once with the two workers left (no second wait for --expect-workers, no crash): exit 0,
#     three levels in results.json, level 3 carried by two workers;
#  B. a 2-level sweep: a worker stopped (SIGSTOP) during level 1 is taken over, then woken: it
#     rejoins at the boundary, so level 2 starts with three; another worker is SIGKILLed in level
#     2, the last: exit 0, level 2 started by three and carried by two;
#  C. two workload files, one worker a --once worker that leaves between the two runs: run 2
#     starts with the two left: exit 0, each run's results.json says how many carried it;
#  D. the same between two levels of a sweep: level 2 carried by the two left.
# ctest: parallel (counts and messages; the only timings are bounds of seconds)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 20 --itl-ms 10

# Writes sweep file $1 of concurrency levels $2 (a YAML list) with a window of $3.
write_sweep() {
    cat >"$1" <<YAML
seed: 5
target: {ignore_eos: true, endpoints: [$MOCK_URL]}
workload: {kind: requests, input_tokens: 8, output_tokens: 10}
scheduler: {kind: concurrent}
sweep:
  concurrency: $2
  warmup: 0s
  snapshots: {count: 1, duration: $3}
  drain: 2s
fleet: {heartbeat: 250ms, liveness: 4}
validity: {max_schedule_lag: 2s}
YAML
}

# Starts a long-lived worker named $1 on the controller last started; its pid is in WORKER_PID.
start_long_worker() {
    start_worker "$WORK/$1.err" --connect "$CONTROLLER_EP" --id "$1"
}

# Starts scenario $1's controller on the workload files after it, expecting 3 workers (its log
# $WORK/ctl.err, the last scenario's kept as ctl-<its name>.err; its results under $WORK/$1), and
# the scenario's first long-lived worker, named $1 1.
start_scenario() {
    local name=$1
    shift
    [ -z "${SCENARIO:-}" ] || mv "$WORK/ctl.err" "$WORK/ctl-$SCENARIO.err"
    SCENARIO=$name
    start_controller "$WORK/ctl.err" "$@" --bind 'tcp://127.0.0.1:*' --expect-workers 3 \
        --out "$WORK/$name" --register-timeout 20
    start_long_worker "${name}1"
}

# Runs scenario $1 (see start_scenario) to its end with a second long-lived worker and a --once
# worker, leaver (its pid in LEAVER); fails unless the controller and the leaver exit 0.
run_scenario_with_leaver() {
    local name=$1
    start_scenario "$@"
    start_long_worker "${name}2"
    start_once_worker leaver
    LEAVER=$WORKER_PID
    wait_controller 60
    [ "$CONTROLLER_RC" = 0 ] || fail "${name^^}: exit $CONTROLLER_RC: $(grep -v '^\[' "$WORK/ctl.err")"
    assert_exit_0 "the --once worker" 5 "$LEAVER"
}

# Waits at most $2 seconds until "all workers ready" was said $1 times in $WORK/ctl.err.
wait_started_times() {
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        [ "$(grep -c "all workers ready" "$WORK/ctl.err")" -ge "$1" ] && return 0
        sleep 0.05
    done
    fail "start $1 never came: $(grep -v '^\[' "$WORK/ctl.err")"
}

# Prints level $2's (0-based) "workers" of the sweep's results.json in $1, as "started joined
# lost carried_by" (its repetitions' must agree, each run once).
level_workers() {
    python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
l = r["levels"][int(sys.argv[2])]
w = l["workers"]
assert w["expected"] == 3, w
(rep,) = l["repetitions"]
assert rep["workers"] == w, (rep["workers"], w)
print(w["started"], w["joined"], w["lost"], w["carried_by"])
PY
}

# A. SIGKILL during level 2 of 3.
write_sweep "$WORK/a.yaml" "[3, 6, 9]" 3s
start_scenario a "$WORK/a.yaml"
start_long_worker a2
start_long_worker victim
VICTIM=$WORKER_PID
wait_started_times 2 40
sleep 1 # the start comes 0.75 s after the line: the kill lands early in the window
kill -KILL "$VICTIM"
wait_controller 60
grep -q "Floating point\|core dumped" "$WORK/ctl.err" && fail "the controller crashed"
[ "$CONTROLLER_RC" = 0 ] || fail "A: exit $CONTROLLER_RC: $(grep -v '^\[' "$WORK/ctl.err")"
grep -q "worker victim's share .* taken over by 2 workers" "$WORK/ctl.err" ||
    fail "A: level 2 was not taken over: $(grep -v '^\[' "$WORK/ctl.err")"
grep -q "waiting for 3 workers" <(sed -n '/level 3\/3/,$p' "$WORK/ctl.err") &&
    fail "A: the controller waited for --expect-workers again at level 3"
grep -q "2 of the 3 workers expected (--expect-workers) are registered: the run goes on" \
    "$WORK/ctl.err" || fail "A: level 3 did not say it goes on with 2 of 3 workers"
assert_equal "A levels" "$(json_value "$WORK/a/results.json" 'len(r["levels"])')" 3
assert_equal "A valid" "$(json_value "$WORK/a/results.json" 'r["validity"]["valid"]')" True
assert_equal "A level 1 workers" "$(level_workers "$WORK/a/results.json" 0)" "3 0 0 3"
assert_equal "A level 2 workers" "$(level_workers "$WORK/a/results.json" 1)" "3 0 1 2"
assert_equal "A level 3 workers" "$(level_workers "$WORK/a/results.json" 2)" "2 0 0 2"
assert_equal "A level 3 requests failed" \
    "$(json_value "$WORK/a/results.json" 'r["levels"][2]["requests_failed"]')" 0
grep -q "level 3 done: .*carried by 2 of 3 workers" "$WORK/ctl.err" ||
    fail "A: the level's line does not say it was carried by 2 of 3 workers"
grep -q "^Level 2: started by 3 of the 3 workers expected, 1 lost, carried to its end by 2$" \
    "$WORK/ctl.err.out" || fail "A: the table does not say who carried level 2: $(cat "$WORK/ctl.err.out")"
grep -q "^Level 3: started by 2 of the 3 workers expected, 0 lost, carried to its end by 2$" \
    "$WORK/ctl.err.out" || fail "A: the table does not say who carried level 3: $(cat "$WORK/ctl.err.out")"
grep -q "^Level 1:" "$WORK/ctl.err.out" && fail "A: level 1, carried by all 3, is named under the table"
echo "A ok: level 2 taken over, level 3 carried by 2 workers, exit 0"

# B. A worker stopped in level 1 rejoins at the boundary; another is killed in level 2, the last.
write_sweep "$WORK/b.yaml" "[4, 6]" 3s
start_scenario b "$WORK/b.yaml"
start_long_worker sleeper
SLEEPER=$WORKER_PID
start_long_worker doomed
DOOMED=$WORKER_PID
wait_started_times 1 20
sleep 1
trap 'kill -CONT "$SLEEPER" 2>/dev/null || true; cleanup' EXIT
kill -STOP "$SLEEPER"
wait_log_says "$WORK/ctl.err" 10 "worker sleeper lost" "B: the stopped worker was not declared lost"
kill -CONT "$SLEEPER"
wait_started_times 2 20
sleep 1
kill -KILL "$DOOMED"
wait_controller 60
[ "$CONTROLLER_RC" = 0 ] || fail "B: exit $CONTROLLER_RC: $(grep -v '^\[' "$WORK/ctl.err")"
assert_equal "B level 1 workers" "$(level_workers "$WORK/b/results.json" 0)" "3 0 1 2"
assert_equal "B level 2 workers" "$(level_workers "$WORK/b/results.json" 1)" "3 0 1 2"
grep -q "worker doomed's share .* taken over by 2 workers" "$WORK/ctl.err" ||
    fail "B: the last level's loss was not taken over: $(grep -v '^\[' "$WORK/ctl.err")"
assert_equal "B valid" "$(json_value "$WORK/b/results.json" 'r["validity"]["valid"]')" True
echo "B ok: the stopped worker rejoined at the boundary; the last level's loss taken over"

# C. Two workload files; a --once worker leaves after the first run.
write_workload "$WORK/c1.yaml" ignore_eos=true endpoints="[$MOCK_URL]" output_tokens=10 \
    concurrency=3 duration=1500ms heartbeat=250ms liveness=4
write_workload "$WORK/c2.yaml" ignore_eos=true endpoints="[$MOCK_URL]" output_tokens=10 \
    concurrency=4 duration=1500ms heartbeat=250ms liveness=4
run_scenario_with_leaver c "$WORK/c1.yaml" "$WORK/c2.yaml"
grep -Eq "worker leaver (went silent|left) before the start: forgotten" "$WORK/ctl.err" ||
    grep -q "worker leaver .*forgotten" "$WORK/ctl.err" ||
    fail "C: the leaver was not forgotten between the runs: $(grep -v '^\[' "$WORK/ctl.err")"
for n in 1 2; do
    [ -f "$WORK/c/run-$n/results.json" ] || fail "C: run $n wrote no results.json"
done
assert_equal "C run 1 workers" \
    "$(json_value "$WORK/c/run-1/results.json" '[l["workers"][k] for k in ("started", "lost", "carried_by")]')" \
    "[3, 0, 3]"
assert_equal "C run 2 workers" \
    "$(json_value "$WORK/c/run-2/results.json" '[l["workers"][k] for k in ("started", "lost", "carried_by")]')" \
    "[2, 0, 2]"
assert_equal "C run 2 in results" "$(json_value "$WORK/c/run-2/results.json" 'r["run"]["workers"]')" 2
echo "C ok: run 2 of 2 carried by the 2 workers left after the --once worker left"

# D. A 2-level sweep; the --once worker leaves between the two levels.
write_sweep "$WORK/d.yaml" "[2, 4]" 1500ms
run_scenario_with_leaver d "$WORK/d.yaml"
assert_equal "D level 1 workers" "$(level_workers "$WORK/d/results.json" 0)" "3 0 0 3"
assert_equal "D level 2 workers" "$(level_workers "$WORK/d/results.json" 1)" "2 0 0 2"
echo "D ok: level 2 of the sweep carried by the 2 workers left after the --once worker left"
