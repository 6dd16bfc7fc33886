#!/bin/bash
# stampede calibrate (issue 21): a sweep of an engine with known parameters
# (tests/data/sim/calibrate-known.yaml, simulated: the same engine as the mock's) calibrates back to
# each parameter within 10 % (measured: tpot_base 1.5 %, alpha 0.9 %, prefill 2.9 %, overhead,
# max_num_seqs and the KV pool under 1 %); the profile file it writes drives simulate and the mock
# (--profile FILE, --profile-file); from client figures alone it fits what they determine and
# says what needs the server; and it refuses a sweep of one level and levels with no figures,
# saying what is missing.
# ctest: parallel (virtual time: no timing asserted)
source "$(dirname "$0")/protocol_lib.sh"

KNOWN="$STAMPEDE_SRC/tests/data/sim/calibrate-known.yaml"
timeout 60 "$STAMPEDE" simulate "$KNOWN" --out "$WORK/known" >/dev/null 2>"$WORK/known.err" ||
    fail "simulate exited $?: $(tail -3 "$WORK/known.err")"
timeout 60 "$STAMPEDE" calibrate "$WORK/known" --out "$WORK/profile.yaml" >"$WORK/cal.out" \
    2>"$WORK/cal.err" || fail "calibrate exited $?: $(cat "$WORK/cal.err")"
grep -q "^level .*TPOT ms meas/model" "$WORK/cal.out" || fail "no table of the model against the levels"
python3 - "$WORK/profile.yaml" "$WORK/cal.out" <<'PY' || fail "calibrate did not recover the known parameters"
import re, sys
text = open(sys.argv[1]).read()
mock = text.split("calibration:")[0]
known = {"tpot_base": 6, "alpha": 0.7, "prefill_tokens_per_s": 9000, "ttft_overhead": 30,
         "max_num_seqs": 24, "kv_cache_tokens": 300000}
for key, want in known.items():
    got = float(re.search(rf"^  {key}: ([0-9.e+]+)", mock, re.M).group(1))
    err = abs(got - want) / want
    print(f"{key}: {got:g} (known {want:g}, {100 * err:.1f} %)")
    assert err <= 0.10, (key, got, want)
    # each parameter says how well it fitted and from which levels
    block = text.split("calibration:")[1].split(f"\n  {key}:\n")[1].split("\n  ")[0:3]
    assert "fitted: true" in block[0] and "quality:" in block[1] and "c=" in block[2], (key, block)
PY
# the profile file drives simulate (the workload without its own engine: the file's alone) ...
sed '/^mock:/,$d' "$KNOWN" >"$WORK/bare.yaml"
timeout 60 "$STAMPEDE" simulate "$WORK/bare.yaml" --profile "$WORK/profile.yaml" --out "$WORK/again" \
    >/dev/null 2>"$WORK/again.err" || fail "simulate --profile FILE exited $?: $(tail -3 "$WORK/again.err")"
check_results "$WORK/again" "$WORK/known" <<'PY' || fail "the calibrated profile does not reproduce the sweep"
known = json.load(open(os.path.join(argv[0], "results.json")))["levels"]
for a, b in zip(results["levels"], known):
    for metric in ("tpot_ms", "e2e_ms"):
        x, y = a[metric]["p50"], b[metric]["p50"]
        assert abs(x - y) <= 0.10 * y, (a["concurrency"], metric, x, y)
print("the calibrated profile reproduces every level's TPOT and E2E p50 within 10 %")
PY
# ... and the mock
timeout 10 "$STAMPEDE" mock --profile-file "$WORK/profile.yaml" --port 0 >"$WORK/mock.out" 2>&1 &
BACKGROUND+=($!)
wait_for_line "$WORK/mock.out" 5 "listening on" >/dev/null || fail "the mock did not start with --profile-file"

# client figures only (the server blocks dropped, as a sweep measured without /metrics): the
# TPOT curve and max_num_seqs (from the knee, Little's law) are fitted, what needs the server is
# said per parameter, and the profile reproduces every level's TPOT mean within 10 %
python3 - "$WORK/known/results.json" "$WORK/one.json" "$WORK/bare.json" "$WORK/empty.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
one = dict(r, levels=r["levels"][:1])
json.dump(one, open(sys.argv[2], "w"))
for l in r["levels"]:
    l.pop("server", None)
json.dump(r, open(sys.argv[3], "w"))
json.dump(dict(r, levels=[{"concurrency": l["concurrency"]} for l in r["levels"]]),
          open(sys.argv[4], "w"))
PY
timeout 60 "$STAMPEDE" calibrate "$WORK/bare.json" --out "$WORK/client.yaml" >"$WORK/client.out" \
    2>"$WORK/client.err" || fail "calibrate from client figures exited $?: $(cat "$WORK/client.err")"
python3 - "$WORK/client.yaml" <<'PY' || fail "the client-figure calibration is not what it should be"
import re, sys
text = open(sys.argv[1]).read()
seqs = float(re.search(r"^  max_num_seqs: ([0-9.]+)", text, re.M).group(1))
assert abs(seqs - 24) <= 2.4, seqs
for key, why in (("kv_cache_tokens", "needs the server"), ("prefill_tokens_per_s", "not fitted")):
    block = text.split("calibration:")[1].split(f"\n  {key}:\n")[1]
    assert "fitted: false" in block.split("\n")[0] and why in block.split("\n")[1], (key, block)
print(f"client figures: max_num_seqs {seqs:g} (24)")
PY
timeout 60 "$STAMPEDE" simulate "$WORK/bare.yaml" --profile "$WORK/client.yaml" --out "$WORK/client" \
    >/dev/null 2>"$WORK/client-sim.err" || fail "simulate --profile client.yaml exited $?"
check_results "$WORK/client" "$WORK/known" <<'PY' || fail "the client-figure profile does not reproduce TPOT"
known = json.load(open(os.path.join(argv[0], "results.json")))["levels"]
for a, b in zip(results["levels"], known):
    x, y = a["tpot_ms"]["mean"], b["tpot_ms"]["mean"]  # the client figures calibrate read
    assert abs(x - y) <= 0.10 * y, (a["concurrency"], x, y)
PY

# refusals: one level; levels with no figures at all
rc=0
"$STAMPEDE" calibrate "$WORK/one.json" --out "$WORK/x.yaml" >/dev/null 2>"$WORK/one.err" || rc=$?
[ "$rc" = 1 ] || fail "a sweep of one level: exit $rc, not 1"
grep -q "needs two levels or more" "$WORK/one.err" || fail "one level: $(cat "$WORK/one.err")"
rc=0
"$STAMPEDE" calibrate "$WORK/empty.json" --out "$WORK/x.yaml" >/dev/null 2>"$WORK/empty.err" || rc=$?
[ "$rc" = 1 ] || fail "no figures: exit $rc, not 1"
grep -q "empty.json: no level it can use: no server figures (level.server) and no client TTFT" \
    "$WORK/empty.err" || fail "no figures: $(cat "$WORK/empty.err")"
[ ! -e "$WORK/x.yaml" ] || fail "a refused calibration wrote a profile"
echo "ok: calibrate recovers the known engine within 10 % (client figures alone: TPOT and max_num_seqs), its profile drives simulate and the mock, and it refuses what it cannot fit"
