#!/bin/bash
# ThreadSanitizer (make tsan: STAMPEDE is build-tsan/stampede, built with -DSTAMPEDE_TSAN=ON): one
# worker process with --threads 2 (two loops, each with its own sockets, engine and timers, sharing
# the process's resolver, logging and libcurl/libzmq state) runs a streamed run against the mock
# and exits (--once); the mock and the controller are the TSan build too. Every
# process must exit cleanly with no ThreadSanitizer report (TSan's exit status 66 on a report, and
# its "WARNING: ThreadSanitizer" lines, are both checked).
source "$(dirname "$0")/../integration/protocol_lib.sh"
export TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1 suppressions=$(cd "$(dirname "$0")" && pwd)/tsan.supp ${TSAN_OPTIONS:-}"

ldd "$STAMPEDE" | grep -c libtsan >/dev/null ||
    fail "$STAMPEDE is not a ThreadSanitizer build (configure with -DSTAMPEDE_TSAN=ON; make tsan)"

start_mock --ttft-ms 10 --itl-ms 2
write_workload "$WORK/t.yaml" ignore_eos=true endpoints="[$MOCK_URL]" output_tokens=20 \
    concurrency=8 max_requests=160
start_controller "$WORK/ctl.err" "$WORK/t.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 2 \
    --out "$WORK/out" --register-timeout 60
start_worker "$WORK/w.err" --connect "$CONTROLLER_EP" --id w --threads 2 --once
W=$WORKER_PID
wait_controller 180
assert_equal "controller exit status" "$CONTROLLER_RC" 0
assert_equal "requests_ok" "$(json_value "$WORK/out/results.json" 'l["requests_ok"]')" 160
for name in w.0 w.1; do
    grep -q "worker $name: run [0-9a-f]* finished" "$WORK/w.err" ||
        fail "loop $name did not run: $(cat "$WORK/w.err")"
done
wait_exit "$W" 30
assert_equal "worker exit status (66: a ThreadSanitizer report)" "$EXIT_STATUS" 0
for log in "$WORK/w.err" "$WORK/ctl.err" "$WORK"/mock.*.out; do
    ! grep -q "ThreadSanitizer" "$log" || fail "ThreadSanitizer report in $log: $(cat "$log")"
done
echo "ok: worker --threads 2 ran 160 requests over its two loops under ThreadSanitizer with no report"
