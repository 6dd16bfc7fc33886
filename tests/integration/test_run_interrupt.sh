#!/bin/bash
# Ctrl-C on `stampede run`: the workers start nothing new and the requests in flight finish
# within the grace period (none is cancelled), partial results are written and marked as such,
# the exit status is 130, and no child (worker or embedded mock) is left behind. With a short
# --grace, the requests still in flight when it runs out are cancelled. A second Ctrl-C quits at
# once and tells the workers to abandon the run. Killing `run` outright (SIGKILL) takes its
# children with it too (PR_SET_PDEATHSIG).
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

write_workload "$WORK/i.yaml" ignore_eos=true input_tokens=16 output_tokens=200 concurrency=8 \
    duration=60s

children_of_run() { # the worker and mock pids `run` announced on stderr
    grep -Eo "\(pid [0-9]+\)|pid [0-9]+\) registered" "$1" | grep -Eo "[0-9]+"
}
assert_gone() {
    local pid i
    for pid in $(children_of_run "$1"); do
        for ((i = 0; i < 50 && $(kill -0 "$pid" 2>/dev/null && echo 1 || echo 0); i++)); do
            sleep 0.1
        done
        kill -0 "$pid" 2>/dev/null && fail "child $pid of run still alive 5 s after $2"
    done
    return 0
}

# Requests of ~2 s; a grace of 15 s lets them finish even on a loaded machine.
"$STAMPEDE" run "$WORK/i.yaml" --workers 2 --out "$WORK/out" --grace 15s >"$WORK/table" 2>"$WORK/run.err" &
RUN=$!
BACKGROUND+=($RUN)
wait_for_line "$WORK/run.err" 30 "\] [3-9]\.[0-9] s( of [0-9]+ s)? \|" >/dev/null || fail "the run did not get going: $(cat "$WORK/run.err")"
[ "$(children_of_run "$WORK/run.err" | wc -l)" = 3 ] || fail "expected 2 workers and a mock: $(cat "$WORK/run.err")"
kill -INT "$RUN"
wait_exit "$RUN" 30
assert_equal "exit status after SIGINT" "$EXIT_STATUS" 130
grep -q "interrupted: stopping the workers and draining for up to 15.0 s" "$WORK/run.err" || fail "no drain message"
R="$WORK/out/results.json"
assert_equal "partial" "$(json_value "$R" 'r["partial"]')" True
assert_equal "stop_reason" "$(json_value "$R" 'r["run"]["stop_reason"]')" interrupted
assert_equal "requests cancelled within the grace" "$(json_value "$R" 'l["requests_cancelled"]')" 0
grep -q "grace period over" "$WORK/run.err" && fail "the grace ran out: $(cat "$WORK/run.err")"
grep -q "PARTIAL" "$WORK/table" || fail "the table does not say the results are partial"
assert_gone "$WORK/run.err" "SIGINT"

# A grace too short for requests of 5000 tokens: what is still in flight is cancelled.
write_workload "$WORK/long.yaml" ignore_eos=true input_tokens=16 output_tokens=5000 concurrency=8 \
    duration=60s
"$STAMPEDE" run "$WORK/long.yaml" --workers 2 --out "$WORK/out3" --grace 300ms >/dev/null 2>"$WORK/run3.err" &
RUN=$!
BACKGROUND+=($RUN)
wait_for_line "$WORK/run3.err" 30 "\] [2-9]\.[0-9] s( of [0-9]+ s)? \|" >/dev/null || fail "the short-grace run did not get going"
kill -INT "$RUN"
wait_exit "$RUN" 30
assert_equal "exit status after SIGINT with --grace 300ms" "$EXIT_STATUS" 130
grep -q "grace period over: cancelling" "$WORK/run3.err" || fail "no cancel after the grace: $(cat "$WORK/run3.err")"
[ "$(json_value "$WORK/out3/results.json" 'l["requests_cancelled"]')" -ge 1 ] || fail "no request was cancelled after the grace"
assert_gone "$WORK/run3.err" "SIGINT with a short grace"

# Ctrl-C twice: out at once, the workers told to abandon, what arrived written, no orphan.
"$STAMPEDE" run "$WORK/long.yaml" --workers 2 --out "$WORK/out4" --grace 60s >/dev/null 2>"$WORK/run4.err" &
RUN=$!
BACKGROUND+=($RUN)
wait_for_line "$WORK/run4.err" 30 "\] [2-9]\.[0-9] s( of [0-9]+ s)? \|" >/dev/null || fail "the double-Ctrl-C run did not get going"
kill -INT "$RUN"
wait_for_line "$WORK/run4.err" 10 "draining for up to 60.0 s" >/dev/null || fail "no drain after the first SIGINT"
kill -INT "$RUN"
wait_exit "$RUN" 10
assert_equal "exit status after two SIGINTs" "$EXIT_STATUS" 130
grep -q "interrupted again: 2 workers told to abandon the run" "$WORK/run4.err" || fail "no abandon: $(cat "$WORK/run4.err")"
assert_equal "partial after two SIGINTs" "$(json_value "$WORK/out4/results.json" 'r["partial"]')" True
assert_gone "$WORK/run4.err" "two SIGINTs"

"$STAMPEDE" run "$WORK/i.yaml" --workers 2 --out "$WORK/out2" >/dev/null 2>"$WORK/run2.err" &
RUN=$!
BACKGROUND+=($RUN)
wait_for_line "$WORK/run2.err" 30 "\] [2-9]\.[0-9] s( of [0-9]+ s)? \|" >/dev/null || fail "second run did not get going"
kill -KILL "$RUN"
assert_gone "$WORK/run2.err" "SIGKILL of run"
echo "ok: interrupted run drained within the grace, cancelled after a short one, quit on a second signal; partial results, exit 130, no orphans (also after SIGKILL)"
