#!/bin/bash
# `stampede compare` as a command on checked-in results files (tests/fixtures/compare): the
# hand-made sweeps base and spec and plain run third (known numbers: change %, verdicts, winners
# in Markdown and JSON, absent levels, the servers' TPOT and TTFT), real outputs of `stampede run` (sweep-small: a shortened examples/sweep-small.yaml;
# quickstart: a shortened examples/quickstart.yaml, a plain run) whose values compare must take
# from the right keys, every output format, --out, and bad input (exit 1, the file named) and usage
# errors (exit 2).
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

FIX="$STAMPEDE_SRC/tests/fixtures/compare"
cd "$FIX"

# Two runs, Markdown: the EAGLE-3 report's table rows.
"$STAMPEDE" compare base spec >"$WORK/two.md" 2>"$WORK/two.err" || fail "compare exited $?: $(cat "$WORK/two.err")"
for row in '| 10 | 40.0 | 60.0 | +50% worse |' '| 20 | 50.0 | 45.0 | -10% better |' \
    '| 20 | 250 | 5000 | +20x worse |' '| 30 | 80.0 | — | — |' '| 40 | — | 70.0 † | — |' \
    '| First errors | Concurrency 30 (2.00%) | Concurrency 20 (1.50%) |' \
    '### Saturation Point' '## Comparison: spec vs base'; do
    grep -qF -- "$row" "$WORK/two.md" || fail "two-run Markdown lacks: $row"
done

# Three runs: bold winners and the winner per level table.
"$STAMPEDE" compare base spec third/results.json >"$WORK/three.md" || fail "compare of three exited $?"
for row in '| 20 | 50.0 | **45.0** | 47.5 |' '### Winner per level' \
    '| TPOT p50 | base (-33%) | spec (-5.3%) | — | — |'; do
    grep -qF -- "$row" "$WORK/three.md" || fail "three-run Markdown lacks: $row"
done

# Three runs as JSON: the winners (indexes into runs) and the margin over the runner-up, ties
# included; the servers' TPOT and TTFT from the levels' gap blocks, lower better.
"$STAMPEDE" compare base spec third --format json >"$WORK/three.json" || fail "three-run --format json exited $?"
python3 - "$WORK/three.json" <<'PY' || fail "three-run compare JSON winners are not as expected"
import json, sys
c = json.load(open(sys.argv[1]))
assert [r["name"] for r in c["runs"]] == ["base", "spec", "third"], c["runs"]
m = {l["level"]: l["metrics"] for l in c["levels"]}
def near(a, b):
    return abs(a - b) <= 1e-9 * max(1, abs(b))
assert m[20]["tpot_p50_ms"]["values"] == [50, 45, 47.5] and m[20]["tpot_p50_ms"]["winners"] == [1]
assert near(m[20]["tpot_p50_ms"]["margin_pct"], (45 - 47.5) / 47.5 * 100), m[20]["tpot_p50_ms"]
assert m[20]["tops"]["winners"] == [2] and near(m[20]["tops"]["margin_pct"], 5), m[20]["tops"]
assert m[20]["error_pct"]["winners"] == [0, 2] and m[20]["error_pct"]["margin_pct"] is None
assert m[20]["server_tpot_mean_ms"]["values"] == [47, 43, 44], m[20]["server_tpot_mean_ms"]
assert m[20]["server_tpot_mean_ms"]["winners"] == [1]
assert m[20]["server_ttft_mean_ms"]["winners"] == [2]
assert m[30]["tpot_p50_ms"]["winners"] == [] and m[30]["server_tpot_mean_ms"]["values"] == [None] * 3
better = {x["key"]: x["better"] for x in c["metrics"]}
assert better["server_tpot_mean_ms"] == better["server_ttft_mean_ms"] == "lower", better
PY

