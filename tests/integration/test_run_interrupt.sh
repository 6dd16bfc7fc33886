#!/bin/bash
# Ctrl-C on `stampede run`: the workers are stopped and drained, partial results are written and
# marked as such, the exit status is 130, and no child (worker or embedded mock) is left behind.
# Killing `run` outright (SIGKILL) takes its children with it too (PR_SET_PDEATHSIG).
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

"$STAMPEDE" run "$WORK/i.yaml" --workers 2 --out "$WORK/out" >"$WORK/table" 2>"$WORK/run.err" &
RUN=$!
BACKGROUND+=($RUN)
wait_for_line "$WORK/run.err" 30 "\] [3-9]\.[0-9] s \|" >/dev/null || fail "the run did not get going: $(cat "$WORK/run.err")"
[ "$(children_of_run "$WORK/run.err" | wc -l)" = 3 ] || fail "expected 2 workers and a mock: $(cat "$WORK/run.err")"
kill -INT "$RUN"
wait_exit "$RUN" 30
assert_equal "exit status after SIGINT" "$EXIT_STATUS" 130
grep -q "interrupted: stopping the workers and draining" "$WORK/run.err" || fail "no drain message"
R="$WORK/out/results.json"
assert_equal "partial" "$(json_value "$R" 'r["partial"]')" True
assert_equal "stop_reason" "$(json_value "$R" 'r["run"]["stop_reason"]')" interrupted
[ "$(json_value "$R" 'l["requests_cancelled"]')" -ge 1 ] || fail "no request was cancelled by the stop"
grep -q "PARTIAL" "$WORK/table" || fail "the table does not say the results are partial"
assert_gone "$WORK/run.err" "SIGINT"

"$STAMPEDE" run "$WORK/i.yaml" --workers 2 --out "$WORK/out2" >/dev/null 2>"$WORK/run2.err" &
RUN=$!
BACKGROUND+=($RUN)
wait_for_line "$WORK/run2.err" 30 "\] [2-9]\.[0-9] s \|" >/dev/null || fail "second run did not get going"
kill -KILL "$RUN"
assert_gone "$WORK/run2.err" "SIGKILL of run"
echo "ok: interrupted run drained, partial results, exit 130, no orphans (also after SIGKILL)"
