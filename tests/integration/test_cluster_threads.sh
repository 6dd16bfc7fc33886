#!/bin/bash
# Two worker processes with --threads 2 each register as four logical workers: the controller
# partitions concurrency 10 over 4 (3+3+2+2, summing to 10), every loop runs its share, and the
# request count is exact.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 10 --itl-ms 2
start_run_on_mock t 4 20 output_tokens=10 concurrency=10 max_requests=200
start_once_worker a --threads 2
A=$WORKER_PID
start_once_worker b --threads 2
B=$WORKER_PID
wait_controller 60
assert_equal "controller exit status" "$CONTROLLER_RC" 0
R="$WORK/out/results.json"
assert_equal "workers" "$(json_value "$R" 'r["run"]["workers"]')" 4
assert_equal "requests_ok" "$(json_value "$R" 'l["requests_ok"]')" 200
shares=$(grep -Eo "worker [0-9] = [ab]\.[01]: concurrency [0-9]+" "$WORK/ctl.err" | awk '{print $NF}' |
    sort -n | tr '\n' ' ')
assert_equal "concurrency shares" "$shares" "2 2 3 3 "
for name in a.0 a.1 b.0 b.1; do
    grep -q "worker $name: run [0-9a-f]* finished" "$WORK/${name%%.*}.err" ||
        fail "loop $name did not run: $(cat "$WORK/${name%%.*}.err")"
done
wait_exit "$A" 15
assert_equal "worker a exit status" "$EXIT_STATUS" 0
wait_exit "$B" 15
assert_equal "worker b exit status" "$EXIT_STATUS" 0
echo "ok: 2 processes x 2 threads = 4 workers, shares $shares"
