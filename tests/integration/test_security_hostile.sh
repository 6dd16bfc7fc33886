#!/bin/bash
# Hostile messages over real sockets (tests/integration/hostile_peer.py speaks raw ZMTP and
# hand-made protobuf; the oversized case is test_security_oversized.sh):
#  1. a stranger sends the controller's control socket 30 messages that are not protobuf
#     Envelopes: each of the first 10 is refused with a line naming its routing id and address;
#  2. a fake worker registers, takes its share, and once the run starts sends batches with an
#     absurd record count (100,000 empty records: past the 65,536 a batch may hold; 8,000,000:
#     past the unpack arena's 64 MiB), twice each, then an undecodable message: each is refused
#     with a line naming the worker and its address, the controller's peak RSS stays under
#     100 MiB above its start and the second round costs nothing more, and the run goes on with
#     an honest worker to results;
#  3. a fake controller sends a real worker (twice) a control message whose 4,000,000 empty
#     records would cost ~1 GB to unpack, three undecodable messages, then an Assign whose YAML is
#     a billion-laughs bomb: the worker refuses each with a line naming the controller's address,
#     answers Ready{ok: false} naming the aliases, its peak RSS stays under 64 MiB above its
#     start, and it exits cleanly when released.
# ctest: parallel
source "$(dirname "$0")/protocol_lib.sh"
PEER="$(dirname "$0")/hostile_peer.py"
# Under ASan (make test-asan-all) freed memory waits in a quarantine (256 MiB by default) before
# reuse, which would count in the RSS bounds below: none here, as with malloc.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}quarantine_size_mb=0"
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
peak_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }
# assert_peak_grew_under FILE FIRST THEN KIB WHO: the peak RSS that the line of FILE beginning
# with the basic regex THEN reports (", peak N KiB" at its end) is less than KIB above the one
# FIRST's line reports; sets FIRST_PEAK and THEN_PEAK (KiB).
assert_peak_grew_under() {
    local file=$1 kib=$4 who=$5
    FIRST_PEAK=$(sed -n "s/^$2.*peak \([0-9]*\) KiB\$/\1/p" "$file")
    THEN_PEAK=$(sed -n "s/^$3.*peak \([0-9]*\) KiB\$/\1/p" "$file")
    [ -n "$FIRST_PEAK" ] && [ -n "$THEN_PEAK" ] || fail "no RSS figures from $who: $(cat "$file")"
    [ $((THEN_PEAK - FIRST_PEAK)) -lt "$kib" ] ||
        fail "$who: peak RSS $FIRST_PEAK KiB -> $THEN_PEAK KiB, not under $kib KiB more"
}

# --- 1 and 2: the controller ---------------------------------------------------------------------
start_mock --ttft-ms 5 --itl-ms 2
start_run_on_mock w 2 60 duration=12s concurrency=2
PEAK_START=$(peak_kib "$CONTROLLER_PID")
timeout 30 python3 "$PEER" garbage "${CONTROLLER_EP#tcp://}" hostile-garbage 30 >"$WORK/garbage.out" 2>&1 ||
    fail "the garbage peer failed: $(cat "$WORK/garbage.out")"
wait_for_line "$WORK/ctl.err" 10 "refused a 7-byte message on the control socket from unregistered peer with routing id 0x$(hex hostile-garbage) at 127\.0\.0\.1: it is not a valid protobuf Envelope \(4 from unregistered peers so far\)" \
    >/dev/null || fail "the undecodable control message was not refused naming its peer: $(cat "$WORK/ctl.err")"
REFUSED=$(grep -c "from unregistered peer with routing id 0x$(hex hostile-garbage) at 127.0.0.1" "$WORK/ctl.err" || true)
assert_equal "refusals logged of 30 (the first 10, then every 1000th)" "$REFUSED" 10

timeout 90 python3 "$PEER" fake-worker "${CONTROLLER_EP#tcp://}" hostile "$CONTROLLER_PID" \
    100000 8000000 100000 8000000 >"$WORK/fake.out" 2>&1 &
FAKE=$!
BACKGROUND+=($FAKE)
wait_for_line "$WORK/ctl.err" 10 "worker hostile \(host hostile" >/dev/null ||
    fail "the fake worker did not register: $(cat "$WORK/ctl.err") $(cat "$WORK/fake.out")"
