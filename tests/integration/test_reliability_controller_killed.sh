#!/bin/bash
# The controller dies mid-run (SIGKILL), then a new one starts on the same endpoint. Two
# long-lived workers (no --once), a fixed-mode mock (TTFT 20 ms, ITL 10 ms, 20 tokens).
#  - Run 1 (30 s by duration) loses its controller after ~3 s. docs/protocol.md: a worker that
#    loses its controller stops its load within a bounded time (3 s of silence). Asserted: within
#    6 s of the kill the mock has no request running (three polls in a row), it generates no token
#    over the next 1.5 s, and each worker says "no word from the controller" and "stopping the
#    load".
#  - Run 2: a controller started afterwards on the same endpoint (60 requests). The workers drop
#    the old run ("abandoning run"), register again and serve the new one. Asserted: exit 0,
#    exactly 60 requests ok and nothing else in results.json (no record of run 1 leaks in), not
#    partial, and the mock saw exactly 60 new requests.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 20 --itl-ms 10
read -r PORT DATA_PORT < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])')
common=(seed=5 ignore_eos=true endpoints="[$MOCK_URL]" output_tokens=20 concurrency=4)
write_workload "$WORK/run1.yaml" "${common[@]}" duration=30s
write_workload "$WORK/run2.yaml" "${common[@]}" max_requests=60

start_controller "$WORK/ctl1.err" "$WORK/run1.yaml" --bind "tcp://127.0.0.1:$PORT" \
    --data-port "$DATA_PORT" --expect-workers 2 --out "$WORK/out1" --register-timeout 20
start_worker "$WORK/a.err" --connect "tcp://127.0.0.1:$PORT" --id a
start_worker "$WORK/b.err" --connect "tcp://127.0.0.1:$PORT" --id b
wait_run_reaches "$WORK/ctl1.err" 20 3
running=$(mock_metric vllm:num_requests_running)
[ "${running%.*}" -ge 1 ] || fail "no load before the kill (running = $running)"
kill -KILL "$CONTROLLER_PID"
killed=$(date +%s%N)
wait_mock_idle 6 || fail "the workers kept their load 6 s after the controller died"
stopped_ms=$((($(date +%s%N) - killed) / 1000000))
assert_no_tokens_for_1_5_s "tokens generated after the load stopped"
for w in a b; do
    grep -q "no word from the controller" "$WORK/$w.err" && grep -q "stopping the load" "$WORK/$w.err" ||
        fail "worker $w did not say why it stopped: $(cat "$WORK/$w.err")"
done

finished_before=$(mock_metric vllm:request_success_total)
start_controller "$WORK/ctl2.err" "$WORK/run2.yaml" --bind "tcp://127.0.0.1:$PORT" \
    --data-port "$DATA_PORT" --expect-workers 2 --out "$WORK/out2" --register-timeout 20
wait_controller 40
assert_equal "run 2 controller exit status" "$CONTROLLER_RC" 0
R="$WORK/out2/results.json"
assert_equal "run 2 partial" "$(json_value "$R" 'r["partial"]')" False
assert_equal "run 2 requests ok, failed, cancelled, warm-up" \
    "$(json_value "$R" '[l["requests_ok"], l["requests_failed"], l["requests_cancelled"], l["requests_warmup"]]')" \
    "[60, 0, 0, 0]"
sleep 0.2
finished_after=$(mock_metric vllm:request_success_total)
assert_equal "requests the mock served in run 2" "$((${finished_after%.*} - ${finished_before%.*}))" 60
for w in a b; do
    grep -q "abandoning run" "$WORK/$w.err" || fail "worker $w did not drop run 1: $(cat "$WORK/$w.err")"
done
echo "ok: load stopped $stopped_ms ms after the controller died; a new controller ran 60 requests with the same workers"
