#!/bin/bash
# Numbers from a worker are checked before they are merged (docs/protocol.md "Numbers a worker
# reports"). A lying worker of the test's own (tests/integration/hostile_peer.py lying-worker,
# over CURVE with a real key in --authorized-keys: registered, so trusted as far as any worker)
# and an honest `stampede worker` run concurrency 4 for 5 s against the mock, CURVE on both
# sockets, fleet.heartbeat 250ms x liveness 4. One second after the
# start the liar sends one record each of: 2^31 output tokens, session 2^40 (past any grant), an
# end 10^15 ns after its send, and an honest one; then a heartbeat claiming 2^64 - 1 sessions
# started (frontier 2^63); then it goes silent. Checked:
#  - each lie is refused with a line naming the worker and the bound, counted on the liar
#    (results.json workers[].refused = 4; the honest worker 0), its honest record merged;
#  - the run is invalid (exit 3) and says why, naming the liar and the first lie;
#  - no output total holds the 2^31, and the liar's loss counts no session from its lie: lost
#    sessions are never wrapped (no 18446744073709551615 in the table, none negative in
#    results.json).
# ctest: parallel
source "$(dirname "$0")/protocol_lib.sh"
PEER="$(dirname "$0")/hostile_peer.py"

# The peer speaks CURVE through pyzmq: Debian's python3-zmq, for Debian's python3.
PY=/usr/bin/python3
"$PY" -c "import zmq; assert zmq.has('curve')" 2>/dev/null ||
    fail "$PY has no pyzmq with CURVE: install python3-zmq (make deps)"
(cd "$WORK" && "$STAMPEDE" keygen controller liar honest >/dev/null) || fail "keygen failed"
mkdir "$WORK/authorized"
cp "$WORK/liar.pub" "$WORK/honest.pub" "$WORK/authorized/"

start_mock --ttft-ms 5 --itl-ms 2
start_run_on_mock lie 2 30 duration=5s concurrency=4 output_tokens=16 heartbeat=250ms liveness=4 \
    --key="$WORK/controller.key" --authorized-keys="$WORK/authorized"
grep -q "CURVE on" "$WORK/ctl.err" || fail "the controller did not say CURVE is on: $(cat "$WORK/ctl.err")"
timeout 60 "$PY" "$PEER" lying-worker "${CONTROLLER_EP#tcp://}" liar "$WORK/liar.key" \
    "$WORK/controller.pub" >"$WORK/liar.out" 2>&1 &
BACKGROUND+=($!)
wait_for_line "$WORK/ctl.err" 10 "worker liar \(host hostile" >/dev/null ||
    fail "the lying worker did not register: $(cat "$WORK/ctl.err") $(cat "$WORK/liar.out")"
start_once_worker honest --key "$WORK/honest.key" --server-key "$WORK/controller.pub"
wait_controller 40
assert_equal "controller exit status (an invalid run)" "$CONTROLLER_RC" 3
grep -q "^lied" "$WORK/liar.out" || fail "the liar did not get to lie: $(cat "$WORK/liar.out")"
for lie in "the record of request 1 outside what the plan allows: completion_tokens 2147483648 above the ceiling of 10000000 tokens a request" \
    "the record of request 2 outside what the plan allows: session 1099511627776 at or past the grant" \
    "the record of request 3 outside what the plan allows: its end time lies" \
    "a heartbeat outside what the plan allows: session frontier 9223372036854775808 and 18446744073709551615 sessions started, past the grant"; do
    grep -qF "worker liar: refused $lie" "$WORK/ctl.err" ||
        fail "not refused naming the liar: '$lie': $(grep -v '^\[' "$WORK/ctl.err")"
done
grep -q "worker liar lost" "$WORK/ctl.err" || fail "the silent liar was not declared lost"
# (the refusal itself quotes the lie)
cat "$WORK/ctl.err.out" "$WORK/ctl.err" | grep -v "outside what the plan allows" | grep -q "18446744073709551615" &&
    fail "a count wrapped around: $(grep 18446744073709551615 "$WORK/ctl.err.out" "$WORK/ctl.err")"
check_results "$WORK/out" <<'PY'
by_name = {w["name"]: w for w in results["workers"]}
assert by_name["liar"]["refused"] == 4, by_name["liar"]
assert by_name["honest"]["refused"] == 0, by_name["honest"]
assert not results["validity"]["valid"]
reasons = results["validity"]["reasons"]
assert any(r.startswith("worker liar reported 4 numbers outside what the plan allows, refused "
                        "(the first: ") for r in reasons), reasons
total = json.dumps(results)
assert "2147483648" not in total.replace("completion_tokens 2147483648", ""), "2^31 was merged"
assert level["output_tokens"] < 10 ** 6, level["output_tokens"]
for loss in level["worker_losses"]:
    assert 0 <= loss["lost_sessions"] <= 4, loss
assert 0 <= level["lost_sessions"] <= 4, level["lost_sessions"]
assert all(0 <= w["lost_sessions"] <= 4 for w in results["workers"]), results["workers"]
print("liar refused 4 times; lost sessions", level["lost_sessions"])
PY
echo "ok: every lie refused and counted, the run invalid, nothing wrapped"
