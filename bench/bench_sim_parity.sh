#!/usr/bin/env bash
# The parity gate on the reference sweeps (issue 21, docs/simulate.md "The parity gate"):
# examples/sweep-50-160.yaml run for real against the embedded mock with the h200-llama70b profile
# (Phase 0) and with h200-llama70b-eagle3 (Phase 3), each then simulated in virtual time with the
# network delay the real run measured (half its levels' client-server TTFT gap): TTFT, TPOT and E2E
# p50 and p95 within 3 % at every level (a level the file's circuit breaker stopped in one and not
# the other is said, not held). Exits 1 when a level is outside the gate, 2 when a sweep could not
# run.
#
# Opt-in and long: at the file's own windows each real sweep is 12 levels x 3 repetitions x 6 min,
# about 4.8 hours. PARITY_SCALE=0.3 scales every warm-up, window and drain (0.3 with
# PARITY_REPEAT=1: about 29 minutes a sweep; below it the 90 s windows of c >= 130 hold few or no
# finished requests, whose replies take a minute or more), PARITY_LEVELS=50,60 keeps those levels,
# PARITY_REPEAT=1 runs each once, PARITY_PROFILES names the profiles (default: both),
# PARITY_KEEP=DIR keeps each sweep's results there (else they go with the run), PARITY_DELAY=418us
# gives the one-way delay instead of the real sweep's measure (levels the circuit breaker stopped
# measure none, so a run of such levels only needs it);
# PARITY_FORCE=1 runs it outside make bench. `make bench` runs it only with BENCH_ONLY=parity or
# BENCH_PARITY=1.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${STAMPEDE_BIN:-$PWD/${STAMPEDE_BUILD:-build}/stampede}
OUT=$(mktemp -d /tmp/stampede-parity.XXXXXX)
trap 'if [ -n "${PARITY_KEEP:-}" ]; then mkdir -p "$PARITY_KEEP" && cp -r "$OUT"/. "$PARITY_KEEP"/; fi; rm -rf "$OUT"' EXIT
if [ "${BENCH_ONLY:-}" != parity ] && [ -z "${BENCH_PARITY:-}" ] && [ -z "${PARITY_FORCE:-}" ]; then
    echo "parity: skipped (hours of real load; BENCH_ONLY=parity or BENCH_PARITY=1 runs it)"
    exit 0
fi

python3 - examples/sweep-50-160.yaml "$OUT/sweep.yaml" "${PARITY_SCALE:-1}" "${PARITY_LEVELS:-}" \
    "${PARITY_REPEAT:-}" <<'PY'
import re, sys, yaml
cfg = yaml.safe_load(open(sys.argv[1]))
scale, levels, repeat = float(sys.argv[3]), sys.argv[4], sys.argv[5]
sweep = cfg["sweep"]

def scaled(text):
    value, unit = re.fullmatch(r"([0-9.]+)(ms|s|min)", text).groups()
    return f"{float(value) * scale:g}{unit}"

for key in ("warmup", "drain"):
    sweep[key] = scaled(sweep[key])
sweep["snapshots"]["duration"] = scaled(sweep["snapshots"]["duration"])
if levels:
    sweep["concurrency"] = [int(c) for c in levels.split(",")]
if repeat:
    sweep["repeat"] = int(repeat)
yaml.safe_dump(cfg, open(sys.argv[2], "w"), sort_keys=False)
PY

status=0
for profile in ${PARITY_PROFILES:-h200-llama70b h200-llama70b-eagle3}; do
    sed "s/^  profile: .*/  profile: $profile/" "$OUT/sweep.yaml" >"$OUT/$profile.yaml"
    start=$(date +%s)
    # --allow-invalid: Phase 3's last levels are stopped by the file's circuit breaker
    if ! "$BIN" run "$OUT/$profile.yaml" --allow-invalid --out "$OUT/$profile-real" \
        >"$OUT/$profile-real.table" 2>"$OUT/$profile-real.err"; then
        echo "parity: the real sweep on $profile did not run: $(tail -3 "$OUT/$profile-real.err")"
        exit 2
    fi
    real_s=$(($(date +%s) - start))
    if [ -n "${PARITY_DELAY:-}" ]; then
        delay=$PARITY_DELAY # a sweep of overloaded levels only measures none: every level is stopped
    else
        delay=$(python3 -c '
import json, sys
levels = json.load(open(sys.argv[1]))["levels"]
# levels the breaker stopped are left out: their requests timed out, so their gap is none or
# meaningless (-5.9 s on Phase 3 at c = 160)
gaps = [l["gap"]["endpoints"][0]["ttft"]["gap_mean_ms"] for l in levels
        if l.get("gap") and not l.get("stopped_early")]
gaps = [g for g in gaps if g is not None and g >= 0]
if not gaps:
    sys.exit("no level measured the client-server gap (no request finished in a window)")
print("%dus" % round(sum(gaps) / len(gaps) / 2 * 1000))' "$OUT/$profile-real/results.json") || {
            echo "parity: $profile: the real sweep gives no network delay; longer windows (PARITY_SCALE) let its requests finish"
            exit 2
        }
    fi
    start_ns=$(date +%s%N)
    if ! "$BIN" simulate "$OUT/$profile.yaml" --network-delay "$delay" --allow-invalid \
        --out "$OUT/$profile-sim" >"$OUT/$profile-sim.table" 2>"$OUT/$profile-sim.err"; then
        echo "parity: the simulation on $profile did not run: $(tail -3 "$OUT/$profile-sim.err")"
        exit 2
    fi
    sim_ms=$((($(date +%s%N) - start_ns) / 1000000))
    echo "== parity on $profile: real sweep $real_s s, simulated in $sim_ms ms, network delay $delay"
    python3 - "$OUT/$profile-real/results.json" "$OUT/$profile-sim/results.json" <<'PY' || status=1
import json, sys
real = {l["concurrency"]: l for l in json.load(open(sys.argv[1]))["levels"]}
sim = {l["concurrency"]: l for l in json.load(open(sys.argv[2]))["levels"]}
worst, outside = 0, 0
print(f"{'c':>4} " + " ".join(f"{m + ' ' + p:>10}" for m in ("TTFT", "TPOT", "E2E") for p in ("p50", "p95")))
for c in sorted(set(real) | set(sim)):
    if c not in real or c not in sim or real[c]["stopped_early"] != sim[c]["stopped_early"]:
        print(f"{c:>4} run in one only, or stopped by the breaker in one only: not held")
        continue
    ok = lambda l: l.get("requests_ok") or 0
    if not ok(real[c]) and not ok(sim[c]):
        print(f"{c:>4} no request finished in its windows, in either: nothing to hold")
        continue
    cells = []
    for metric in ("ttft_ms", "tpot_ms", "e2e_ms"):
        for p in ("p50", "p95"):
            a, b = real[c][metric][p] or 0, sim[c][metric][p] or 0
            diff = 100 * (b - a) / a if a else float("nan")
            worst = max(worst, abs(diff))
            outside += not abs(diff) <= 3
            cells.append(f"{diff:+9.2f}%" + ("!" if not abs(diff) <= 3 else " "))
    print(f"{c:>4} " + " ".join(cells))
print(f"worst difference {worst:.2f} % ({outside} figures outside 3 %; simulated - real, % of real)")
sys.exit(1 if outside else 0)
PY
done
exit $status
