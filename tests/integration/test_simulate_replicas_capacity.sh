#!/bin/bash
# How many replicas a load needs, the load given as a capacity search with a target
# (stampede simulate --find-replicas on a file with a capacity: section, docs/simulate.md
# "Replicas and routers"): each replica count runs the file's search, and the answer is the fewest
# whose frontier reaches capacity.target. tests/data/sim/replicas-capacity.yaml's frontier grows
# with the replicas (1.875, 5, 8, 12 sessions/s on 1 ... 4 of tp1-fp8), so 7 sessions/s needs 3:
# 2 must have been tried and fallen short. The count is stated in OUT/replicas.md,
# OUT/replicas.json and the chosen trial's report.md, report.html and results.json, each marked
# SIMULATED. Without a target the search tables the frontier of every count; a bad target is
# refused at load naming file, line and key; a table too long to run is refused before any trial.
# ctest: parallel (virtual time: counts only)
source "$(dirname "$0")/protocol_lib.sh"

FILE="$STAMPEDE_SRC/tests/data/sim/replicas-capacity.yaml"
timeout 60 "$STAMPEDE" simulate "$FILE" --find-replicas 4 --out "$WORK/target" \
    >"$WORK/target.out" 2>"$WORK/target.err" ||
    fail "simulate --find-replicas on a capacity file exited $?: $(tail -3 "$WORK/target.err")"
python3 - "$WORK/target" "$WORK/target.out" <<'PY' || fail "the replica count is not the fewest carrying the target"
import json, os, re, sys
out, said = sys.argv[1], open(sys.argv[2]).read()
r = json.load(open(os.path.join(out, "replicas.json")))
assert r["simulated"] is True and r["by"] == "capacity" and r["capacity"]["target"] == 7, r
trials = {t["replicas"]: t for t in r["trials"]}
frontier = {n: t["frontier"] for n, t in trials.items()}
print(f"frontier per replica count: {sorted(frontier.items())}, needed {r['needed']}")
assert r["needed"] == 3, r
assert trials[3]["pass"] and trials[3]["frontier"] >= 7 and trials[3]["target_verdict"] == "carried"
assert trials[2]["pass"] is False and trials[2]["frontier"] < 7, trials   # 2 was tried, short of it
counts = sorted(frontier)
assert all(frontier[a] < frontier[b] for a, b in zip(counts, counts[1:])), frontier  # grows
chosen = json.load(open(os.path.join(out, "replicas-3", "results.json")))
assert chosen["simulated"] is True and chosen["served_by"]["replicas"] == 3
assert chosen["analysis"]["replicas"]["needed"] == 3, chosen["analysis"]["replicas"]
assert chosen["analysis"]["capacity"]["frontier"]["level"] == trials[3]["frontier"]
statement = re.compile(r"Replicas needed: 3 \(SIMULATED, profile tp1-fp8, router round_robin\): "
                       r"the fewest whose capacity search of \S+ carried the target, rate 7 sessions/s")
for name in ("replicas-3/report.md", "replicas-3/report.html", "replicas.md"):
    assert statement.search(open(os.path.join(out, name)).read()), name
assert statement.search(said), said[-600:]
assert "Replicas needed" not in open(os.path.join(out, "replicas-2", "report.md")).read()
md = open(os.path.join(out, "replicas.md")).read()
assert "**SIMULATED:**" in md and re.search(r"^\| 2 \| 5 \|.*\| not carried \|$", md, re.M), md
PY

# No target: the capacity of each count 1 ... MAX, and no count chosen.
sed '/^  target: 7/d' "$FILE" >"$WORK/no-target.yaml"
timeout 60 "$STAMPEDE" simulate "$WORK/no-target.yaml" --find-replicas 3 --out "$WORK/table" \
    >"$WORK/table.out" 2>"$WORK/table.err" ||
    fail "simulate --find-replicas without a target exited $?: $(tail -3 "$WORK/table.err")"
python3 - "$WORK/table" "$WORK/table.out" <<'PY' || fail "the table of capacity per replica count is wrong"
import json, os, sys
r = json.load(open(os.path.join(sys.argv[1], "replicas.json")))
assert r["needed"] is None and r["capacity"]["target"] is None, r
frontier = [t["frontier"] for t in sorted(r["trials"], key=lambda t: t["replicas"])]
assert [t["replicas"] for t in sorted(r["trials"], key=lambda t: t["replicas"])] == [1, 2, 3], r
assert frontier[0] < frontier[1] < frontier[2], frontier
said = open(sys.argv[2]).read()
assert "Replicas needed: not decided (SIMULATED" in said and "no capacity.target" in said, said
PY

# Refusals: a table of 40 searches (before any runs), a target above max (file, line, key).
timeout 10 "$STAMPEDE" simulate "$WORK/no-target.yaml" --find-replicas 40 --out "$WORK/long" \
    >/dev/null 2>"$WORK/long.err" && fail "a 40-count table without a target was run"
grep -q "without capacity.target (the load to carry) --find-replicas 40" "$WORK/long.err" ||
    fail "the long table's refusal does not say why: $(cat "$WORK/long.err")"
[ ! -e "$WORK/long/replicas-1" ] || fail "the refused table ran a trial"
sed 's/^  target: 7 .*/  target: 100/' "$FILE" >"$WORK/bad-target.yaml"
timeout 10 "$STAMPEDE" simulate "$WORK/bad-target.yaml" --find-replicas 4 --out "$WORK/bad" \
    >/dev/null 2>"$WORK/bad.err" && fail "a target above max was accepted"
grep -qF "bad-target.yaml:30:11: capacity.target: target 100 is above max 64" "$WORK/bad.err" ||
    fail "the bad target's refusal does not name file, line and key: $(cat "$WORK/bad.err")"

# A target without --find-replicas: the one search judges it. On 1 replica the frontier is 1.875
# sessions/s and 2 fails, so 1.9 lies inside the final bracket: not shown either way.
sed 's/^  target: 7 .*/  target: 1.9/' "$FILE" >"$WORK/in-bracket.yaml"
timeout 30 "$STAMPEDE" simulate "$WORK/in-bracket.yaml" --out "$WORK/one" >"$WORK/one.out" \
    2>"$WORK/one.err" || fail "simulate of the capacity file exited $?: $(tail -3 "$WORK/one.err")"
grep -q "target rate 1.9 sessions/s: not shown (inside the final bracket" "$WORK/one.out" ||
    fail "the search does not judge its target: $(tail -5 "$WORK/one.out")"
[ "$(json_value "$WORK/one/results.json" 'r["analysis"]["capacity"]["target_verdict"]')" = "not shown" ] ||
    fail "analysis.capacity.target_verdict is not 'not shown'"
echo "ok: 3 replicas carry the target 7 sessions/s and 2 do not; the count is stated in every report"
