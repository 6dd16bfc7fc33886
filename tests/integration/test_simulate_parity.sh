#!/bin/bash
# The parity gate (issue 21): a short sweep (tests/data/sim/parity-sweep.yaml, two levels of
# multi-turn chat on the h200-llama70b engine) run for real against the embedded mock, then
# simulated in virtual time with the same profile and the network delay the real run measured
# (half its levels' client-server TTFT gap): TTFT, TPOT and E2E p50 and p95 agree within 3 % at
# every level. Measured on a loaded 2-core machine: at most 1.4 % apart over three real runs
# (1.3 % with no network delay). The simulation's outputs are marked SIMULATED, the real run's
# not. Serial: the real run's timings are asserted.
source "$(dirname "$0")/protocol_lib.sh"

FILE="$STAMPEDE_SRC/tests/data/sim/parity-sweep.yaml"
start=$(date +%s)
run_bounded 120 "$WORK/real.table" "$WORK/real.err" "$FILE" --out "$WORK/real"
[ "$RUN_RC" = 0 ] || fail "the real sweep exited $RUN_RC: $(tail -5 "$WORK/real.err")"
real_s=$(($(date +%s) - start))
delay=$(python3 -c '
import json, sys
levels = json.load(open(sys.argv[1]))["levels"]
gaps = [l["gap"]["endpoints"][0]["ttft"]["gap_mean_ms"] for l in levels]
print("%dus" % round(sum(gaps) / len(gaps) / 2 * 1000))' "$WORK/real/results.json")
start_ns=$(date +%s%N)
timeout 60 "$STAMPEDE" simulate "$FILE" --network-delay "$delay" --out "$WORK/sim" \
    >"$WORK/sim.table" 2>"$WORK/sim.err" || fail "simulate exited $?: $(tail -5 "$WORK/sim.err")"
sim_ms=$((($(date +%s%N) - start_ns) / 1000000))
grep -q "SIMULATED" "$WORK/sim.table" || fail "the simulated sweep's table is not marked"
grep -q "SIMULATED" "$WORK/sim/report.md" || fail "report.md of the simulation is not marked"
grep -q "SIMULATED" "$WORK/sim/report.html" || fail "report.html of the simulation is not marked"
! grep -q "SIMULATED" "$WORK/real/report.md" || fail "the real run's report.md says SIMULATED"
check_results "$WORK/sim" "$WORK/real" <<'PY' || fail "the simulation is not within 3 % of the run"
real = json.load(open(os.path.join(argv[0], "results.json")))
assert results.get("simulated") is True and results["served_by"]["virtual_time"] is True
assert "simulated" not in real and not real["served_by"].get("virtual_time")
sim_levels, real_levels = results["levels"], real["levels"]
assert [l["concurrency"] for l in sim_levels] == [l["concurrency"] for l in real_levels]
worst = 0
for s, r in zip(sim_levels, real_levels):
    for metric in ("ttft_ms", "tpot_ms", "e2e_ms"):
        for p in ("p50", "p95"):
            a, b = r[metric][p], s[metric][p]
            diff = 100 * (b - a) / a
            worst = max(worst, abs(diff))
            print(f"c {r['concurrency']}: {metric[:-3]} {p} real {a:.2f} sim {b:.2f} ({diff:+.2f} %)")
            assert abs(diff) <= 3, (r["concurrency"], metric, p, a, b)
print(f"worst difference {worst:.2f} %")
PY
echo "ok: simulate within 3 % of the real sweep at every level (network delay $delay; real $real_s s, simulated in $sim_ms ms)"
