#!/bin/bash
# A cap below the worker count is still the cap: rate mode at 20/s with scheduler.concurrency 1
# on 2 workers never has 2 requests in flight at the mock. Each request takes about 250 ms (fixed
# mode, 25 tokens at 10 ms), so arrivals pile up behind the cap and both workers would run one
# each if the cap were split as one per worker. The mock's running gauge is sampled every 50 ms
# while the run lasts.
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 10 --itl-ms 10
write_workload "$WORK/r.yaml" seed=3 endpoints="[$MOCK_URL]" ignore_eos=true output_tokens=25 \
    rate=20/s arrival=constant concurrency=1 duration=4s
timeout 60 "$STAMPEDE" run "$WORK/r.yaml" --workers 2 --out "$WORK/out" >"$WORK/table" \
    2>"$WORK/run.err" &
RUN_PID=$!
BACKGROUND+=($RUN_PID)
samples=0 ones=0
for ((i = 0; i < 400; i++)); do
    kill -0 "$RUN_PID" 2>/dev/null || break
    running=$(mock_metric vllm:num_requests_running)
    samples=$((samples + 1))
    [ "$running" -le 1 ] || fail "$running requests running at the mock with a cap of 1 (sample $samples)"
    [ "$running" != 1 ] || ones=$((ones + 1))
    sleep 0.05
done
wait_exit "$RUN_PID" 60
# Late by the cap the user chose, not by the client: the run is valid.
assert_equal "exit status" "$EXIT_STATUS" 0
[ "$ones" -ge 10 ] || fail "only $ones of $samples samples saw a request running"
done_requests=$(json_value "$WORK/out/results.json" 'l["requests_ok"]')
# 4 s at one request at a time of about 250 ms each: at most 17 (16 plus the one at the end).
[ "$done_requests" -le 17 ] || fail "$done_requests requests done in 4 s with a cap of 1"
# The rate falls short of 20/s, and the warning names the cap as the cause.
check_results "$WORK/out" <<'PY'
rate = level["rate"]
assert rate["requested_per_s"] == 20, rate
assert 0 < rate["achieved_per_s"] < 6, rate
assert rate["warning"].startswith("the concurrency cap held arrivals back"), rate
assert results["validity"]["valid"] is True, results["validity"]
assert results["workers"][0]["cap_waits"] > 0 and results["workers"][1]["arrivals"] == 0, results["workers"]
PY
grep -q "^Rate: requested 20/s, achieved [0-9.]*/s$" "$WORK/table" || fail "no rate line: $(cat "$WORK/table")"
grep -q "^WARNING: the achieved rate is below the requested one: the concurrency cap held" \
    "$WORK/table" || fail "no rate warning naming the cap: $(cat "$WORK/table")"
grep -q "^WARNING: schedule lag p99 .* scheduler.concurrency held [0-9]* arrivals back" "$WORK/table" ||
    fail "the schedule lag warning does not name the cap: $(cat "$WORK/table")"
grep -q "the client could not keep" "$WORK/table" && fail "the cap's wait is blamed on the client"
echo "ok: cap 1 on 2 workers: never 2 running in $samples samples ($ones saw 1), $done_requests requests"
