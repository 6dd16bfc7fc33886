#!/bin/bash
# The validity verdict: a client pinned to one core and overloaded (1,000 streams of 1 ms tokens
# against a fixed-mode mock on the other core: about a million tokens a second, far beyond one
# loop) is judged invalid with a saturation reason and exits 3; --allow-invalid writes the same
# verdict and exits 0. A light run is valid and exits 0.
source "$(dirname "$0")/protocol_lib.sh"

command -v taskset >/dev/null || fail "taskset is needed (util-linux)"
CLIENT_CPU=0
MOCK_CPU=$(($(nproc) > 1 ? 1 : 0))

start_mock --ttft-ms 1 --itl-ms 1
taskset -pc "$MOCK_CPU" "${BACKGROUND[-1]}" >/dev/null

write_workload "$WORK/light.yaml" endpoints="[$MOCK_URL]" concurrency=2 max_requests=40
run_bounded 60 "$WORK/light.table" "$WORK/light.err" "$WORK/light.yaml" --workers 1 \
    --out "$WORK/light"
assert_equal "light run exit status" "$RUN_RC" 0
assert_equal "light run valid" "$(json_value "$WORK/light/results.json" 'r["validity"]["valid"]')" True
grep -q "^Run valid$" "$WORK/light.table" || fail "the table does not end with 'Run valid'"

write_workload "$WORK/heavy.yaml" endpoints="[$MOCK_URL]" ignore_eos=true output_tokens=400 \
    concurrency=1000 duration=4s
check_heavy() { # $1: run directory, $2: table
    check_results "$1" <<'PY'
v = results["validity"]
assert v["valid"] is False, v
assert any(r.startswith("client saturated: worker ") for r in v["reasons"]), v["reasons"]
w = results["workers"][0]
assert w["events_per_read"] > 0 and w["loop_cpu_share"] > 0, w
PY
    grep -q "^Run INVALID:$" "$2" || fail "the table does not end with the verdict: $(tail -3 "$2")"
    grep -q "  - client saturated: " "$2" || fail "the table does not name the saturation"
}
RUN_RC=0
timeout 60 taskset -c "$CLIENT_CPU" "$STAMPEDE" run "$WORK/heavy.yaml" --workers 1 \
    --out "$WORK/heavy" >"$WORK/heavy.table" 2>"$WORK/heavy.err" || RUN_RC=$?
assert_equal "overloaded run exit status" "$RUN_RC" 3
check_heavy "$WORK/heavy" "$WORK/heavy.table"
grep -q "the run is invalid: client saturated" "$WORK/heavy.err" ||
    fail "no invalid message: $(tail -3 "$WORK/heavy.err")"

RUN_RC=0
timeout 60 taskset -c "$CLIENT_CPU" "$STAMPEDE" run "$WORK/heavy.yaml" --workers 1 \
    --out "$WORK/allowed" --allow-invalid >"$WORK/allowed.table" 2>"$WORK/allowed.err" ||
    RUN_RC=$?
assert_equal "overloaded run with --allow-invalid exit status" "$RUN_RC" 0
check_heavy "$WORK/allowed" "$WORK/allowed.table"
echo "ok: overloaded run invalid (exit 3, 0 with --allow-invalid), light run valid"
