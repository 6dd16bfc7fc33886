#!/bin/bash
# One controller, three long-lived workers (real processes), two workload files: both runs go
# back to back over the same connected workers. Each run writes its own OUT/run-N/results.json
# with its own run id and its own exact totals (not the sum of both), and every worker registered
# once: one registration line per worker at the controller, one Welcome per worker.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 1
write_workload "$WORK/a.yaml" ignore_eos=true endpoints="[$MOCK_URL]" concurrency=3 \
    max_requests=30
write_workload "$WORK/b.yaml" ignore_eos=true endpoints="[$MOCK_URL]" concurrency=5 \
    max_requests=47
start_controller "$WORK/ctl.err" "$WORK/a.yaml" "$WORK/b.yaml" --bind "tcp://127.0.0.1:*" \
    --expect-workers 3 --out "$WORK/out" --register-timeout 20
PIDS=()
for id in w1 w2 w3; do
    start_worker "$WORK/$id.err" --connect "$CONTROLLER_EP" --id "$id"
    PIDS+=("$WORKER_PID")
done
wait_controller 90
assert_equal "controller exit status" "$CONTROLLER_RC" 0

for n in 1 2; do
    [ -f "$WORK/out/run-$n/results.json" ] || fail "no results for run $n: $(cat "$WORK/ctl.err")"
done
[ ! -f "$WORK/out/results.json" ] || fail "two runs wrote results.json at the top of OUT"
assert_equal "run 1 requests" "$(json_value "$WORK/out/run-1/results.json" 'l["requests_ok"]')" 30
assert_equal "run 2 requests" "$(json_value "$WORK/out/run-2/results.json" 'l["requests_ok"]')" 47
assert_equal "run 1 config" "$(json_value "$WORK/out/run-1/results.json" 'r["run"]["config"]')" \
    "$WORK/a.yaml"
assert_equal "run 2 config" "$(json_value "$WORK/out/run-2/results.json" 'r["run"]["config"]')" \
    "$WORK/b.yaml"
id1=$(json_value "$WORK/out/run-1/results.json" 'r["run"]["run_id"]')
id2=$(json_value "$WORK/out/run-2/results.json" 'r["run"]["run_id"]')
[[ "$id1" =~ ^[0-9a-f]{16}$ && "$id2" =~ ^[0-9a-f]{16}$ ]] || fail "run ids '$id1' '$id2'"
[ "$id1" != "$id2" ] || fail "both runs have run id $id1"
for n in 1 2; do
    assert_equal "run $n workers" "$(json_value "$WORK/out/run-$n/results.json" 'r["run"]["workers"]')" 3
done

# Registered once, probed twice: the same three names in both runs.
for id in w1 w2 w3; do
    assert_equal "registrations of $id" "$(grep -c "worker $id (host .*) registered" "$WORK/ctl.err")" 1
    assert_equal "Welcomes at $id" "$(grep -c "registered with controller" "$WORK/$id.err")" 1
    assert_equal "runs finished by $id" \
        "$(grep -Eo "run [0-9a-f]+ finished" "$WORK/$id.err" | tr '\n' ' ')" \
        "run $id1 finished run $id2 finished "
done
for pid in "${PIDS[@]}"; do
    kill -0 "$pid" 2>/dev/null || fail "a long-lived worker exited"
done
assert_equal "clock measurements" "$(grep -c "measuring clocks" "$WORK/ctl.err")" 2
names() { grep -Eo "worker [0-9] = [a-z0-9]+" "$WORK/ctl.err" | sed -n "$1" | sort | tr '\n' ' '; }
assert_equal "workers of run 2" "$(names 4,6p)" "$(names 1,3p)"
echo "ok: two runs over one fleet, totals 30 and 47, run ids $id1 and $id2"
