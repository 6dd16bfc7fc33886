#!/bin/bash
# Start-up as in Kubernetes (docs/kubernetes.md): workers take their index from
# JOB_COMPLETION_INDEX (or --index) and the controller's registration timeout names the indexes
# missing; workers started before their controller retry, with backoff, logging it, and join once
# it is up; long-lived workers (--idle-exit) end by themselves once the controller is gone.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 5
write_workload "$WORK/w.yaml" ignore_eos=true endpoints="[$MOCK_URL]" output_tokens=5 \
    concurrency=2 max_requests=20

# 1. Three expected, indexes 0 and 2 come (one by the environment, one by the flag): 1 is named.
start_controller "$WORK/short.err" "$WORK/w.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 3 \
    --out "$WORK/short" --register-timeout 4
JOB_COMPLETION_INDEX=0 start_worker "$WORK/i0.err" --connect "$CONTROLLER_EP" --once --id pod-a
I0=$WORKER_PID
start_worker "$WORK/i2.err" --connect "$CONTROLLER_EP" --once --id pod-c --index 2
I2=$WORKER_PID
wait_controller 20
assert_equal "controller exit status, a worker missing" "$CONTROLLER_RC" 1
grep -q "only 2 of 3 workers registered within 4 s; missing worker index 1 (JOB_COMPLETION_INDEX" \
    "$WORK/short.err" || fail "the missing index is not named: $(cat "$WORK/short.err")"
grep -q "registered indexes 0, 2; registered: pod-" "$WORK/short.err" ||
    fail "the registered indexes are not named: $(cat "$WORK/short.err")"
wait_exit "$I0" 10
wait_exit "$I2" 10

# A bad index is refused with its source named.
rc=0
JOB_COMPLETION_INDEX=x "$STAMPEDE" worker --connect tcp://127.0.0.1:1 2>"$WORK/bad.err" || rc=$?
assert_equal "worker exit status, bad JOB_COMPLETION_INDEX" "$rc" 1
grep -q "JOB_COMPLETION_INDEX wants an index 0, 1, 2...; got 'x'" "$WORK/bad.err" ||
    fail "unclear error: $(cat "$WORK/bad.err")"

# 2. Workers first, the controller 3 s later on the port they dial.
# A free port whose next one (the data port) is free too.
port=$(python3 - <<'PY'
import socket
for _ in range(100):
    a = socket.socket(); a.bind(("127.0.0.1", 0)); p = a.getsockname()[1]
    try:
        b = socket.socket(); b.bind(("127.0.0.1", p + 1)); b.close(); a.close(); print(p); break
    except OSError:
        a.close()
PY
)
for i in 0 1; do
    JOB_COMPLETION_INDEX=$i start_worker "$WORK/late$i.err" --connect "tcp://127.0.0.1:$port" \
        --idle-exit 2s
    eval "W$i=\$WORKER_PID"
done
wait_for_line "$WORK/late0.err" 10 "the controller at tcp://127.0.0.1:$port is not reachable yet \(attempt 1, 0 s\); retrying in [0-9]+ ms" >/dev/null ||
    fail "the worker did not say it retries: $(cat "$WORK/late0.err")"
sleep 3
start_controller "$WORK/late.err" "$WORK/w.yaml" --bind "tcp://127.0.0.1:$port" \
    --expect-workers 2 --out "$WORK/late" --register-timeout 20
wait_controller 60
[ "$CONTROLLER_RC" = 0 ] || fail "controller exit status, started late: $CONTROLLER_RC: $(cat "$WORK/late.err")"
assert_equal "requests" "$(json_value "$WORK/late/results.json" 'l["requests_ok"]')" 20
for i in 0 1; do
    grep -Eq "connected to tcp://127.0.0.1:$port after [0-9]+ failed attempts over [0-9.]+ s" \
        "$WORK/late$i.err" || fail "worker $i did not say it connected: $(cat "$WORK/late$i.err")"
    eval "pid=\$W$i"
    wait_exit "$pid" 20
    assert_equal "worker $i exit status (--idle-exit)" "$EXIT_STATUS" 0
    grep -q "idle, the controller gone for over 2s: its runs are over; exiting (--idle-exit)" \
        "$WORK/late$i.err" || fail "worker $i did not say why it exits: $(cat "$WORK/late$i.err")"
done
echo "ok: missing indexes named, late controller joined, idle workers exit"
