#!/bin/bash
# stampede serve, submit and runs (docs/rig.md), real processes on loopback: one rig, one worker,
# one group on the mock, users alice and bob, admin root, stranger carol.
#  - alice and bob submit at once to the one group: the runs go one after the other in id order,
#    each with its own results (its own request count) in the archive; --follow gets the end table;
#    results.json's run.config names the run's workload.yaml, its secret header redacted;
#  - carol's key is not in --authorized-keys: refused, saying so (serve: "refused a user");
#    d-laptop.pub's "# name: dave" line names its user; a workload with a mistake and an
#    unknown group are refused naming the file, line and key, or the groups;
#  - bob can neither cancel, outrank nor move alice's queued run; root (admin) can;
#  - serve killed (SIGKILL) during a run and started again: that run is marked interrupted and
#    rebuilt from its journal, the queued run survives and runs; bob's follower of it says the
#    rig went and came back, and ends with the run interrupted;
#  - bob follows alice's running run and detaches with Ctrl-C (the run goes on); alice cancels
#    her own running run;
#  - a second client loading the group's endpoint during a run: the shared-rig guard marks it;
#  - runs list/show/fetch/compare and sqlite3 read the archive.
# ctest: parallel (orderings, counts and messages; no timing tighter than seconds)
source "$(dirname "$0")/protocol_lib.sh"
source "$(dirname "$0")/rig_lib.sh"

start_serve "$WORK/serve.err"
start_rig_worker
write_workload "$WORK/a.yaml" ignore_eos=true max_requests=20 concurrency=2
write_workload "$WORK/b.yaml" ignore_eos=true max_requests=31 concurrency=2 \
    headers='{X-Api-Key: sekrit-value-42}'

# Two users at once: serial, in order, each its own results.
as alice submit "$WORK/a.yaml" >"$WORK/alice.out" 2>"$WORK/alice.err" &
A=$!
as bob submit "$WORK/b.yaml" --follow >"$WORK/bob.out" 2>"$WORK/bob.err" &
B=$!
wait_exit $A 20
assert_equal "alice's submit" "$EXIT_STATUS" 0
wait_exit $B 30
assert_equal "bob's submit --follow" "$EXIT_STATUS" 0
grep -Eq "^run [12] queued on g1 as alice: place [12] in the queue" "$WORK/alice.out" ||
    fail "alice's submit said: $(cat "$WORK/alice.out" "$WORK/alice.err")"
grep -Eq "^run [12] queued on g1 as bob" "$WORK/bob.out" || fail "bob's: $(cat "$WORK/bob.out")"
grep -q "TTFT" "$WORK/bob.out" || fail "bob's --follow printed no end table: $(cat "$WORK/bob.out")"
grep -Eq "submit: run [12] done" "$WORK/bob.err" || fail "bob's --follow: $(cat "$WORK/bob.err")"
wait_state 1 done 20
wait_state 2 done 20
order=$(grep -Eo "run [0-9]+ (of [a-z]+ on g1 .*starts|done)" "$WORK/serve.err" |
    sed -E 's/ of ([a-z]+).*starts/ starts/' | tr '\n' ',')
assert_equal "the serve log's order" "$order" "run 1 starts,run 1 done,run 2 starts,run 2 done,"
for user in alice bob; do
    id=$(db "select id from runs where user = '$user'")
    want=$([ $user = alice ] && echo 20 || echo 31)
    assert_equal "$user's requests (run $id)" \
        "$(json_value "$WORK/arch/runs/$id/results.json" 'l["requests_ok"]')" "$want"
    assert_equal "$user's archived requests" \
        "$(db "select requests_ok from levels where run = $id and level = 0")" "$want"
done
# results.json names the run's own copy of its file, the secret header's value redacted.
id=$(db "select id from runs where user = 'bob'")
assert_equal "bob's run.config" "$(json_value "$WORK/arch/runs/$id/results.json" 'r["run"]["config"]')" \
    "$WORK/arch/runs/$id/workload.yaml"
grep -q "X-Api-Key: <redacted>" "$WORK/arch/runs/$id/workload.yaml" && ! grep -rq sekrit "$WORK/arch" ||
    fail "bob's kept workload: $(cat "$WORK/arch/runs/$id/workload.yaml")"
[ "$(db "select ended_at <= (select started_at from runs where id = 2) from runs where id = 1")" = 1 ] ||
    fail "run 2 started before run 1 ended"

