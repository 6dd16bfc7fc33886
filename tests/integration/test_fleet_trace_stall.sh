#!/bin/bash
# --trace into a FIFO that nobody reads: opening it blocks forever, so every trace line waits in
# the writer's queue. A 10 s run over three workers must still keep its heartbeats (no worker
# lost), end by its duration, and count the lines it could not write, in results.json and on
# stderr. The queue is bounded to 64 KiB here, so it fills during the run and drops are said
# while it goes on. (Before the writer thread, the controller blocked in fopen() at the start and
# hung.)
# ctest: parallel (its bounds are seconds: loss declared within 10 s, no worker lost over a 3 s liveness)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 2
write_workload "$WORK/t.yaml" ignore_eos=true endpoints="[$MOCK_URL]" concurrency=6 duration=10s
mkdir -p "$WORK/out"
mkfifo "$WORK/out/requests.jsonl"
STAMPEDE_TEST_TRACE_QUEUE_BYTES=65536 start_controller "$WORK/ctl.err" "$WORK/t.yaml" --bind "tcp://127.0.0.1:*" --expect-workers 3 \
    --out "$WORK/out" --trace --register-timeout 20
for id in w1 w2 w3; do
    start_once_worker "$id"
done
wait_controller 60
grep -q "lost" "$WORK/ctl.err" && fail "a worker was lost: $(cat "$WORK/ctl.err")"
assert_equal "controller exit status" "$CONTROLLER_RC" 0
for id in w1 w2 w3; do
    grep -q "no word from the controller\|orphaned load" "$WORK/$id.err" &&
        fail "worker $id lost the controller: $(cat "$WORK/$id.err")"
done
# (Not check_results: it would open the FIFO to read the trace, and wait for a writer.)
python3 - "$WORK/out/results.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))
level = results["levels"][0]
run = results["run"]
assert run["stop_reason"] == "duration reached", run["stop_reason"]
assert not results.get("partial"), results.get("partial_reason")
total = level["requests_ok"] + level["requests_failed"]
trace = run["trace"]
assert total > 100, total
# Nothing could be written (the FIFO never opened); every line is counted as dropped.
assert trace["lines_written"] == 0, trace
assert trace["lines_dropped"] >= total, (trace, total)
print("dropped", trace["lines_dropped"], "of", total, "requests")
PY
grep -Eq "requests.jsonl is incomplete: [0-9]+ lines dropped" "$WORK/ctl.err" ||
    fail "stderr does not report the dropped lines: $(tail -3 "$WORK/ctl.err")"
# Said during the run, before its end: the live notice comes before the results.
live=$(grep -n "the trace writer cannot keep up" "$WORK/ctl.err" | head -1 | cut -d: -f1)
end=$(grep -n "results in " "$WORK/ctl.err" | cut -d: -f1)
[ -n "$live" ] && [ "$live" -lt "$end" ] ||
    fail "no drop notice during the run: $(cat "$WORK/ctl.err")"
echo "ok: an unread trace FIFO dropped lines and stalled no heartbeat"