start_once_worker honest
wait_controller 90
[ "$CONTROLLER_RC" -lt 128 ] || fail "the controller died of signal $((CONTROLLER_RC - 128)): $(cat "$WORK/ctl.err")"
wait_exit "$FAKE" 30
assert_equal "fake worker exit status" "$EXIT_STATUS" 0
cat "$WORK/fake.out"
# Each refusal (the log's line | what was refused) names the worker.
while IFS='|' read -r line what; do
    assert_log_has "$WORK/ctl.err" "$line" "$what was not refused naming the worker"
done <<'REFUSALS'
worker hostile: batch 1 refused, its records are not merged: 100000 records in one batch, more than the 65536 a worker ever sends|the batch of 100000 records
refused a 160000[0-9]\{2\}-byte message on the data socket from worker hostile at 127\.0\.0\.1: unpacking it needs more memory than the arena's limit|the batch of 8000000 records
refused a 7-byte message on the data socket from worker hostile at 127.0.0.1: it is not a valid protobuf Envelope|the undecodable batch
REFUSALS
# peak RSS: after round 1 (batches 1-2) and round 2 (3-4), as the fake worker read it
assert_peak_grew_under "$WORK/fake.out" 'sent batch 2 ' 'sent batch 4 ' $((8 << 10)) \
    "the controller, on the second round"
PEAK1=$FIRST_PEAK PEAK2=$THEN_PEAK
[ $((PEAK1 - PEAK_START)) -lt $((100 << 10)) ] ||
    fail "the controller's peak RSS grew from $PEAK_START KiB to $PEAK1 KiB on the absurd batches"
R="$WORK/out/results.json"
[ -f "$R" ] || fail "no results.json: $(cat "$WORK/ctl.err")"
OK=$(json_value "$R" 'l["requests_ok"]')
[ "$OK" -gt 0 ] || fail "the honest worker's requests did not reach the results"
assert_equal "partial (a refused batch)" "$(json_value "$R" 'r["partial"]')" True
json_value "$R" 'l["partial_reason"]' | grep -q "worker hostile: batch 1 refused" ||
    fail "partial_reason does not name the refused batch: $(json_value "$R" 'l.get("partial_reason")')"

# --- 3: the worker -----------------------------------------------------------------------------
{
    echo 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'
    prev=a
    for c in b c d e f g h i; do
        echo "$c: &$c [*$prev,*$prev,*$prev,*$prev,*$prev,*$prev,*$prev,*$prev,*$prev]"
        prev=$c
    done
} >"$WORK/bomb.yaml"
timeout 90 python3 "$PEER" fake-controller "$WORK/bomb.yaml" 4000000 >"$WORK/fc.out" 2>&1 &
FC=$!
BACKGROUND+=($FC)
EP=$(wait_for_line "$WORK/fc.out" 10 'tcp://127\.0\.0\.1:[0-9]+') || fail "the fake controller did not listen: $(cat "$WORK/fc.out")"
start_worker "$WORK/victim.err" --connect "$EP" --once --id victim
wait_exit "$WORKER_PID" 60
assert_equal "worker exit status" "$EXIT_STATUS" 0
wait_exit "$FC" 10
cat "$WORK/fc.out"
assert_equal "fake controller exit status" "$EXIT_STATUS" 0
N=$(grep -c "worker victim: undecodable control message (8000023 bytes) from the controller at $EP ignored: unpacking it needs more than its length plus 1 MiB" "$WORK/victim.err" || true)
assert_equal "refused 4000000-record messages" "$N" 2
N=$(grep -c "worker victim: undecodable control message ([0-9]* bytes) from the controller at $EP ignored: it is not a valid protobuf Envelope" "$WORK/victim.err" || true)
assert_equal "refused undecodable messages" "$N" 3
assert_log_has "$WORK/victim.err" "worker victim: cannot prepare run 0000000000005eed assigned by the controller at $EP: cannot load the assigned config: assigned config:2:8: b\[0\]: YAML aliases (\*a) are not accepted" \
    "the YAML bomb was not refused naming the controller"
assert_log_has "$WORK/fc.out" "^ready ok=False error=cannot load the assigned config: .*YAML aliases" \
    "Ready did not refuse the bomb"
assert_peak_grew_under "$WORK/fc.out" 'worker pid [0-9]*; RSS [0-9]* KiB, ' \
    'after the assign: RSS [0-9]* KiB, ' $((64 << 10)) "the worker, on the hostile controller's messages"
START=$FIRST_PEAK END=$THEN_PEAK
echo "ok: garbage, absurd batches and a YAML bomb refused naming the peer; controller peak RSS" \
    "$PEAK_START -> $PEAK1 -> $PEAK2 KiB, worker peak $START -> $END KiB; $OK honest requests"
