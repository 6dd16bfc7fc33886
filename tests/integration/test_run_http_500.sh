#!/bin/bash
# A mock endpoint answering HTTP 500 to half the requests (its fault injection): those count as
# http_500 errors (their own class: docs/metrics.md section 3), the others as ok, and the run still exits 0 (not every request failed).
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 1 --fail-rate 0.5 --fail-status 500 --seed 5
write_workload "$WORK/f.yaml" ignore_eos=true endpoints="[$MOCK_URL]" concurrency=4 \
    max_requests=100
run_bounded 60 /dev/null "$WORK/run.err" "$WORK/f.yaml" --workers 2 --out "$WORK/out"
assert_equal "exit status" "$RUN_RC" 0
R="$WORK/out/results.json"
ok=$(json_value "$R" 'l["requests_ok"]')
e5=$(json_value "$R" 'l["errors"]["http_500"]')
assert_equal "http_5xx (other 5xx statuses)" "$(json_value "$R" 'l["errors"]["http_5xx"]')" 0
assert_equal "ok + http_500" "$((ok + e5))" 100
assert_equal "failed" "$(json_value "$R" 'l["requests_failed"]')" "$e5"
[ "$e5" -ge 25 ] && [ "$e5" -le 75 ] || fail "http_500 = $e5 of 100 at a 50 % fault rate"
echo "ok: $e5 of 100 counted as http_500"
