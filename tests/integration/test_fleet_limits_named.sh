#!/bin/bash
# Limits a run hits before its start are named, early (issue 24):
#  1. an Assign above what a worker takes is refused by the controller before it is sent, saying
#     so (docs/protocol.md "Security"): libzmq would otherwise close the worker's connection on
#     it, and the worker would look silent. A worker started with --max-message-size 4KiB
#     announces it in its Hello; the workload's deployment map makes the config YAML about 6 KiB.
#     The controller exits 1 within seconds with "the Assign for worker w is N bytes ..., above
#     the 4096 that worker takes", and a worker with the default 64 MiB runs the same file;
#  2. `concurrency: 1000000000` on one worker: the worker refuses its share naming the 10000
#     streams a loop holds (it said "no endpoint, or out of memory" before), exit 1.
# ctest: parallel
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 2
write_workload "$WORK/big.yaml" ignore_eos=true endpoints="[$MOCK_URL]" duration=1s
printf 'deployment:\n  notes: "%s"\n' "$(head -c 6000 /dev/zero | tr '\0' x)" >>"$WORK/big.yaml"
start_controller "$WORK/ctl.err" "$WORK/big.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 1 \
    --out "$WORK/out" --register-timeout 10
start_worker "$WORK/w.err" --connect "$CONTROLLER_EP" --once --id w --max-message-size 4KiB
wait_controller 20
assert_equal "controller exit status" "$CONTROLLER_RC" 1
grep -Eq "cannot run: the Assign for worker w is [0-9]+ bytes \(the config [0-9]+, the trace part 0\), above the 4096 that worker takes \(its --max-message-size\): raise it, or make the workload smaller" "$WORK/ctl.err" ||
    fail "the oversized Assign was not refused by name: $(cat "$WORK/ctl.err")"
grep -q "silent" "$WORK/ctl.err" && fail "the worker was taken for silent: $(cat "$WORK/ctl.err")"

mv "$WORK/ctl.err" "$WORK/ctl-big.err"
start_controller "$WORK/ctl.err" "$WORK/big.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 1 \
    --out "$WORK/out" --register-timeout 10
start_worker "$WORK/w2.err" --connect "$CONTROLLER_EP" --once --id w2
wait_controller_ok 20

write_workload "$WORK/wide.yaml" ignore_eos=true endpoints="[$MOCK_URL]" duration=1s \
    concurrency=1000000000
run_bounded 30 "$WORK/wide.out" "$WORK/wide.err" "$WORK/wide.yaml" --workers 1 --out "$WORK/wide"
assert_equal "exit status of concurrency 1000000000" "$RUN_RC" 1
grep -q "worker local-0 could not prepare the run: its share of scheduler.concurrency 1000000000 over 1 workers is 1000000000 streams, more than the 10000 one worker loop holds" "$WORK/wide.err" ||
    fail "concurrency 1000000000 did not name the cause: $(cat "$WORK/wide.err")"
echo "ok: the Assign above the worker's 4 KiB limit refused by name; the default limit takes it;"
echo "    a share above a loop's 10000 streams named"
