#!/bin/bash
# `stampede run A B` runs both files on the same two local workers and the same embedded mock:
# OUT/run-1 and OUT/run-2 each hold their own exact totals and run id, each worker registered
# once, and no process is left behind.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

write_workload "$WORK/a.yaml" ignore_eos=true concurrency=2 max_requests=12
write_workload "$WORK/b.yaml" ignore_eos=true concurrency=4 max_requests=21
run_bounded 90 "$WORK/run.out" "$WORK/run.err" "$WORK/a.yaml" "$WORK/b.yaml" --workers 2 \
    --out "$WORK/out"
assert_equal "exit status" "$RUN_RC" 0
assert_equal "run 1 requests" "$(json_value "$WORK/out/run-1/results.json" 'l["requests_ok"]')" 12
assert_equal "run 2 requests" "$(json_value "$WORK/out/run-2/results.json" 'l["requests_ok"]')" 21
id1=$(json_value "$WORK/out/run-1/results.json" 'r["run"]["run_id"]')
id2=$(json_value "$WORK/out/run-2/results.json" 'r["run"]["run_id"]')
[ "$id1" != "$id2" ] || fail "both runs have run id $id1"
assert_equal "registrations" "$(grep -c "registered with controller" "$WORK/out/workers.log")" 2
assert_equal "runs finished" "$(grep -Eo "run [0-9a-f]+ finished" "$WORK/out/workers.log" | sort -u |
    awk '{print $2}' | sort -u | tr '\n' ' ')" "$(printf '%s\n' "$id1" "$id2" | sort | tr '\n' ' ')"
assert_equal "mock starts" "$(grep -c "embedded mock at" "$WORK/run.err")" 1
EP=$(grep -Eo 'tcp://127\.0\.0\.1:[0-9]+' "$WORK/run.err" | head -1)
[ -n "$EP" ] || fail "no endpoint in: $(head -3 "$WORK/run.err")"
! pgrep -f "worker --connect $EP " >/dev/null || fail "a local worker outlived stampede run"
echo "ok: stampede run with two files, totals 12 and 21 on the same workers"
