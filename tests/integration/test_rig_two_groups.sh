#!/bin/bash
# stampede serve runs two groups at once (docs/rig.md, "The queue and the lease"): a rig of two
# groups, each on its own mock, and two workers. Runs submitted to both groups at the same time
# both start before either ends, each on one worker (its share: half the fleet), and both finish
# with their own results; the archive's runs.workers and each results.json's run.workers say 1.
# While both run, serve's log labels each live line with its run id, the page shows both runs and
# runs list ends with "running now: 1, 2".
# ctest: parallel (orderings and counts; no timing tighter than seconds)
source "$(dirname "$0")/protocol_lib.sh"
source "$(dirname "$0")/rig_lib.sh"

G1_URL=$MOCK_URL
start_mock --ttft-ms 5 --itl-ms 1
cat >"$WORK/rig.yaml" <<YAML
groups:
  g1: [$G1_URL]
  g2: [$MOCK_URL]
YAML
rig_worker_key w2

start_serve "$WORK/serve.err" --expect-workers 2 --page 127.0.0.1:0
PAGE=$(wait_for_line "$WORK/serve.err" 5 "the page on http://127\.0\.0\.1:[0-9]+/") ||
    fail "no page: $(cat "$WORK/serve.err")"
PAGE=${PAGE#the page on }
start_rig_worker
start_rig_worker w2

write_workload "$WORK/a.yaml" ignore_eos=true duration=3s concurrency=2
write_workload "$WORK/b.yaml" ignore_eos=true duration=3s concurrency=2
as alice submit "$WORK/a.yaml" --group g1 >"$WORK/alice.out" 2>&1 &
A=$!
as bob submit "$WORK/b.yaml" --group g2 >"$WORK/bob.out" 2>&1 &
B=$!
wait_exit $A 10
assert_equal "alice's submit" "$EXIT_STATUS" 0
wait_exit $B 10
assert_equal "bob's submit" "$EXIT_STATUS" 0
wait_state 1 running 10
wait_state 2 running 10
# While both run: serve's log labels each one's live line with its run id, the page shows both
# with their figures, and runs list names both as running.
for id in 1 2; do
    wait_for_line "$SERVE_LOG" 10 "\] run $id: [0-9.]+ s of 3 s \| in flight" >/dev/null ||
        fail "no live line of run $id in serve's log: $(tail -5 "$SERVE_LOG")"
done
curl -sf "$PAGE" -o "$WORK/page.html" || fail "GET $PAGE failed"
assert_equal "runs on the page" \
    "$(grep -o '<article class="run" id="run-[0-9]*">' "$WORK/page.html" | grep -o '[0-9]*' | xargs)" "1 2"
as bob runs list >"$WORK/list.out" || fail "runs list failed"
grep -qx "running now: 1, 2" "$WORK/list.out" || fail "runs list: $(cat "$WORK/list.out")"
wait_state 1 done 20
wait_state 2 done 20

# Both started before either ended, each on one worker.
first=$(grep -E "run [12] (of [a-z]+ on g[12] .*starts on|done)" "$SERVE_LOG" | head -2)
[ "$(grep -c "starts on 1 worker$" <<<"$first")" = 2 ] ||
    fail "both runs did not start on one worker each before either ended: $(grep -E "run [12] " "$SERVE_LOG")"
for id in 1 2; do
    assert_equal "run $id's share in the archive" "$(db "select workers from runs where id = $id")" 1
    assert_equal "run $id's workers in results.json" \
        "$(json_value "$WORK/arch/runs/$id/results.json" 'r["run"]["workers"]')" 1
    [ "$(json_value "$WORK/arch/runs/$id/results.json" 'l["requests_ok"]')" -gt 0 ] ||
        fail "run $id has no request"
done
# Each group's run went to its own mock: one worker each, two different workers.
w1=$(json_value "$WORK/arch/runs/1/results.json" '[w["name"] for w in r["workers"]]')
w2=$(json_value "$WORK/arch/runs/2/results.json" '[w["name"] for w in r["workers"]]')
[ "$w1" != "$w2" ] || fail "both runs ran on the same worker: $w1"
echo "ok: two groups ran at once, one worker each, shares recorded"
