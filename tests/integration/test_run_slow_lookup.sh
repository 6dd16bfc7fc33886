#!/bin/bash
# Names are resolved before the start and off the worker's loop: with every host name lookup
# slowed to 7 s (test hook STAMPEDE_TEST_LOOKUP_DELAY_MS), longer than the 5 s after which a
# silent worker fails the run before its start, both workers keep their heartbeats, answer Ready
# once the lookup is done, and the run completes. The endpoint is named `localhost` (/etc/hosts:
# no DNS traffic); the requests after the start carry no lookup, so none of them is slow.
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 5
PORT=${MOCK_URL##*:}
write_workload "$WORK/s.yaml" endpoints="[http://localhost:$PORT]" concurrency=2 max_requests=20
began=$(date +%s%N)
STAMPEDE_TEST_LOOKUP_DELAY_MS=7000 run_bounded 60 "$WORK/table" "$WORK/run.err" "$WORK/s.yaml" \
    --workers 2 --out "$WORK/out"
took_ms=$((($(date +%s%N) - began) / 1000000))
assert_equal "exit status" "$RUN_RC" 0
[ "$took_ms" -ge 7000 ] || fail "the run took $took_ms ms: the lookup delay was not applied"
grep -q "TEST HOOK: host name lookups slowed by 7000 ms" "$WORK/out/workers.log" ||
    fail "the workers did not see the hook: $(head -5 "$WORK/out/workers.log")"
grep -q "went silent\|lost" "$WORK/run.err" && fail "a worker went silent: $(cat "$WORK/run.err")"
assert_equal "requests_ok" "$(json_value "$WORK/out/results.json" 'l["requests_ok"]')" 20
# No request waited for a lookup: the first token comes in about the mock's 5 ms.
ttft_p99=$(json_value "$WORK/out/results.json" 'l["ttft_ms"]["p99"]')
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 1000 else 1)" "$ttft_p99" ||
    fail "TTFT p99 $ttft_p99 ms: a request waited for a lookup"
echo "ok: a 7 s lookup before the start: heartbeats kept, run complete in $took_ms ms"
