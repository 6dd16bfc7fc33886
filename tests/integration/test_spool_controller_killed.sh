#!/bin/bash
# Nothing acknowledged is lost (docs/protocol.md, "Spools"): the controller is SIGKILLed mid-run
# with three long-lived workers against a fixed-mode mock (TTFT 20 ms, ITL 10 ms, 100 tokens: ~1 s a
# request, concurrency 9, so requests are in flight at the kill). Asserted:
#  - the controller kept a journal (OUT/journal.spool) of every batch it acknowledged;
#  - each worker notices the loss, stops its load, and spools what was not acknowledged (at least
#    the requests the stop cancelled) to its --spool directory, 0640, without the secret header
#    value of the workload (nor does the journal hold it);
#  - SIGTERM on each worker then: it cannot reach the controller, so it leaves at once, exits 0 and
#    prints its own count of completed requests;
#  - `stampede merge SPOOLS --into OUT` writes results.json (partial, stop_reason says the
#    controller was lost) and the reports, and the merged records equal, worker by worker and in
#    total, the requests the workers say they completed;
#  - a spool given twice (a copy: every batch a resend) changes nothing: duplicates counted once;
#  - a spool with one byte flipped, and one cut short, are refused (exit 1) naming the file and
#    the offset, and write nothing; a journal cut short is read up to its last whole frame.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 20 --itl-ms 10
write_workload "$WORK/k.yaml" seed=3 ignore_eos=true endpoints="[$MOCK_URL]" output_tokens=100 \
    concurrency=9 duration=60s headers="{Authorization: 'Bearer sk-spool-secret-4242'}"
mkdir -p "$WORK/spool"
start_controller "$WORK/ctl.err" "$WORK/k.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 3 \
    --out "$WORK/out" --register-timeout 20
PIDS=()
for w in a b c; do
    start_worker "$WORK/$w.err" --connect "$CONTROLLER_EP" --id "$w" --spool "$WORK/spool"
    PIDS+=($WORKER_PID)
done
wait_run_reaches "$WORK/ctl.err" 20 3
[ -s "$WORK/out/journal.spool" ] || fail "no journal in the results directory during the run"
kill -KILL "$CONTROLLER_PID"
for w in a b c; do
    wait_for_line "$WORK/$w.err" 15 "spooled batches" >/dev/null ||
        fail "worker $w spooled nothing within 15 s of the kill: $(cat "$WORK/$w.err")"
done
wait_mock_idle 10 || fail "the workers kept their load after the controller died"
sleep 0.5 # the last spool rewrite (the batch of the cancelled requests) is logged before its rename
for i in 0 1 2; do
    kill -TERM "${PIDS[$i]}"
done
total=0
for i in 0 1 2; do
    w=$(echo a b c | cut -d' ' -f$((i + 1)))
    wait_exit "${PIDS[$i]}" 10
    assert_equal "worker $w exit status after SIGTERM" "$EXIT_STATUS" 0
    line=$(grep -Eo "exiting: run [0-9a-f]+: [0-9]+ requests completed.*" "$WORK/$w.err") ||
        fail "worker $w did not say what it completed: $(cat "$WORK/$w.err")"
    n=$(echo "$line" | grep -Eo "[0-9]+ requests completed" | grep -Eo "^[0-9]+")
    echo "$line" | grep -q "spooled to $WORK/spool/" || fail "worker $w: its last batches were not spooled: $line"
    eval "count_$w=$n"
    total=$((total + n))
