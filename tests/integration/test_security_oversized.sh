#!/bin/bash
# ZMQ_MAXMSGSIZE on the controller's ROUTERs: a hostile DEALER (tests/integration/hostile_peer.py,
# raw ZMTP) that sends a 2 MiB message to the control socket (limit 1 MiB), and one that announces
# a 1 TiB message on the data socket (limit 16 MiB) and streams 40 MiB of it, are each disconnected
# by libzmq before the body is buffered; the controller logs each closed connection with the
# peer's address and the limit, its resident memory does not grow by the message (tolerance
# 16 MiB, far below the 40 MiB sent), and the run then goes on with a real worker. The peer
# sends only after the controller's READY, as libzmq does, so the controller's gate has read its
# address before the drop however loaded the machine (it reads it before the ZAP reply).
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 1
start_run_on_mock w 1 60 max_requests=10 concurrency=2
DATA_PORT=$(wait_for_line "$WORK/ctl.err" 10 'data port [0-9]+') || fail "no data port: $(cat "$WORK/ctl.err")"
DATA_PORT=${DATA_PORT#data port }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$CONTROLLER_PID/status"; }
RSS_BEFORE=$(rss_kib)

hostile() {
    local name=$1
    shift
    timeout 60 python3 "$(dirname "$0")/hostile_peer.py" "$@" 10 >"$WORK/$name.out" 2>&1 ||
        fail "$name: the connection was not closed: $(cat "$WORK/$name.out")"
    grep -Eo 'local port [0-9]+' "$WORK/$name.out" | grep -Eo '[0-9]+'
}
PORT_CTL=$(hostile control "${CONTROLLER_EP#tcp://}" $((2 << 20)) $((2 << 20)))
PORT_DATA=$(hostile data "127.0.0.1:$DATA_PORT" $((1 << 40)) $((40 << 20)))

kill -0 "$CONTROLLER_PID" 2>/dev/null || fail "the controller died: $(cat "$WORK/ctl.err")"
wait_for_line "$WORK/ctl.err" 5 "control connection from 127\.0\.0\.1:$PORT_CTL closed .*over the 1048576-byte limit" \
    >/dev/null || fail "the control drop was not logged with the peer: $(cat "$WORK/ctl.err")"
wait_for_line "$WORK/ctl.err" 5 "data connection from 127\.0\.0\.1:$PORT_DATA closed .*over the 16777216-byte limit" \
    >/dev/null || fail "the data drop was not logged with the peer: $(cat "$WORK/ctl.err")"
RSS_AFTER=$(rss_kib)
[ $((RSS_AFTER - RSS_BEFORE)) -lt 16384 ] ||
    fail "the controller grew from $RSS_BEFORE KiB to $RSS_AFTER KiB after the hostile messages"

start_once_worker honest
wait_controller 60
assert_equal "controller exit status" "$CONTROLLER_RC" 0
assert_equal "requests_ok" "$(json_value "$WORK/out/results.json" 'l["requests_ok"]')" 10
echo "ok: oversized messages dropped and logged with the peer (RSS $RSS_BEFORE -> $RSS_AFTER KiB), the run went on"
