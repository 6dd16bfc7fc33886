#!/bin/bash
# A controller that no worker reaches gives up after --register-timeout with a clear reason and a
# non-zero exit; with some but not all workers it says how many came.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

write_workload "$WORK/n.yaml" endpoints="[http://127.0.0.1:9]" max_requests=1
start_controller "$WORK/none.err" "$WORK/n.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 2 \
    --out "$WORK/out" --register-timeout 2
wait_controller 20
assert_equal "exit status with no worker" "$CONTROLLER_RC" 1
grep -q "cannot run: no worker came within 2 s (expected 2 at tcp://127.0.0.1:[0-9]*)" \
    "$WORK/none.err" || fail "message: $(cat "$WORK/none.err")"

start_controller "$WORK/one.err" "$WORK/n.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 2 \
    --out "$WORK/out" --register-timeout 3
start_once_worker lonely
wait_controller 20
assert_equal "exit status with 1 of 2 workers" "$CONTROLLER_RC" 1
grep -q "cannot run: only 1 of 2 workers registered within 3 s" "$WORK/one.err" ||
    fail "message: $(cat "$WORK/one.err")"
echo "ok: no worker / too few workers refused clearly"
