#!/bin/bash
# A worker announcing another protocol version (test hook STAMPEDE_TEST_PROTO_VERSION) is
# refused: the controller says so, the worker prints the controller's reason and exits 3, and the
# controller does not count it (it then reports that no worker came).
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

write_workload "$WORK/v.yaml" endpoints="[http://127.0.0.1:9]" max_requests=1
start_controller "$WORK/ctl.err" "$WORK/v.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 1 \
    --out "$WORK/out" --register-timeout 4
rc=0
STAMPEDE_TEST_PROTO_VERSION=99 timeout 20 "$STAMPEDE" worker --connect "$CONTROLLER_EP" --id old \
    2>"$WORK/worker.err" || rc=$?
assert_equal "worker exit status" "$rc" 3
grep -q "refused by the controller: protocol version mismatch: this worker speaks protocol version 99, the controller (stampede [0-9.]*) speaks version 1" \
    "$WORK/worker.err" || fail "worker message: $(cat "$WORK/worker.err")"
wait_controller 20
grep -q "refused worker old (host .*): it speaks protocol version 99, this controller speaks 1" \
    "$WORK/ctl.err" || fail "controller message: $(cat "$WORK/ctl.err")"
grep -q "no worker came" "$WORK/ctl.err" || fail "the refused worker was counted: $(cat "$WORK/ctl.err")"
assert_equal "controller exit status" "$CONTROLLER_RC" 1
echo "ok: refused with a clear message on both sides"
