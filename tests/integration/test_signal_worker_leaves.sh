#!/bin/bash
# SIGTERM on a worker mid-run (docs/protocol.md, "Signals"): the worker stops its load, sends its
# last batches, waits for their acknowledgement, says goodbye and exits 0. The controller logs the
# goodbye as an orderly leave, not a loss: the worker is not "lost" in results.json, every record
# it announced is merged, and the run goes on with the other worker to its end, partial (the
# leaver took its share of the load with it). Two long-lived workers, a fixed-mode mock (ITL 10 ms,
# 50 tokens: ~0.5 s a request), 8 s by duration.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 20 --itl-ms 10
write_workload "$WORK/l.yaml" seed=4 ignore_eos=true endpoints="[$MOCK_URL]" output_tokens=50 \
    concurrency=4 duration=8s
start_controller "$WORK/ctl.err" "$WORK/l.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 2 \
    --out "$WORK/out" --register-timeout 20
start_worker "$WORK/stay.err" --connect "$CONTROLLER_EP" --id stay
start_worker "$WORK/leaver.err" --connect "$CONTROLLER_EP" --id leaver
LEAVER=$WORKER_PID
wait_run_reaches "$WORK/ctl.err" 20 2
kill -TERM "$LEAVER"
wait_exit "$LEAVER" 8
[ "$EXIT_STATUS" != timeout ] || fail "the worker did not leave within 8 s of SIGTERM: $(cat "$WORK/leaver.err")"
assert_equal "leaving worker's exit status" "$EXIT_STATUS" 0
grep -q "stopping the load, sending the last batches and leaving" "$WORK/leaver.err" ||
    fail "the worker did not say it was leaving: $(cat "$WORK/leaver.err")"
line=$(grep -Eo "exiting: run [0-9a-f]+: [0-9]+ requests completed.*" "$WORK/leaver.err") ||
    fail "no exit line: $(cat "$WORK/leaver.err")"
echo "$line" | grep -q "spooled" && fail "the worker spooled with its controller alive: $line"
done_by_leaver=$(echo "$line" | grep -Eo "[0-9]+ requests completed" | grep -Eo "^[0-9]+")
wait_for_line "$WORK/ctl.err" 5 "worker leaver left: the worker was stopped \(SIGTERM\)" >/dev/null ||
    fail "the controller did not log the goodbye: $(cat "$WORK/ctl.err")"
grep -q "worker leaver lost" "$WORK/ctl.err" && fail "the leave was taken for a loss: $(cat "$WORK/ctl.err")"
wait_controller 30
R="$WORK/out/results.json"
[ -f "$R" ] || fail "no results: $(cat "$WORK/ctl.err")"
assert_equal "partial" "$(json_value "$R" 'r["partial"]')" True
json_value "$R" 'l["partial_reason"]' | grep -q "worker leaver left" || fail "partial_reason: $(json_value "$R" 'l.get("partial_reason")')"
assert_equal "leaver lost" "$(json_value "$R" '[w["lost"] for w in r["workers"] if w["name"] == "leaver"][0]')" False
assert_equal "stop reason" "$(json_value "$R" 'r["run"]["stop_reason"]')" "duration reached"
grep -q "records announced" "$WORK/ctl.err" && fail "records missing: $(cat "$WORK/ctl.err")"
echo "ok: the worker left in order (exit 0, $done_by_leaver requests, all acknowledged); the run went on to its end without it"
