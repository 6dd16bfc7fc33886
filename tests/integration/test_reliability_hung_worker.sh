#!/bin/bash
# A worker that hangs (SIGSTOP: its TCP connections stay open, it just stops answering) in a
# request-bounded run of `stampede controller` with three `stampede worker --once` against a
# fixed-mode mock (TTFT 50 ms, ITL 10 ms, 30 tokens: 0.34 s a request; max_requests 120, 40 per
# worker, concurrency 6: the healthy workers finish after ~7 s). The hang starts at ~4 s, so the
# survivors are done before the controller can give up on the hung one: only the loss detection
# can end the run. docs/protocol.md promises:
#  - the controller marks it lost by name ("worker victim lost") within 10 s of the hang (5 s
#    without a message, plus slack) and ends the run by itself: exit 0 within 20 s of the hang;
#  - results.json is partial with a reason naming the victim; the survivors' 40 requests each are
#    all merged, ok, equal to what they announced, and they are released (exit 0); the victim's
#    records merged before its hang are whole ok requests, and the total is below 120;
#  - when the hung worker wakes up (SIGCONT) after its controller is gone (silent for 5+ s), it
#    stops its load at once: it says "no word from the controller", it sends at most 2 new
#    requests (one per slot, while the wake-up's first events are handled), and within 5 s the
#    mock has no request running (three polls in a row) and generates no token over 1.5 s.
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 50 --itl-ms 10
arrivals() { # requests the mock has seen: finished (for any reason) plus running
    local finished running
    finished=$(mock_metric vllm:request_success_total)
    running=$(mock_metric vllm:num_requests_running)
    echo $((${finished%.*} + ${running%.*}))
}
write_workload "$WORK/h.yaml" seed=8 ignore_eos=true endpoints="[$MOCK_URL]" output_tokens=30 \
    concurrency=6 max_requests=120
start_controller "$WORK/ctl.err" "$WORK/h.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 3 \
    --out "$WORK/out" --trace --register-timeout 20
start_survivors_and_victim
# A stopped process cannot act on the cleanup's SIGTERM: wake it first, whatever fails.
trap 'kill -CONT "$VICTIM" 2>/dev/null; cleanup' EXIT
wait_run_reaches "$WORK/ctl.err" 15 4
kill -STOP "$VICTIM"
hung=$(date +%s%N)
assert_victim_lost "$hung" 20 hung
for w in alive1 alive2; do
    pid_var=${w^^}
    wait_exit "${!pid_var}" 15
    assert_equal "$w exit status" "$EXIT_STATUS" 0
done
check_results "$WORK/out" "$WORK/ctl.err" "$WORK" <<'PY'
ctl_log, work = argv
names, by = rows_by_worker_name(ctl_log)
for w in ("alive1", "alive2"):
    announced = re.findall(r"finished: (\d+) requests", open(f"{work}/{w}.err").read())
    assert announced and int(announced[0]) == 40, f"{w} announced {announced}, expected 40 requests"
    assert len(by[w]) == 40, f"{w}: {len(by[w])} records merged, expected 40"
    assert all(r["error"] == "none" for r in by[w]), f"{w}: a request failed against a healthy mock"
victim = by["victim"]
assert 4 <= len(victim) < 40, f"victim: {len(victim)} records merged, expected some of its 40"
assert all(r["error"] == "none" and len(r["chunks_us"]) == 30 for r in victim), "victim: a partial record"
assert level["requests_ok"] == 80 + len(victim) == len(rows), (level["requests_ok"], len(victim), len(rows))
print(f"survivors 40 + 40, victim {len(victim)} merged before it hung")
PY

before=$(arrivals)
kill -CONT "$VICTIM"
woke=$(date +%s%N)
wait_for_line "$WORK/victim.err" 10 "no word from the controller" >/dev/null ||
    fail "the woken worker did not notice that its controller is gone: $(cat "$WORK/victim.err")"
wait_mock_idle 5 || fail "the woken worker still has requests running on the mock 5 s later"
stopped_ms=$((($(date +%s%N) - woke) / 1000000))
assert_no_tokens_for_1_5_s "tokens generated after the woken worker stopped"
# Its controller went silent 5+ s before the wake-up: at most the two requests its two slots may
# start while the wake-up's first events are handled, not a further share of a run nobody counts.
orphaned=$(($(arrivals) - before))
[ "$orphaned" -le 2 ] ||
    fail "the woken worker sent $orphaned requests after its controller was gone (at most 2 allowed): $(grep -v '^\[' "$WORK/victim.err")"
echo "ok: hung worker lost after $NOTICED_MS ms, run ended $ENDED_MS ms after the hang;" \
    "woken without a controller: $orphaned requests sent, no load $stopped_ms ms later"
