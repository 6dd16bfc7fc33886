#!/bin/bash
# A rate schedule cut by the limits reports the rate in force, and warns only of a real shortfall
# (docs/metrics.md, "Requested and achieved rate"):
#  - a Mooncake trace of 400 rows whose first 200 arrive every 20 ms and the rest every 100 ms,
#    replayed at time_scale 0.5 and cut to its first 200 rows (max_sessions, then max_requests):
#    requested = those rows' own rate (199 / 1.99 s = 100/s, not the file's 33/s) within 2 %,
#    achieved within 5 % of it (the time after the last arrival is no part of the schedule), and
#    no warning;
#  - a Poisson schedule at 50/s cut by max_sessions: requested 50/s, no warning;
#  - the same trace cut with scheduler.concurrency 2 against a slower mock: a real shortfall,
#    warned of and blamed on the cap.
# ctest: parallel (rates within 2-5 % computed from counts and the trace's own timestamps)
source "$(dirname "$0")/protocol_lib.sh"

python3 - "$WORK/cut.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    t = 0
    for i in range(400):
        f.write(json.dumps({"timestamp": t, "input_length": 24, "output_length": 4,
                            "hash_ids": [i]}) + "\n")
        t += 20 if i < 199 else 100
PY

run_cut() { # name, limits, mock, scheduler extra: runs and leaves $WORK/$1/results.json
    cat >"$WORK/$1.yaml" <<YAML
seed: 4
target: {ignore_eos: true}
workload:
  kind: trace
  trace: {path: $WORK/cut.jsonl, format: mooncake, time_scale: 0.5}
scheduler: {kind: rate${4:-}}
limits: {$2}
mock: {$3}
validity: {max_schedule_lag: 2s}
YAML
    run_bounded 60 "$WORK/$1.out" "$WORK/$1.err" "$WORK/$1.yaml" --workers 2 --out "$WORK/$1"
    [ "$RUN_RC" = 0 ] || fail "$1: the run exited $RUN_RC: $(tail -5 "$WORK/$1.err")"
}

IN_FORCE='
ts = [json.loads(line)["timestamp"] for line in open(argv[0])]
n = level["requests_ok"]                         # the first n rows, time_scale 0.5
in_force = (n - 1) / (ts[n - 1] / 1000 * 0.5)
whole = 399 / (ts[399] / 1000 * 0.5)
assert n in (60, 200) and abs(in_force - 100) < 1e-9 and whole < 40, (n, in_force, whole)
rate = level["rate"]
'
for limit in "max_sessions: 200" "max_requests: 200"; do
    name=${limit%%:*}
    run_cut "$name" "$limit" "ttft: 5ms, itl: 5ms"
    check_results "$WORK/$name" "$WORK/cut.jsonl" <<PY || fail "$limit: the rate is not the one in force"
$IN_FORCE
assert level["requests_ok"] == 200, level["requests_ok"]
assert abs(rate["requested_per_s"] - in_force) <= 0.02 * in_force, (rate, in_force)
assert abs(rate["achieved_per_s"] - in_force) <= 0.05 * in_force, (rate, in_force)
assert rate["warning"] is None, rate["warning"]
print("$name:", rate)
PY
    grep -Eq "^Rate: requested (99\.|100)" "$WORK/$name.out" ||
        fail "$limit: the table's rate line: $(grep Rate: "$WORK/$name.out")"
    ! grep -q "WARNING: the achieved rate" "$WORK/$name.out" || fail "$limit: a shortfall warned of"
done

cat >"$WORK/poisson.yaml" <<YAML
seed: 4
target: {ignore_eos: true}
workload: {input_tokens: 24, output_tokens: 4}
scheduler: {kind: rate, rate: 50/s}
limits: {max_sessions: 60}
mock: {ttft: 5ms, itl: 30ms}
validity: {max_schedule_lag: 2s}
YAML
run_bounded 60 /dev/null "$WORK/poisson.err" "$WORK/poisson.yaml" --workers 1 --out "$WORK/poisson"
[ "$RUN_RC" = 0 ] || fail "poisson: the run exited $RUN_RC: $(tail -5 "$WORK/poisson.err")"
check_results "$WORK/poisson" <<'PY' || fail "a Poisson schedule cut by max_sessions warned"
rate = level["rate"]
assert level["requests_ok"] == 60 and rate["requested_per_s"] == 50, (level["requests_ok"], rate)
assert rate["warning"] is None, rate["warning"]
PY

# A real shortfall: two slots for requests of about 5 + 4 x 40 ms: about 12 starts/s of 100 (the
# first 60 rows' rate is the first 200's).
run_cut capped "max_sessions: 60" "ttft: 5ms, itl: 40ms" ", concurrency: 2"
check_results "$WORK/capped" "$WORK/cut.jsonl" <<PY || fail "a real shortfall was not warned of"
$IN_FORCE
assert abs(rate["requested_per_s"] - in_force) <= 0.02 * in_force, (rate, in_force)
assert rate["achieved_per_s"] < 0.5 * in_force, rate
assert rate["warning"] and "concurrency cap" in rate["warning"], rate["warning"]
PY
echo "ok: a cut schedule reports the rate in force and warns only of a real shortfall"
