#!/bin/bash
# Two replicas behind a router (stampede simulate --replicas 2): on multi-turn chat that shares a
# 1,024-token system prompt and carries each session's history (tests/data/sim/shared-prefix.yaml),
# the prefix-aware router, which sends a request where most of its prompt is cached, gets more of
# the prompt tokens from the prefix cache than round robin, which scatters a session's turns over
# both replicas (measured: 89.0 % against 78.5 %), and keeps the replicas evenly loaded. And
# --find-replicas finds the fewest replicas a load needs at its SLOs (6 of tp1-fp8 for
# tests/data/sim/replicas-slo.yaml, behind the prefix router).
# ctest: parallel (virtual time: counts only)
source "$(dirname "$0")/protocol_lib.sh"

FILE="$STAMPEDE_SRC/tests/data/sim/shared-prefix.yaml"
for router in round_robin prefix; do
    timeout 60 "$STAMPEDE" simulate "$FILE" --replicas 2 --router "$router" --out "$WORK/$router" \
        >"$WORK/$router.table" 2>"$WORK/$router.err" ||
        fail "simulate --router $router exited $?: $(tail -3 "$WORK/$router.err")"
    grep -q "2 replicas behind router $router" "$WORK/$router.table" ||
        fail "the $router table does not say what served it"
done
check_results "$WORK/prefix" "$WORK/round_robin" "$WORK/prefix.err" <<'PY' || fail "prefix-aware routing did not win"
rr = json.load(open(os.path.join(argv[0], "results.json")))["levels"][0]
assert results["served_by"]["router"] == "prefix" and results["served_by"]["replicas"] == 2
hit, rr_hit = level["prefix_cache_hit_pct"], rr["prefix_cache_hit_pct"]
print(f"prefix-cache hits: prefix router {hit:.1f} %, round robin {rr_hit:.1f} %")
assert hit > rr_hit + 5, (hit, rr_hit)
# both replicas carried load: neither holds under 40 % of the prompt tokens
replicas = [int(n) for n in re.findall(r"replica \d+: (\d+) prompt tokens", open(argv[1]).read())]
assert len(replicas) == 2 and min(replicas) > 0.4 * sum(replicas), replicas
PY
# How many replicas a load needs at its SLOs: one replica cannot serve tests/data/sim/replicas-slo.yaml
# (3 chat sessions/s on tp1-fp8); the bisection finds the fewest that can, and says so.
timeout 60 "$STAMPEDE" simulate "$STAMPEDE_SRC/tests/data/sim/replicas-slo.yaml" --find-replicas 8 \
    --router prefix --out "$WORK/replicas" >"$WORK/replicas.out" 2>"$WORK/replicas.err" ||
    fail "simulate --find-replicas exited $?: $(tail -3 "$WORK/replicas.err")"
python3 - "$WORK/replicas" "$WORK/replicas.out" <<'PY' || fail "the replica count is not the fewest passing"
import json, os, re, sys
r = json.load(open(os.path.join(sys.argv[1], "replicas.json")))
verdict = {t["replicas"]: t["pass"] for t in r["trials"]}
n = r["needed"]
assert r["simulated"] is True and n is not None and 1 < n <= 8, r
assert verdict[n] and verdict.get(n - 1) is False, verdict   # n passes, n - 1 was tried and failed
level = json.load(open(os.path.join(sys.argv[1], f"replicas-{n}", "results.json")))
assert level["served_by"]["replicas"] == n and level["analysis"]["slo"]["pass"] is True
assert level["analysis"]["replicas"]["needed"] == n, level["analysis"].get("replicas")
report = open(os.path.join(sys.argv[1], f"replicas-{n}", "report.md")).read()
assert f"Replicas needed: {n} (SIMULATED, profile tp1-fp8, router prefix)" in report, report[:800]
said = re.search(r"Replicas needed: (\d+) \(SIMULATED", open(sys.argv[2]).read())
assert said and int(said.group(1)) == n, open(sys.argv[2]).read()
print(f"replicas needed: {n} (trials {sorted(verdict.items())})")
PY
echo "ok: the prefix-aware router beats round robin on prefix-cache hits with 2 replicas, and the replica count a load needs is found"
