#!/bin/bash
# An Assign above what a worker takes is refused by the controller before it is sent, saying so
# (docs/protocol.md "Security"): libzmq would otherwise close the worker's connection on it, and the
# worker would look silent. A worker started with --max-message-size 4KiB announces it in its
# Hello; the workload's deployment map makes the config YAML about 6 KiB. The controller exits 1
# within seconds with "the Assign for worker w is N bytes ..., above the 4096 that worker takes",
# and a worker with the default 64 MiB runs the same file.
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
echo "ok: the Assign above the worker's 4 KiB limit refused by name; the default limit takes it"
