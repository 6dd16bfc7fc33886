#!/bin/bash
# A group's `workers:` in the rig's config (docs/rig.md, "Shares"): a mistake in it is refused at
# the start naming the file, line, column and key; a run on a group that asks for 2 workers does
# not start on the 1 left free by a run on the other group (whose share is half the fleet): it
# waits for that run's end and then runs on both workers, as runs.workers records.
# ctest: parallel (orderings and counts; no timing tighter than seconds)
source "$(dirname "$0")/protocol_lib.sh"
source "$(dirname "$0")/rig_lib.sh"

printf 'groups:\n  g1: {endpoints: [%s], workers: none}\n' "$MOCK_URL" >"$WORK/bad.yaml"
rc=0
"$STAMPEDE" serve --bind "$USERS" --key "$WORK/rig.key" --authorized-keys "$WORK/users" \
    --archive "$WORK/refused" --config "$WORK/bad.yaml" 2>"$WORK/bad.err" || rc=$?
assert_equal "serve with workers: none" "$rc" 1
grep -q "bad.yaml:2:.*: groups.g1.workers: expected a count of workers" "$WORK/bad.err" ||
    fail "the mistake is not named: $(cat "$WORK/bad.err")"

G1_URL=$MOCK_URL
start_mock --ttft-ms 5 --itl-ms 1
cat >"$WORK/rig.yaml" <<YAML
groups:
  g1: {endpoints: [$G1_URL], workers: 2}
  g2: [$MOCK_URL]
YAML
rig_worker_key w2
start_serve "$WORK/serve.err" --expect-workers 2
start_rig_worker
start_rig_worker w2

write_workload "$WORK/b.yaml" ignore_eos=true duration=2s concurrency=2
write_workload "$WORK/a.yaml" ignore_eos=true max_requests=20 concurrency=2
as bob submit "$WORK/b.yaml" --group g2 >/dev/null 2>&1 || fail "bob's run was not queued"
wait_state 1 running 10
as alice submit "$WORK/a.yaml" --group g1 >/dev/null 2>&1 || fail "alice's run was not queued"
sleep 1
assert_equal "alice's run while bob's holds a worker" "$(db "select state from runs where id = 2")" \
    queued
wait_state 1 done 20
wait_state 2 done 20
order=$(grep -Eo "run [12] (of [a-z]+ on g[12] .*starts on [0-9]+ workers?|done)" "$SERVE_LOG" |
    sed -E 's/ \(.*\)//' | xargs)
assert_equal "the order in serve's log" "$order" \
    "run 1 of bob on g2 starts on 1 worker run 1 done run 2 of alice on g1 starts on 2 workers run 2 done"
assert_equal "the shares in the archive" "$(db "select group_concat(workers, ' ') from runs")" "1 2"
echo "ok: a group's workers count is checked, waited for and recorded"