# A stranger's key is refused, saying so, and serve logs a refused user.
rc=0
as carol runs list >"$WORK/carol.out" 2>"$WORK/carol.err" || rc=$?
assert_equal "carol's exit status" "$rc" 1
grep -q "refused your key" "$WORK/carol.err" || fail "carol was not told: $(cat "$WORK/carol.err")"
wait_for_line "$WORK/serve.err" 5 "refused a user at .*its public key" >/dev/null ||
    fail "serve did not log a refused user: $(grep refused "$WORK/serve.err")"
# A key file's "# name:" line names its user.
out=$(as dave runs priority 1 3 2>&1) && fail "dave changed a priority: $out"
[[ "$out" == *"(dave is not one)"* ]] || fail "d-laptop.pub's user is not dave: $out"

# A workload with a mistake and an unknown group are refused, saying why; nothing queued.
printf 'workload:\n  kind: requests\n  input_tokens: 8\n  output_tokns: 8\n' >"$WORK/bad.yaml"
out=$(as alice submit "$WORK/bad.yaml" 2>&1) && fail "a bad workload was queued: $out"
[[ "$out" == *"bad.yaml:4:3: "*"output_tokns"* ]] || fail "the mistake is not named: $out"
out=$(as alice submit "$WORK/b.yaml" --group h200 2>&1) && fail "group h200 was taken: $out"
[[ "$out" == *"the rig has no group 'h200' (its groups: g1)"* ]] || fail "$out"
assert_equal "runs after the refusals" "$(db "select count(*) from runs")" 2

# A long run holds the group; alice's next run waits; bob may neither cancel nor outrank it.
write_workload "$WORK/long.yaml" ignore_eos=true duration=30s concurrency=2
write_workload "$WORK/short.yaml" ignore_eos=true max_requests=12 concurrency=2
as alice submit "$WORK/long.yaml" >/dev/null 2>&1 || fail "alice's long run was not queued"
wait_state 3 running 10
out=$(as alice submit "$WORK/short.yaml" 2>&1) || fail "alice's queued run: $out"
[[ "$out" == "run 4 queued on g1 as alice: place 1 in the queue (the group is busy)" ]] ||
    fail "alice's queued run: $out"
out=$(as bob submit "$WORK/short.yaml" --priority 5 2>&1) && fail "bob set a priority: $out"
[[ "$out" == *"only an admin of the rig may set a priority (bob is not one)"* ]] || fail "$out"
out=$(as root submit "$WORK/short.yaml" --priority 5 2>&1) || fail "root's priority run: $out"
[[ "$out" == "run 5 queued on g1 as root: place 1 in the queue"* ]] || fail "root's: $out"
assert_equal "alice's place behind root's" "$(as alice runs show 4 | python3 -c 'import json,sys; print(json.load(sys.stdin)["place"])')" 2
out=$(as bob runs priority 4 9 2>&1) && fail "bob moved alice's run: $out"
[[ "$out" == *"only an admin of the rig may change a priority (bob is not one)"* ]] || fail "$out"
as root runs priority 4 9 2>/dev/null || fail "root could not move alice's run"
assert_equal "alice's place once root moved it" "$(as alice runs show 4 | python3 -c 'import json,sys; print(json.load(sys.stdin)["place"])')" 1
out=$(as bob runs cancel 4 2>&1) && fail "bob cancelled alice's run: $out"
[[ "$out" == *"run 4 is alice's: only alice or an admin of the rig may cancel it"* ]] || fail "$out"
as root runs cancel 5 2>/dev/null || fail "root could not cancel his own queued run"
as root runs cancel 4 2>/dev/null || fail "root (admin) could not cancel alice's run"
assert_equal "run 4" "$(db "select state || ' by ' || cancelled_by from runs where id = 4")" \
    "cancelled by root"
as alice submit "$WORK/short.yaml" >/dev/null 2>&1 || fail "alice's run 6 was not queued"

# serve dies during run 3 (batches journaled by now) and comes back on the same ports.
wait_for_line "$WORK/serve.err" 15 "\] run 3: [2-9]\.[0-9] s of 30 s \| in flight" >/dev/null ||
    fail "run 3 did not get going: $(tail "$WORK/serve.err")"
# bob follows it across the restart: the follower says the rig went and came back, follows
# again, and ends with the run's state.
"$STAMPEDE" runs follow 3 --to "$USERS" --key "$WORK/bob.key" --server-key "$WORK/rig.pub" \
    >"$WORK/follow3.out" 2>"$WORK/follow3.err" &
F3=$!
wait_for_line "$WORK/follow3.err" 10 "run 3: .* req/s" >/dev/null ||
    fail "no live line while following run 3: $(cat "$WORK/follow3.err")"
kill -9 "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null || true
wait_for_line "$WORK/follow3.err" 5 "runs: lost the rig at $USERS; trying again" >/dev/null ||
    fail "the follower did not say the rig went: $(cat "$WORK/follow3.err")"
