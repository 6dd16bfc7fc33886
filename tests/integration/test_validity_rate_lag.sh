#!/bin/bash
# Rate mode far beyond what one loop can send: 20,000 arrivals/s of 20,000-word prompts (2.4 GB/s
# of request bodies) with no cap, the client pinned to one core and the fixed-mode mock on the
# other. (Token traffic alone is not enough: at 10,000/s of 100-token replies this client keeps the
# schedule on this 2-core VM, so the demand is made out of bytes no single core can move.) The arrivals leave late, so the achieved rate falls
# short; with no cap to blame, the warning names the client (schedule lag and the loop's CPU
# share), and the verdict lists the schedule lag. --allow-invalid keeps the exit at 0.
source "$(dirname "$0")/protocol_lib.sh"

command -v taskset >/dev/null || fail "taskset is needed (util-linux)"
start_mock --ttft-ms 1 --itl-ms 1
taskset -pc "$(($(nproc) > 1 ? 1 : 0))" "${BACKGROUND[-1]}" >/dev/null
cat >"$WORK/r.yaml" <<YAML
target:
  endpoints: [$MOCK_URL]
  ignore_eos: true
workload:
  kind: requests
  input_tokens: 20000
  output_tokens: 1
scheduler:
  kind: rate
  rate: 20000/s
  arrival: constant
limits:
  duration: 1s
YAML
RUN_RC=0
timeout 60 taskset -c 0 "$STAMPEDE" run "$WORK/r.yaml" --workers 1 --out "$WORK/out" \
    --allow-invalid >"$WORK/table" 2>"$WORK/run.err" || RUN_RC=$?
assert_equal "exit status with --allow-invalid" "$RUN_RC" 0
check_results "$WORK/out" <<'PY'
rate = level["rate"]
assert rate["requested_per_s"] == 20000, rate
assert rate["achieved_per_s"] < 0.95 * 20000, rate
assert rate["warning"].startswith("the client could not keep the schedule: schedule lag p99 "), rate
assert "of a core" in rate["warning"], rate
assert results["workers"][0]["cap_waits"] == 0, results["workers"]
v = results["validity"]
assert v["valid"] is False and any(r.startswith("schedule lag p99 ") for r in v["reasons"]), v
PY
grep -q "^Rate: requested 20000/s, achieved [0-9.]*/s$" "$WORK/table" ||
    fail "no rate line: $(tail -8 "$WORK/table")"
grep -q "^WARNING: the achieved rate is below the requested one: the client could not keep" \
    "$WORK/table" || fail "no rate warning naming the client: $(tail -8 "$WORK/table")"
echo "ok: rate shortfall blamed on the client, run invalid by schedule lag"
