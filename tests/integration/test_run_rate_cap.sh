#!/bin/bash
# A cap below the worker count is still the cap: rate mode at 20/s with scheduler.concurrency 1
# on 2 workers never has 2 requests in flight at the mock. Each request takes about 250 ms (fixed
# mode, 25 tokens at 10 ms), so arrivals pile up behind the cap and both workers would run one
# each if the cap were split as one per worker. The mock's running gauge is sampled every 50 ms
# while the run lasts.
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 10 --itl-ms 10
cat >"$WORK/r.yaml" <<YAML
seed: 3
target:
  endpoints: [$MOCK_URL]
  ignore_eos: true
workload:
  kind: requests
  input_tokens: 8
  output_tokens: 25
scheduler:
  kind: rate
  rate: 20/s
  arrival: constant
  concurrency: 1
limits:
  duration: 4s
YAML
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
[ "$EXIT_STATUS" = 0 ] || [ "$EXIT_STATUS" = 3 ] ||
    fail "stampede run exited $EXIT_STATUS: $(tail -3 "$WORK/run.err")"
[ "$ones" -ge 10 ] || fail "only $ones of $samples samples saw a request running"
done_requests=$(json_value "$WORK/out/results.json" 'l["requests_ok"]')
# 4 s at one request at a time of about 250 ms each: at most 17 (16 plus the one at the end).
[ "$done_requests" -le 17 ] || fail "$done_requests requests done in 4 s with a cap of 1"
echo "ok: cap 1 on 2 workers: never 2 running in $samples samples ($ones saw 1), $done_requests requests"