done
[ "$total" -gt 0 ] || fail "the workers completed nothing"
ls "$WORK"/spool/*.tmp 2>/dev/null && fail "a spool was left half-written"
SPOOLS=("$WORK"/spool/stampede-*.spool)
assert_equal "spool files" "${#SPOOLS[@]}" 3
for f in "${SPOOLS[@]}" "$WORK/out/journal.spool"; do
    assert_equal "mode of $f" "$(stat -c %a "$f")" 640
    grep -aq "sk-spool-secret-4242" "$f" && fail "$f holds the secret header value"
done

"$STAMPEDE" merge "${SPOOLS[@]}" --into "$WORK/out" >"$WORK/merge.out" 2>"$WORK/merge.err" ||
    fail "stampede merge failed ($?): $(cat "$WORK/merge.err")"
R="$WORK/out/results.json"
assert_equal "partial" "$(json_value "$R" 'r["partial"]')" True
json_value "$R" 'r["run"]["stop_reason"]' | grep -q "controller was lost" || fail "stop_reason: $(json_value "$R" 'r["run"]["stop_reason"]')"
merged=$(json_value "$R" 'l["requests_ok"] + l["requests_failed"] + l["requests_cancelled"]')
assert_equal "records merged (journal + spools) vs the workers' own counts" "$merged" "$total"
for w in a b c; do
    eval "n=\$count_$w"
    grep -q "worker $w: $n records in batches .*its own count: $n requests completed" "$WORK/merge.err" ||
        fail "worker $w: merged count differs from its own $n: $(cat "$WORK/merge.err")"
done
grep -q "in no spool given\|left out" "$WORK/merge.err" && fail "batches missing: $(cat "$WORK/merge.err")"
[ -f "$WORK/out/report.md" ] && [ -f "$WORK/out/config.yaml" ] || fail "the reports were not written"

# Every batch of a spool twice (a copy is another file): counted once.
cp "${SPOOLS[0]}" "$WORK/dup.spool"
mkdir -p "$WORK/out2"
cp "$WORK/out/journal.spool" "$WORK/out2/"
"$STAMPEDE" merge "${SPOOLS[@]}" "$WORK/dup.spool" --into "$WORK/out2" >/dev/null 2>"$WORK/merge2.err" ||
    fail "merge with a duplicated spool failed: $(cat "$WORK/merge2.err")"
assert_equal "records with a duplicated spool" \
    "$(json_value "$WORK/out2/results.json" 'l["requests_ok"] + l["requests_failed"] + l["requests_cancelled"]')" "$total"
grep -Eq "[1-9][0-9]* duplicates counted once" "$WORK/merge2.err" || fail "no duplicate seen: $(cat "$WORK/merge2.err")"
# The same path twice is one file, read once, and said so (not "0 duplicates counted once").
mkdir -p "$WORK/out2b"
cp "$WORK/out/journal.spool" "$WORK/out2b/"
"$STAMPEDE" merge "${SPOOLS[@]}" "${SPOOLS[0]}" --into "$WORK/out2b" >/dev/null 2>"$WORK/merge2b.err" ||
    fail "merge with a spool given twice failed: $(cat "$WORK/merge2b.err")"
grep -qF "merge: ${SPOOLS[0]} is given more than once: read once" "$WORK/merge2b.err" ||
    fail "a spool given twice is not said: $(cat "$WORK/merge2b.err")"
assert_equal "records with a spool given twice" \
    "$(json_value "$WORK/out2b/results.json" 'l["requests_ok"] + l["requests_failed"] + l["requests_cancelled"]')" "$total"

# A flipped byte, a cut-off end: refused, naming the file and the offset; nothing written.
size=$(stat -c %s "${SPOOLS[1]}")
cp "${SPOOLS[1]}" "$WORK/bad.spool"
printf "\x01" | dd of="$WORK/bad.spool" bs=1 seek=40 conv=notrunc status=none # inside the run frame
mkdir -p "$WORK/out3"
rc=0
"$STAMPEDE" merge "${SPOOLS[0]}" "$WORK/bad.spool" --into "$WORK/out3" >/dev/null 2>"$WORK/merge3.err" || rc=$?
assert_equal "merge of a corrupt spool" "$rc" 1
grep -Eq "bad.spool: offset [0-9]+: corrupt" "$WORK/merge3.err" || fail "no clear error: $(cat "$WORK/merge3.err")"
head -c $((size - 7)) "${SPOOLS[1]}" >"$WORK/short.spool"
rc=0
"$STAMPEDE" merge "$WORK/short.spool" --into "$WORK/out3" >/dev/null 2>"$WORK/merge4.err" || rc=$?
assert_equal "merge of a truncated spool" "$rc" 1
grep -Eq "short.spool: offset [0-9]+: truncated" "$WORK/merge4.err" || fail "no clear error: $(cat "$WORK/merge4.err")"
[ -e "$WORK/out3/results.json" ] && fail "a refused merge wrote results"

# A journal whose last frame was cut short (the controller died writing it) is read up to it;
# the batch it held is then in no file here (the spools were written after it was acknowledged),
# and merge names it instead of failing.
mkdir -p "$WORK/out5"
jsize=$(stat -c %s "$WORK/out/journal.spool")
head -c $((jsize - 3)) "$WORK/out/journal.spool" >"$WORK/out5/journal.spool"
"$STAMPEDE" merge "${SPOOLS[@]}" --into "$WORK/out5" >/dev/null 2>"$WORK/merge5.err" ||
    fail "merge over a cut-short journal failed: $(cat "$WORK/merge5.err")"
grep -Eq "journal.spool: offset [0-9]+: truncated: .*\(read up to it; the controller died writing it\)" "$WORK/merge5.err" ||
    fail "the cut-short journal was not said: $(cat "$WORK/merge5.err")"
assert_equal "partial with a cut-short journal" "$(json_value "$WORK/out5/results.json" 'r["partial"]')" True
echo "ok: $total requests completed by the workers (a $count_a, b $count_b, c $count_c) = journal + spools merged; a duplicated spool counted once; corrupt and truncated spools refused"
