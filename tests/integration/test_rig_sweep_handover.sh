#!/bin/bash
# serve dies (SIGKILL) during level 2 of a sweep while two long-lived workers stream it, and starts
# again on the same archive (docs/rig.md "Faults"). Level 2's repetition is a run with its own
# journal; the workers hold what serve never acknowledged and hand it over to the new serve, as for
# a plain run. Asserted:
#  - serve says it rebuilt level 2 from its journal and takes the workers' batches; the sweep's
#    row is interrupted, its note names the records the workers gave back;
#  - results.json keeps level 1 whole and holds level 2 marked interrupted and not valid (a
#    partial level, said in its reasons), its records (warm-up included) exactly the requests the
#    mock served during level 2 (its own counter, less level 1's whole repetition): none lost,
#    none counted twice, more than level 2's journal alone held; no level 3 ran;
#  - the archive has one row per level, level 2's with the same count; the reports were rendered;
#    the hand-over spools sit beside level 2's journal.
# ctest: parallel (counts and messages; the only timing is the 10 s liveness, far from any bound)
source "$(dirname "$0")/protocol_lib.sh"
source "$(dirname "$0")/rig_lib.sh"

rig_worker_key w2
write_rig_sweep "$WORK/sweep.yaml" "2, 4, 6" 100ms 4s 40 10
start_serve "$WORK/serve.err" --expect-workers 2
start_rig_worker w1
start_rig_worker w2
served_before=$(mock_metric vllm:request_success_total)
as alice submit "$WORK/sweep.yaml" >/dev/null 2>&1 || fail "the sweep was not queued"
wait_for_line "$SERVE_LOG" 20 "serve: run 1: level 2/3: concurrency 4" >/dev/null ||
    fail "the sweep did not reach level 2: $(grep 'run 1' "$SERVE_LOG")"
# Well into level 2 (batches journaled and acknowledged), serve dies: 1 s into its 4 s window, so a
# test process stalled for seconds on a loaded machine still kills it before the level ends (with
# a 2 s window a worker was once released, level 2 over, before the kill).
wait_for_line "$SERVE_LOG" 10 "\] run 1: level 2/3 concurrency 4 rep 1/1 \| snapshot" >/dev/null ||
    fail "level 2 did not reach its window: $(tail -3 "$SERVE_LOG")"
sleep 1
kill -9 "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null || true
wait_mock_idle 15 || fail "the workers' load did not end after serve died"
served=$(($(mock_metric vllm:request_success_total | cut -d. -f1) - ${served_before%.*}))
# Level 1's whole repetition (warm-up and drain too) is in its results.json (its journal is gone
# with its end); what level 2's journal alone holds: merged apart, into a copy.
L="$WORK/arch/runs/1/levels"
level1=$(json_value "$L/01-c2/rep-1/results.json" 'l["requests_ok"] + l["requests_warmup"]')
mkdir -p "$WORK/journal_only"
cp "$L/02-c4/rep-1/journal.spool" "$WORK/journal_only/"
"$STAMPEDE" merge --into "$WORK/journal_only" >/dev/null 2>"$WORK/journal_only.err" ||
    fail "level 2's journal alone does not merge: $(cat "$WORK/journal_only.err")"
journaled=$(json_value "$WORK/journal_only/results.json" 'l["requests_ok"] + l["requests_warmup"]')
served2=$((served - level1))

start_serve "$WORK/serve2.err" --expect-workers 2
taken_over "$WORK/serve2.err" \
    "a sweep; the levels it finished are kept, level 2 (in flight) rebuilt from its journal: partial" \
    "a sweep; the levels it finished are kept, level 2 \(in flight\) rebuilt from its journal: partial"
grep -q "cannot write" "$WORK/serve2.err" && fail "serve could not write: $(cat "$WORK/serve2.err")"

R="$WORK/arch/runs/1"
check_results "$R" "$served2" "$journaled" <<'PY' || fail "the sweep's results.json after the restart"
served2, journaled = int(argv[0]), int(argv[1])
levels = results["levels"]
assert len(levels) == 2, [l.get("concurrency") for l in levels]
assert results["partial"] is True and results["run"]["stop_reason"] == "interrupted", results["run"]
one, two = levels
assert one["concurrency"] == 2 and not one["interrupted"] and one["requests_ok"] > 0, one
assert two["concurrency"] == 4 and two["interrupted"] is True and two["rebuilt"] is True, two
assert two["validity"]["valid"] is False, two["validity"]
assert any("partial level" in r for r in two["validity"]["reasons"]), two["validity"]
assert two["requests_failed"] + two["requests_cancelled"] + two["requests_warmup_failed"] == 0, two
assert two["records"] == two["requests_ok"] + two["requests_warmup"], two["records"]
assert two["records"] == served2, (two["records"], served2)
assert two["records"] > journaled, ("the hand-over added nothing", two["records"], journaled)
assert two["records_from_workers"] == two["records"] - journaled, two["records_from_workers"]
assert "level 2 is not valid" in results["validity"]["reasons"], results["validity"]
PY
level2() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["levels"][1][sys.argv[2]])' "$R/results.json" "$1"; }
ok=$(level2 requests_ok)
records=$(level2 records)
assert_equal "the sweep's state" "$(db "select state from runs where id = 1")" interrupted
note=$(db "select note from runs where id = 1")
case $note in
"serve stopped during the run: a sweep; the levels it finished are kept, level 2 (in flight) rebuilt from its journal: partial; $((records - journaled)) records recovered from its workers ("*) ;;
*) fail "the sweep's note: $note" ;;
esac
assert_equal "the sweep's archived levels" "$(db "select count(*) from levels where run = 1")" 2
assert_equal "level 2's archived requests" \
    "$(db "select requests_ok from levels where run = 1 and level = 1")" "$ok"
assert_equal "hand-over spools beside level 2's journal" \
    "$(ls "$L"/02-c4/rep-1/handover-*.spool | wc -l)" ${#HANDED[@]}
ls -d "$L"/03-* 2>/dev/null && fail "level 3 ran"
grep -q "interrupted" "$R/report.md" || fail "report.md does not say level 2 was interrupted"
echo "ok: serve killed in level 2 of a sweep; after its restart ${HANDED[*]} handed over $((records - journaled)) records beyond level 2's journal's $journaled: $records in results.json = $served2 served by the mock during level 2; level 1 kept whole"