start_serve "$WORK/serve2.err"
grep -q "run 3 was in progress when serve stopped: merged from its journal" "$WORK/serve2.err" ||
    fail "run 3 was not recovered: $(tail -20 "$WORK/serve2.err")"
wait_exit $F3 15
assert_equal "the follower of run 3 across the restart" "$EXIT_STATUS" 1
grep -q "runs: the rig at $USERS is back" "$WORK/follow3.err" &&
    grep -q "runs: run 3 interrupted: serve stopped during the run" "$WORK/follow3.err" ||
    fail "the follower of run 3: $(cat "$WORK/follow3.err")"
assert_equal "run 3 after the restart" "$(db "select state from runs where id = 3")" interrupted
assert_equal "run 3's results partial" "$(json_value "$WORK/arch/runs/3/results.json" 'r["partial"]')" True
[ "$(json_value "$WORK/arch/runs/3/results.json" 'l["requests_ok"]')" -gt 0 ] ||
    fail "run 3's merged results hold no request"
wait_state 6 done 40
assert_equal "run 6's requests" "$(json_value "$WORK/arch/runs/6/results.json" 'l["requests_ok"]')" 12

# alice cancels her own running run.
as alice submit "$WORK/long.yaml" >/dev/null 2>&1 || fail "alice's run 7 was not queued"
wait_state 7 running 15
# bob follows it: live lines, then Ctrl-C detaches without cancelling.
"$STAMPEDE" runs follow 7 --to "$USERS" --key "$WORK/bob.key" --server-key "$WORK/rig.pub" \
    >"$WORK/follow.out" 2>"$WORK/follow.err" &
F=$!
wait_for_line "$WORK/follow.err" 10 "run 7: .* req/s" >/dev/null ||
    fail "no live line while following run 7: $(cat "$WORK/follow.err")"
kill -INT $F
wait_exit $F 5
assert_equal "runs follow after Ctrl-C" "$EXIT_STATUS" 0
grep -q "detached; run 7 goes on" "$WORK/follow.err" || fail "$(cat "$WORK/follow.err")"
assert_equal "run 7 after the follower left" "$(db "select state from runs where id = 7")" running
out=$(as bob runs cancel 7 2>&1) && fail "bob cancelled alice's running run: $out"
as alice runs cancel 7 2>/dev/null || fail "alice could not cancel her running run"
wait_state 7 cancelled 20

# Someone outside the rig loads the leased group's endpoint: the guard marks the run.
write_workload "$WORK/guarded.yaml" ignore_eos=true duration=3s concurrency=2 server_metrics=auto
as bob submit "$WORK/guarded.yaml" >/dev/null 2>&1 || fail "bob's run 8 was not queued"
wait_state 8 running 15
sleep 1
someone_else "$MOCK_URL"
wait_state 8 done 20
assert_equal "run 8 marked" "$(db "select shared || ' ' || valid from runs where id = 8")" "1 0"
db "select shared_reason from runs where id = 8" | grep -q "^someone else is using this server" ||
    fail "run 8's reason: $(db "select shared_reason from runs where id = 8")"
assert_equal "run 6 unmarked" "$(db "select shared from runs where id = 6")" 0

# The archive as users see it.
as bob runs list >"$WORK/list.out" || fail "runs list failed"
assert_equal "runs listed" "$(grep -cE '^ +[0-9]+ ' "$WORK/list.out")" 8
grep -Eq '^ +6  alice +g1 +done' "$WORK/list.out" || fail "run 6 not listed: $(cat "$WORK/list.out")"
as bob runs list --user root --json | python3 -c 'import json,sys; r=json.load(sys.stdin); assert [x["id"] for x in r] == [5], r' ||
    fail "runs list --user root"
as bob runs fetch 1 --into "$WORK/fetched" 2>/dev/null || fail "runs fetch failed"
cmp "$WORK/fetched/results.json" "$WORK/arch/runs/1/results.json" || fail "fetched results differ"
[ -f "$WORK/fetched/report.md" ] && [ -f "$WORK/fetched/table.txt" ] || fail "fetch: $(ls "$WORK/fetched")"
as bob runs compare 1 2 --into "$WORK/cmp" >"$WORK/compare.out" 2>&1 || fail "compare: $(cat "$WORK/compare.out")"
grep -q "TTFT" "$WORK/compare.out" || fail "compare printed: $(cat "$WORK/compare.out")"
assert_equal "queue files left" "$(ls "$WORK/arch/queue" | wc -l)" 0
echo "ok: serial order, own results, refusals, priority, cancel, restart, archive"
