#!/bin/bash
# CURVE on the controller's sockets (docs/security.md), real processes on loopback:
#  - a worker whose key is not in --authorized-keys is refused: it exits 3 saying so, and the
#    controller logs the refusal with the worker's address and key;
#  - a worker given the wrong --server-key does not connect, and says so within a bounded time;
#  - a worker without keys cannot join a CURVE controller, and says how to fix it;
#  - a worker with an authorized key and the right server key is admitted and runs the workload.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

(cd "$WORK" && "$STAMPEDE" keygen controller known unknown >/dev/null) || fail "keygen failed"
[ "$(stat -c %a "$WORK/known.key")" = 600 ] || fail "known.key is not mode 0600"
mkdir "$WORK/authorized"
cp "$WORK/known.pub" "$WORK/authorized/"
UNKNOWN_PUB=$(grep -v '^#' "$WORK/unknown.pub")

start_mock --ttft-ms 5 --itl-ms 1
write_workload "$WORK/w.yaml" ignore_eos=true endpoints="[$MOCK_URL]" max_requests=20 concurrency=2
start_controller "$WORK/ctl.err" "$WORK/w.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 1 \
    --out "$WORK/out" --register-timeout 60 --key "$WORK/controller.key" \
    --authorized-keys "$WORK/authorized"
grep -q "CURVE on" "$WORK/ctl.err" || fail "the controller did not say CURVE is on: $(cat "$WORK/ctl.err")"

# Each refused worker must give up on its own within 15 s (timeout would exit 124).
refused() {
    local id=$1 rc=0
    shift
    timeout 15 "$STAMPEDE" worker --connect "$CONTROLLER_EP" --id "$id" "$@" 2>"$WORK/$id.err" ||
        rc=$?
    assert_equal "exit status of worker $id" "$rc" 3
}

refused stranger --key "$WORK/unknown.key" --server-key "$WORK/controller.pub"
grep -q "refused this worker's key" "$WORK/stranger.err" ||
    fail "the unknown worker did not say why: $(cat "$WORK/stranger.err")"
wait_for_line "$WORK/ctl.err" 5 "refused a worker at 127\.0\.0\.1: its public key .* is not in --authorized-keys" \
    >/dev/null || fail "the controller did not log the refusal with the address: $(cat "$WORK/ctl.err")"
grep -qF -- "$UNKNOWN_PUB" "$WORK/ctl.err" || fail "the refusal does not name the refused key"

refused impostor --key "$WORK/known.key" --server-key "$WORK/unknown.pub"
grep -q "the handshake with .* failed.*--server-key is not the controller's public key" \
    "$WORK/impostor.err" || fail "wrong server key: $(cat "$WORK/impostor.err")"
wait_for_line "$WORK/ctl.err" 5 "closed: the CURVE handshake failed: the worker's --server-key" \
    >/dev/null || fail "the controller did not log the failed handshake: $(cat "$WORK/ctl.err")"

refused plain
grep -q "the controller wants CURVE keys: pass --key" "$WORK/plain.err" ||
    fail "a worker without keys: $(cat "$WORK/plain.err")"

grep -q "registered" "$WORK/ctl.err" && fail "a refused worker was registered: $(cat "$WORK/ctl.err")"
start_once_worker known --key "$WORK/known.key" --server-key "$WORK/controller.pub"
wait_controller 60
assert_equal "controller exit status" "$CONTROLLER_RC" 0
grep -q "worker known .* registered" "$WORK/ctl.err" || fail "known worker: $(cat "$WORK/ctl.err")"
assert_equal "requests_ok" "$(json_value "$WORK/out/results.json" 'l["requests_ok"]')" 20
echo "ok: unknown key refused and logged with its address, wrong server key and no key refused in bounded time, known worker ran"
