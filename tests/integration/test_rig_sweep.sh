#!/bin/bash
# A sweep on the rig (docs/rig.md, "Sweeps"): the file a user runs locally, submitted as it is.
# alice submits a 2-level sweep with --follow on a rig of one worker; a second worker registers
# during level 1 and is taken in at the level boundary (level 2 runs on 2 workers); the follower
# sees each level's live line and the sweep's end table and exits 0; results.json has both
# levels; the archive has one row for the sweep with a levels row per level; runs show and fetch
# bring them back, the page shows the sweep's level while it runs and its 2 levels in the archive
# once it ended (linking its report.html), and runs compare matches a
# plain run at concurrency 2 with the sweep's level at concurrency 2.
# ctest: parallel (orderings, counts and messages; no timing tighter than seconds)
source "$(dirname "$0")/protocol_lib.sh"
source "$(dirname "$0")/rig_lib.sh"
rig_worker_key w2

write_rig_sweep "$WORK/sweep.yaml" "1, 2" 200ms 1s
start_serve "$WORK/serve.err" --page 127.0.0.1:0
PAGE=$(wait_for_line "$WORK/serve.err" 5 "the page on http://127\.0\.0\.1:[0-9]+/") ||
    fail "no page: $(cat "$WORK/serve.err")"
PAGE=${PAGE#the page on }
start_rig_worker

as alice submit "$WORK/sweep.yaml" --follow >"$WORK/follow.out" 2>"$WORK/follow.err" &
FOLLOW=$!
wait_for_line "$SERVE_LOG" 10 "run 1 of alice on g1 .*a sweep.* starts on 1 worker$" >/dev/null ||
    fail "the sweep did not start: $(cat "$SERVE_LOG" "$WORK/follow.err")"
# A worker that registers during level 1 is taken in at level 2.
start_rig_worker w2
wait_for_line "$WORK/follow.err" 10 "^run 1: level 1/2 concurrency 1 rep 1/1 \| snapshot 1/1" \
    >/dev/null || fail "no live line of level 1: $(cat "$WORK/follow.err")"
curl -sf "$PAGE" -o "$WORK/page.html" || fail "GET $PAGE failed"
grep -q '<article class="run" id="run-1">' "$WORK/page.html" || fail "the page shows no run 1"
grep -q '<td>level 1/2 concurrency 1 rep 1/1</td>' "$WORK/page.html" ||
    fail "the page does not show the sweep's level: $(grep -o '<article.*</article>' "$WORK/page.html" | head -c 600)"
wait_exit $FOLLOW 30
assert_equal "the follower's exit status" "$EXIT_STATUS" 0
grep -q "^run 1: level 2/2 concurrency 2 rep 1/1" "$WORK/follow.err" ||
    fail "no live line of level 2: $(cat "$WORK/follow.err")"
grep -Eq "^c 1 +1/1" "$WORK/follow.out" && grep -Eq "^c 2 +1/1" "$WORK/follow.out" ||
    fail "the follower has no end table of both levels: $(cat "$WORK/follow.out")"
grep -q "serve: run 1: its next level runs on 2 workers (was 1)" "$SERVE_LOG" ||
    fail "w2 was not taken in at level 2: $(grep 'run 1' "$SERVE_LOG")"
grep -q "serve: run 1: level 2 done: concurrency 2, .* carried by 2 of 2 workers" "$SERVE_LOG" ||
    fail "serve's log does not label the sweep's lines: $(grep 'level 2' "$SERVE_LOG")"

assert_equal "the sweep's state" "$(db "select state from runs where id = 1")" done
assert_equal "the sweep's levels in the archive" \
    "$(db "select group_concat(concurrency, ',') from (select concurrency from levels where run = 1 order by level)")" "1.0,2.0"
assert_equal "levels without requests" \
    "$(db "select count(*) from levels where run = 1 and not requests_ok > 0")" 0
check_results "$WORK/arch/runs/1" <<'PY' || fail "the sweep's results.json"
assert results["kind"] == "sweep" and results["partial"] is False, results["kind"]
levels = results["levels"]
assert [l["concurrency"] for l in levels] == [1, 2], [l["concurrency"] for l in levels]
assert [l["workers"]["started"] for l in levels] == [1, 2], [l["workers"] for l in levels]
assert all(l["requests_ok"] > 0 for l in levels)
assert results["run"]["config"].endswith("/runs/1/workload.yaml"), results["run"]["config"]
PY
as bob runs show 1 >"$WORK/show.json" || fail "runs show 1"
python3 - "$WORK/show.json" <<'PY' || fail "runs show 1: $(cat "$WORK/show.json")"
import json, sys
run = json.load(open(sys.argv[1]))["run"]
assert run["state"] == "done" and [l["level"] for l in run["levels"]] == [0, 1], run["levels"]
assert [l["concurrency"] for l in run["levels"]] == [1, 2], run["levels"]
PY
curl -sf "$PAGE" -o "$WORK/page-done.html" || fail "GET $PAGE failed"
python3 - "$WORK/page-done.html" <<'PY' || fail "the page's archive row of the sweep"
import re, sys
page = open(sys.argv[1]).read()
row = re.search(r'<tr><td><a href="/runs/1/report.html">1</a></td>(.*?)</tr>', page).group(1)
cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
assert cells[3] == "done" and cells[-1] == "2", cells
PY
as bob runs fetch 1 --into "$WORK/fetched" || fail "runs fetch 1"
for f in results.json table.txt report.html levels/01-c1/rep-1/results.json \
    levels/02-c2/rep-1/results.json; do
    cmp -s "$WORK/fetched/$f" "$WORK/arch/runs/1/$f" || fail "fetch did not bring $f"
done

# A plain run at concurrency 2 compares with the sweep's level at concurrency 2.
write_workload "$WORK/plain.yaml" ignore_eos=true max_requests=10 concurrency=2
as bob submit "$WORK/plain.yaml" >/dev/null 2>&1 || fail "bob's run was not queued"
wait_state 2 done 20
as bob runs compare 1 2 --into "$WORK/cmp" --format json --out "$WORK/cmp.json" ||
    fail "runs compare 1 2"
python3 - "$WORK/cmp.json" <<'PY' || fail "the comparison: $(head -c 800 "$WORK/cmp.json")"
import json, sys
c = json.load(open(sys.argv[1]))
assert [(r["name"], r["kind"]) for r in c["runs"]] == [("1", "sweep"), ("2", "run")], c["runs"]
present = {l["level"]: l["present"] for l in c["levels"]}
assert present == {1: [True, False], 2: [True, True]}, present
ttft = [l for l in c["levels"] if l["level"] == 2][0]["metrics"]["ttft_p50_ms"]["values"]
assert all(v > 0 for v in ttft), ttft
PY

echo "ok: a sweep on the rig: both levels run, followed, archived, shown, fetched and compared"
