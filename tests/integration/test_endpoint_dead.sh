#!/bin/bash
# limits.endpoint_dead_after: a server that dies mid-run (the mock killed) fails every request from
# then on, and once that has lasted endpoint_dead_after (2 s here; 10 s by default) the circuit
# breaker stops the run, naming the endpoint and its last error, within seconds rather than at the
# end of its 60 s duration. The results say why (stop_reason, partial).
# ctest: parallel (content, counts and a bound of seconds)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 5
MOCK_PID=${BACKGROUND[-1]}
cat >"$WORK/dead.yaml" <<YAML
target: {endpoints: [$MOCK_URL], ignore_eos: true, connect_timeout: 1s}
workload: {kind: requests, input_tokens: 8, output_tokens: 4}
scheduler: {kind: concurrent, concurrency: 2}
limits: {duration: 60s, endpoint_dead_after: 2s}
YAML
timeout 60 "$STAMPEDE" run "$WORK/dead.yaml" --workers 1 --out "$WORK/out" >"$WORK/table" \
    2>"$WORK/run.err" &
RUN_PID=$!
BACKGROUND+=("$RUN_PID")
wait_for_line "$WORK/run.err" 20 "start in" >/dev/null || fail "the run did not start: $(cat "$WORK/run.err")"
sleep 1.5
kill "$MOCK_PID"
killed=$(date +%s%N)
rc=0
wait "$RUN_PID" || rc=$?
elapsed_ms=$((($(date +%s%N) - killed) / 1000000))
[ "$elapsed_ms" -lt 8000 ] || fail "the run went on $elapsed_ms ms after its server died"
grep -q "circuit breaker: every request to $MOCK_URL failed for 2\.[0-9] s (limits.endpoint_dead_after 2 s); the last: refused" \
    "$WORK/run.err" || fail "message: $(tail -5 "$WORK/run.err")"
stop=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"]["stop_reason"])' \
    "$WORK/out/results.json")
case $stop in "circuit breaker: every request to $MOCK_URL failed"*) ;; *) fail "stop_reason: $stop" ;; esac
[ "$(json_value "$WORK/out/results.json" 'l["requests_ok"]')" -gt 0 ] || fail "no request succeeded before the kill"
echo "ok: a server dead mid-run stopped the run $elapsed_ms ms after it died (rc $rc)"
