#!/bin/bash
# Same file and seed, 1 worker and 4 workers: the same requests are generated (the workload
# digest, an order-independent sum of every request's hash, is equal) and the same number run.
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 1
cat >"$WORK/det.yaml" <<YAML
seed: 11
target:
  api: chat
  model: mock-llama
  ignore_eos: true
  endpoints: [$MOCK_URL]
workload:
  kind: chat
  turns: {dist: uniform, min: 1, max: 4}
  input_tokens: {dist: lognormal, mean: 60, sigma: 0.5, min: 4, max: 400}
  output_tokens: {dist: uniform, min: 4, max: 24}
  think_time: 0
  system_prompt_tokens: 32
scheduler:
  kind: concurrent
  concurrency: 8
limits:
  max_sessions: 40
YAML

for n in 1 4; do
    run_bounded 120 /dev/null "$WORK/run$n.err" "$WORK/det.yaml" --workers $n --out "$WORK/out$n"
    [ "$RUN_RC" = 0 ] || fail "run with $n workers exited $RUN_RC: $(tail -5 "$WORK/run$n.err")"
done
d1=$(json_value "$WORK/out1/results.json" 'l["workload_digest"]')
d4=$(json_value "$WORK/out4/results.json" 'l["workload_digest"]')
n1=$(json_value "$WORK/out1/results.json" 'l["requests_ok"]')
n4=$(json_value "$WORK/out4/results.json" 'l["requests_ok"]')
s1=$(json_value "$WORK/out1/results.json" 'l["sessions_completed"]')
s4=$(json_value "$WORK/out4/results.json" 'l["sessions_completed"]')
[ -n "$d1" ] && [ "$d1" != "None" ] || fail "no workload_digest in results.json"
assert_equal "workload digest, 4 workers vs 1" "$d4" "$d1"
assert_equal "requests, 4 workers vs 1" "$n4" "$n1"
assert_equal "sessions completed (1 worker)" "$s1" 40
assert_equal "sessions completed (4 workers)" "$s4" 40
assert_equal "workers in the 4-worker run" "$(json_value "$WORK/out4/results.json" 'r["run"]["workers"]')" 4
echo "ok: digest $d1 with 1 and 4 workers, $n1 requests each"
