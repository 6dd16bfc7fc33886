#!/bin/bash
# The scaling study of agentic-concurrency-scaling.md in virtual time (issue 21): stampede simulate
# --study of the three diamond presets against tp1-fp8, tp2-fp8 and tp2-fp16 at c = 1 ... 64
# prints the report's §3-§5 tables in its own layout (the columns, every level's row, the fits),
# their figures have the report's shape (TPOT rising with c; TP2 out-producing TP1 at c = 32, its
# Finding 2), calibrate recovers each profile's prefill rate from a cell's client figures (TTFT
# against the roles' prompts), and the whole study takes under 10 s of CPU (measured: 1.6 s; the wall time is
# printed, not held: this machine is shared).
# ctest: parallel (CPU time asserted, not wall time)
source "$(dirname "$0")/protocol_lib.sh"

EX="$STAMPEDE_SRC/examples"
/usr/bin/time -f "%U %S %e" -o "$WORK/time" timeout 120 "$STAMPEDE" simulate --study \
    "$EX/diamond-autogen.yaml" "$EX/diamond-langgraph.yaml" "$EX/diamond-a2a.yaml" \
    --profile tp1-fp8 --profile tp2-fp8 --profile tp2-fp16 --concurrency 1,2,4,8,16,32,48,64 \
    --out "$WORK/study" >"$WORK/tables.md" 2>"$WORK/study.err" ||
    fail "simulate --study exited $?: $(tail -3 "$WORK/study.err")"
python3 - "$WORK/tables.md" "$WORK/time" <<'PY' || fail "the study's tables are not the report's"
import re, sys
text = open(sys.argv[1]).read()
user, system, wall = map(float, open(sys.argv[2]).read().split())
print(f"study: {user + system:.2f} s of CPU, {wall:.2f} s of wall time")
assert user + system < 10, (user, system)

def table(title):
    """The rows of the markdown table under '### title' (header first)."""
    block = text.split(f"### {title}\n\n")[1].split("\n\n")[0]
    return [[c.strip() for c in line.strip("|").split("|")] for line in block.splitlines()
            if not line.startswith("|---")]

levels = ["1", "2", "4", "8", "16", "32", "48", "64"]
for title, columns in (("3.1 Server TPOT (ms)", ["c", "tp1-fp8", "tp2-fp8", "tp2-fp16"]),
                       ("3.2 Gen TPS (tok/s)", ["c", "tp1-fp8", "tp2-fp8", "tp2-fp16"]),
                       ("3.3 Server TTFT (ms)", ["c", "tp1-fp8", "tp2-fp8", "tp2-fp16"]),
                       ("3.4 Wall Clock (s)", ["c", "tp1-fp8", "tp2-fp8", "tp2-fp16"]),
                       ("4.1 Server TPOT (ms)", ["c", "autogen", "langgraph", "a2a"]),
                       ("4.2 Gen TPS (tok/s)", ["c", "autogen", "langgraph", "a2a"]),
                       ("4.3 Wall Clock (s)", ["c", "autogen", "langgraph", "a2a"]),
                       ("4.4 Makespan Mean (ms)", ["c", "autogen", "langgraph", "a2a"]),
                       ("4.7 400 Error Rate", ["c", "autogen", "langgraph", "a2a"])):
    rows = table(title)
    assert rows[0] == columns, (title, rows[0])
    assert [r[0] for r in rows[1:]] == levels, (title, [r[0] for r in rows[1:]])
    assert all(re.fullmatch(r"[0-9.]+(/[0-9]+)?", cell) for r in rows[1:] for cell in r), title
assert table("4.5 Critical Path vs Makespan (ms)")[0] == ["c", "Framework", "Makespan", "Critical Path", "Idle/Wait"]
assert [r[0] for r in table("4.6 Per-Role TPOT (ms) at c=8")[1:]] == ["planner", "executor", "aggregator"]
fits = table("5.1 TPOT Power-Law Fit: TPOT(c) = base × c^α")
assert fits[0] == ["Config", "base (ms)", "α", "Fit Quality"] and len(fits) == 6, fits
assert table("5.2 Throughput Scaling")[0] == ["Config", "TPS at c=1", "TPS at c=32", "Scaling Factor", "Efficiency"]
# the report's shape: server TPOT rises with c to 32 on every profile; TP2 produces more at 32
tpot = table("3.1 Server TPOT (ms)")
for col in (1, 2, 3):
    series = [float(r[col]) for r in tpot[1:7]]
    assert series == sorted(series), (tpot[0][col], series)
tps = {r[0]: r for r in table("3.2 Gen TPS (tok/s)")}
assert float(tps["32"][2]) > 1.1 * float(tps["32"][1]), tps["32"]
print("the §3-§5 tables, in the report's layout")
PY
# TTFT against each role's prompt (planner ~160, executors and aggregator ~800 tokens) at c = 1:
# calibrate recovers each profile's prefill rate from the cells' client figures alone (measured:
# 3681, 6442, 5427 against 4000, 7000, 5500 tokens/s)
for profile in tp1-fp8:4000 tp2-fp8:7000 tp2-fp16:5500; do
    name=${profile%%:*} rate=${profile##*:}
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
for l in r["levels"]:
    l.pop("server", None)
json.dump(r, open(sys.argv[2], "w"))' "$WORK/study/autogen-$name/results.json" "$WORK/$name.json"
    "$STAMPEDE" calibrate "$WORK/$name.json" --base default --out "$WORK/$name.yaml" >"$WORK/$name.cal" \
        2>&1 || fail "calibrate of the $name cell exited $?: $(tail -3 "$WORK/$name.cal")"
    got=$(sed -n 's/^  prefill_tokens_per_s: \([0-9.e+]*\)$/\1/p' "$WORK/$name.yaml")
    python3 -c 'import sys; got, want = map(float, sys.argv[1:]); assert abs(got - want) <= 0.10 * want, (got, want)' \
        "$got" "$rate" || fail "$name: prefill $got tokens/s from the roles' TTFT, not within 10 % of $rate"
done
echo "ok: simulate --study prints the scaling report's tables for the three diamond presets on three profiles"