# JSON and CSV, to a file with --out.
"$STAMPEDE" compare base spec --format json --out "$WORK/two.json" || fail "--format json exited $?"
[ "$(stat -c %a "$WORK/two.json")" = 640 ] || fail "--out file mode $(stat -c %a "$WORK/two.json"), expected 640"
python3 - "$WORK/two.json" <<'PY' || fail "compare JSON is not as expected"
import json, sys
c = json.load(open(sys.argv[1]))
assert [r["name"] for r in c["runs"]] == ["base", "spec"], c["runs"]
assert [l["level"] for l in c["levels"]] == [10, 20, 30, 40], c["levels"]
m = {l["level"]: l["metrics"] for l in c["levels"]}
assert m[10]["tpot_p50_ms"]["change_pct"] == [None, 50] and m[10]["tpot_p50_ms"]["verdict"] == [None, "worse"]
assert m[20]["ttft_p50_ms"]["change_pct"] == [None, 1900]
assert m[40]["tpot_p50_ms"]["values"] == [None, 70]
PY
"$STAMPEDE" compare base spec --format csv >"$WORK/two.csv" || fail "--format csv exited $?"
head -1 "$WORK/two.csv" | grep -qx 'level,metric,unit,better,run,value,change_vs_first,verdict_vs_first,winner' ||
    fail "CSV header: $(head -1 "$WORK/two.csv")"
grep -qx '20,error_pct,%,lower,spec,1.5,1.5,worse,0' "$WORK/two.csv" || fail "CSV lacks the error row"

# Real outputs: a sweep against a plain run. Every value must be the level's figure in its file.
"$STAMPEDE" compare sweep-small quickstart --format json >"$WORK/real.json" || fail "compare of real runs exited $?"
python3 - "$WORK/real.json" sweep-small/results.json quickstart/results.json <<'PY' || fail "real runs compared wrongly"
import json, sys
c = json.load(open(sys.argv[1]))
runs = [json.load(open(p)) for p in sys.argv[2:]]
assert [r["kind"] for r in c["runs"]] == ["sweep", "run"], c["runs"]
want = sorted({l["concurrency"] for r in runs for l in r["levels"]})
assert [l["level"] for l in c["levels"]] == want, (c["levels"], want)
checked = 0
for cl in c["levels"]:
    for i, r in enumerate(runs):
        lv = [l for l in r["levels"] if l["concurrency"] == cl["level"]]
        assert cl["present"][i] == bool(lv), cl
        for key in ("tpot_p50_ms", "ttft_p95_ms", "error_pct", "tops", "actual_rps"):
            got = cl["metrics"][key]["values"][i]
            if not lv:
                assert got is None, (cl["level"], key, got)
                continue
            exp = lv[0].get(key, lv[0]["reference"].get(key))
            assert exp is not None and abs(got - exp) <= 1e-9 * max(1, abs(exp)), (cl["level"], key, got, exp)
            checked += 1
assert checked >= 10, checked
sat = c["saturation"]["first_errors"]
assert sat[1] is None, sat  # a plain run has no analysis.saturation
PY
"$STAMPEDE" compare sweep-small quickstart >"$WORK/real.md" || fail "Markdown of real runs exited $?"
grep -qF '| TTFT p50 > 1s | not reached | — |' "$WORK/real.md" || fail "real saturation row: $(grep 'TTFT p50 >' "$WORK/real.md")"

# Bad input: exit 1, the file named and the reason.
expect_bad() {
    local needle=$1 rc=0
    shift
    "$STAMPEDE" compare "$@" >"$WORK/bad.out" 2>"$WORK/bad.err" || rc=$?
    assert_equal "exit status of compare $*" "$rc" 1
    grep -qF -- "$needle" "$WORK/bad.err" || fail "compare $* said: $(cat "$WORK/bad.err"), expected: $needle"
    [ ! -s "$WORK/bad.out" ] || fail "compare $* wrote to stdout on bad input"
}
expect_bad 'compare: v1/results.json: schema_version 1, expected 2' base v1
expect_bad 'compare: notjson/results.json:3: not a results.json (not JSON' base notjson
expect_bad 'compare: no-such-run: No such file or directory' base no-such-run
expect_bad "compare: $WORK/results.json: No such file or directory (not a results directory)" base "$WORK"
expect_bad 'compare: rate/results.json: levels[0] is a rate level' base rate

# Usage errors: exit 2.
for args in "base" "base spec --format xml" "base spec --bogus"; do
    rc=0
    "$STAMPEDE" compare $args >/dev/null 2>&1 || rc=$?
    assert_equal "exit status of compare $args" "$rc" 2
done
"$STAMPEDE" compare --help | grep -q 'usage: stampede compare' || fail "--help"
echo "PASS"
