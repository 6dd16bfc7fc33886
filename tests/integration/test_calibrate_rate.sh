#!/bin/bash
# stampede calibrate from a request-rate sweep (issue 21): tests/data/sim/calibrate-rate.yaml
# (calibrate-known.yaml's engine, sessions arriving at 0.25 ... 2.2/s), simulated, calibrates back
# to each parameter within 10 % (measured: tpot_base 2.8 %, alpha 3.4 %, prefill 1.5 %, overhead,
# max_num_seqs and the KV pool under 1 %), its levels named by rate with the requests in flight
# from Little's law, and the profile reproduces every level's TPOT mean within 10 %; from the
# client figures alone, max_num_seqs comes from the fullest level past the knee.
# ctest: parallel (virtual time: no timing asserted)
source "$(dirname "$0")/protocol_lib.sh"

FILE="$STAMPEDE_SRC/tests/data/sim/calibrate-rate.yaml"
timeout 60 "$STAMPEDE" simulate "$FILE" --allow-invalid --out "$WORK/rate" >/dev/null \
    2>"$WORK/sim.err" || fail "simulate exited $?: $(tail -3 "$WORK/sim.err")"
timeout 60 "$STAMPEDE" calibrate "$WORK/rate" --out "$WORK/profile.yaml" >"$WORK/cal.out" \
    2>"$WORK/cal.err" || fail "calibrate exited $?: $(cat "$WORK/cal.err")"
grep -q "^rate rate=0.25/s " "$WORK/cal.out" || fail "the levels are not named by rate: $(tail -7 "$WORK/cal.out")"
python3 - "$WORK/profile.yaml" <<'PY' || fail "calibrate did not recover the known parameters from the rate sweep"
import re, sys
mock = open(sys.argv[1]).read().split("calibration:")[0]
known = {"tpot_base": 6, "alpha": 0.7, "prefill_tokens_per_s": 9000, "ttft_overhead": 30,
         "max_num_seqs": 24, "kv_cache_tokens": 300000}
for key, want in known.items():
    got = float(re.search(rf"^  {key}: ([0-9.e+]+)", mock, re.M).group(1))
    print(f"{key}: {got:g} (known {want:g}, {100 * abs(got - want) / want:.1f} %)")
    assert abs(got - want) <= 0.10 * want, (key, got, want)
PY
sed -e '/^mock:/,$d' "$FILE" >"$WORK/bare.yaml"
timeout 60 "$STAMPEDE" simulate "$WORK/bare.yaml" --profile "$WORK/profile.yaml" --allow-invalid \
    --out "$WORK/again" >/dev/null 2>"$WORK/again.err" || fail "simulate --profile exited $?"
check_results "$WORK/again" "$WORK/rate" <<'PY' || fail "the calibrated profile does not reproduce the rate sweep's TPOT"
known = json.load(open(os.path.join(argv[0], "results.json")))["levels"]
for a, b in zip(results["levels"], known):
    x, y = a["tpot_ms"]["mean"], b["tpot_ms"]["mean"]
    assert a["rate"] == b["rate"] and abs(x - y) <= 0.10 * y, (a["rate"], x, y)
PY
# client figures only: in flight by Little's law (requests/s x E2E), the knee's batch
python3 - "$WORK/rate/results.json" "$WORK/client.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for l in r["levels"]:
    l.pop("server", None)
json.dump(r, open(sys.argv[2], "w"))
PY
timeout 60 "$STAMPEDE" calibrate "$WORK/client.json" --out "$WORK/client.yaml" >"$WORK/client.out" \
    2>"$WORK/client.err" || fail "calibrate from client figures exited $?: $(cat "$WORK/client.err")"
grep -Eq "^  max_num_seqs +(2[2-6]) +requests decoding at the fullest rate level past the TTFT knee" \
    "$WORK/client.out" || fail "client figures: $(grep max_num_seqs "$WORK/client.out")"
echo "ok: calibrate reads a rate sweep through Little's law and recovers the known engine within 10 %"
