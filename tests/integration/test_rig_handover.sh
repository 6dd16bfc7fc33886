#!/bin/bash
# serve dies (SIGKILL) while two long-lived workers stream a run, and starts again on the same
# archive (docs/rig.md "Faults", docs/protocol.md "Hand-over"). The workers go on until their
# session grant runs out (fleet.liveness 10 s keeps them from cancelling anything, so every request
# they sent ends ok), hold the batches serve never acknowledged, and name the run in their Hello
# to the new serve, which takes the batches over. (A worker whose slots waited at a stale grant
# when serve died may hold nothing: it names no run and drops it.) Asserted:
#  - serve says it takes the batches of each worker that holds some, and the run's row is
#    interrupted with the count of records recovered from its workers;
#  - the run's results.json now holds exactly the requests the mock served (its own counter): none
#    lost, none counted twice; more than its journal alone held (a merge of the journal alone
#    says how many), and the difference is the count in the note;
#  - each worker says it sends its unacknowledged batches, is released, and keeps no spool of the run;
#  - the run queued behind it then runs on both workers, whole;
#  - serve killed again during a run whose journal is then removed: it cannot take that run, so
#    the workers, whose Hellos name it, are welcomed into no run and drop it; the next run runs.
# ctest: parallel (counts and messages; the only timing is the 10 s liveness, far from any bound)
source "$(dirname "$0")/protocol_lib.sh"
source "$(dirname "$0")/rig_lib.sh"

rig_worker_key w2
mkdir -p "$WORK/spool"
start_serve "$WORK/serve.err" --expect-workers 2
start_rig_worker w1 --spool "$WORK/spool"
start_rig_worker w2 --spool "$WORK/spool"
write_workload "$WORK/long.yaml" ignore_eos=true output_tokens=40 concurrency=4 duration=30s \
    liveness=10
write_workload "$WORK/short.yaml" ignore_eos=true max_requests=12 concurrency=2

served_before=$(mock_metric vllm:request_success_total)
as alice submit "$WORK/long.yaml" >/dev/null 2>&1 || fail "run 1 was not queued"
as bob submit "$WORK/short.yaml" >/dev/null 2>&1 || fail "run 2 was not queued"
wait_state 1 running 10
# Well into the run (batches journaled and acknowledged), serve dies.
for ((i = 0; i < 150; i++)); do
    [ "$(($(mock_metric vllm:request_success_total | cut -d. -f1) - ${served_before%.*}))" -ge 60 ] && break
    sleep 0.1
done
kill -9 "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null || true
# The workers run on to the end of their grant, then wait: nothing is in flight.
wait_mock_idle 15 || fail "the workers' load did not end after serve died"
served=$(($(mock_metric vllm:request_success_total | cut -d. -f1) - ${served_before%.*}))
# What the journal alone holds: merged apart, into a copy.
mkdir -p "$WORK/journal_only"
cp "$WORK/arch/runs/1/journal.spool" "$WORK/journal_only/"
"$STAMPEDE" merge --into "$WORK/journal_only" >/dev/null 2>"$WORK/journal_only.err" ||
    fail "the journal alone does not merge: $(cat "$WORK/journal_only.err")"
journaled=$(json_value "$WORK/journal_only/results.json" 'l["requests_ok"]')

restarted_ns=$(date +%s%N)
start_serve "$WORK/serve2.err" --expect-workers 2
# A worker whose every record was acknowledged when serve died (its slots waiting at a stale
# grant) holds nothing: it names no run and simply drops it. The others hand theirs over.
taken_over "$WORK/serve2.err" "merged from its journal" "merged from its journal"
handover_ms=$((($(date +%s%N) - restarted_ns) / 1000000))

R="$WORK/arch/runs/1/results.json"
ok=$(json_value "$R" 'l["requests_ok"]')
assert_equal "run 1's requests: results.json vs what the mock served" "$ok" "$served"
assert_equal "run 1's failed and cancelled requests" \
    "$(json_value "$R" 'l["requests_failed"] + l["requests_cancelled"]')" 0
[ "$ok" -gt "$journaled" ] || fail "the hand-over added nothing: $ok requests, $journaled journaled"
note=$(db "select note from runs where id = 1")
assert_equal "run 1's note" "$note" \
    "serve stopped during the run: merged from its journal; $((ok - journaled)) records recovered from its workers ($(echo "$note" | grep -Eo 'w[12](, w[12])?'))"
assert_equal "run 1's state" "$(db "select state from runs where id = 1")" interrupted
assert_equal "run 1's archived requests" \
    "$(db "select requests_ok from levels where run = 1 and level = 0")" "$ok"
assert_equal "hand-over spools kept in run 1's directory" \
    "$(ls "$WORK"/arch/runs/1/handover-*.spool | wc -l)" ${#HANDED[@]}
ls "$WORK"/spool/*.spool 2>/dev/null && fail "a worker kept a spool of a run it handed over"

# The workers are free again: the queued run runs on both, whole.
wait_state 2 done 30
assert_equal "run 2's requests" "$(json_value "$WORK/arch/runs/2/results.json" 'l["requests_ok"]')" 12
assert_equal "run 2's workers" "$(db "select workers from runs where id = 2")" 2
# A run the new serve cannot take (its journal gone): the workers' Hellos name it, serve welcomes
# them into no run, and they drop it and run the next one.
as alice submit "$WORK/long.yaml" >/dev/null 2>&1 || fail "run 3 was not queued"
as bob submit "$WORK/short.yaml" >/dev/null 2>&1 || fail "run 4 was not queued"
wait_state 3 running 10
wait_for_line "$SERVE_LOG" 15 "\] run 3: [1-9]\.[0-9] s of 30 s" >/dev/null ||
    fail "run 3 did not get going: $(tail -3 "$SERVE_LOG")"
kill -9 "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null || true
rm "$WORK/arch/runs/3/journal.spool"
start_serve "$WORK/serve3.err" --expect-workers 2
grep -q "run 3 was in progress when serve stopped: nothing was journaled$" "$WORK/serve3.err" ||
    fail "run 3: $(grep 'run 3' "$WORK/serve3.err")"
for w in w1 w2; do
    wait_for_line "$WORK/$w.err" 15 "abandoning run [0-9a-f]+: the controller no longer counts this worker in it" >/dev/null ||
        fail "worker $w did not drop the run serve does not know: $(tail -5 "$WORK/$w.err")"
done
grep -q "taking them over" "$WORK/serve3.err" && fail "serve took batches of a run it does not know"
wait_state 4 done 30
assert_equal "run 4's workers" "$(db "select workers from runs where id = 4")" 2
echo "ok: serve killed mid-run; after its restart ${HANDED[*]} handed over $((ok - journaled)) records beyond the journal's $journaled: $ok in results.json = $served served by the mock; rebuilt ${handover_ms} ms after serve was restarted"
