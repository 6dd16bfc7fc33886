#!/bin/bash
# A worker that hangs (SIGSTOP: its TCP connections stay open, it just stops answering) in a
# request-bounded run of `stampede controller` with three `stampede worker --once` against a
# fixed-mode mock (TTFT 50 ms, ITL 10 ms, 30 tokens: 0.34 s a request; max_requests 240, 80 per
# worker, concurrency 6: the healthy workers would finish after ~14 s). The hang starts at ~4 s.
# docs/protocol.md promises:
#  - the controller marks it lost by name ("worker victim lost") within 10 s of the hang (3 s
#    without a message, plus slack), gives its 2 slots to the survivors (still running), and the
#    run ends by its limit: exit 0 within 30 s of the hang, valid, not partial, degraded;
#  - the survivors' requests are all merged, ok, equal to what they announced, and they are
#    released (exit 0); the victim's records merged before its hang are whole ok requests; no
#    request ordinal or session runs twice and none is past max_requests;
#  - when the hung worker wakes up (SIGCONT) after its controller is gone, it stops its load at
#    once: it drops the run it was told to drop, or notices the silent controller, it sends at
#    most 2 new requests (one per slot, while the wake-up's first events are handled), and within
#    5 s the mock has no request running (three polls in a row) and generates no token over 1.5 s.
# ctest: parallel (its bounds are seconds: loss declared within 10 s, no worker lost over a 3 s liveness)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 50 --itl-ms 10
arrivals() { # requests the mock has seen: finished (for any reason) plus running
    local finished running
    finished=$(mock_metric vllm:request_success_total)
    running=$(mock_metric vllm:num_requests_running)
    echo $((${finished%.*} + ${running%.*}))
}
write_workload "$WORK/h.yaml" seed=8 ignore_eos=true endpoints="[$MOCK_URL]" output_tokens=30 \
    concurrency=6 max_requests=240
start_controller "$WORK/ctl.err" "$WORK/h.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 3 \
    --out "$WORK/out" --trace --register-timeout 20
start_survivors_and_victim
wait_run_reaches "$WORK/ctl.err" 15 4
stop_victim
hung=$(date +%s%N)
assert_victim_lost "$hung" 30 hung
# Between its silence and its loss the live line left its stale in-flight count out, saying so.
grep -Eq "in flight [0-9]+ \(1 worker silent\)" "$WORK/ctl.err" ||
    fail "the live line never named the silent worker: $(grep -E 'in flight' "$WORK/ctl.err" | tail -5)"
for w in alive1 alive2; do
    pid_var=${w^^}
    wait_exit "${!pid_var}" 15
    assert_equal "$w exit status" "$EXIT_STATUS" 0
done
check_results "$WORK/out" "$WORK/ctl.err" "$WORK" <<'PY'
ctl_log, work = argv
names, by = rows_by_worker_name(ctl_log)
survivors = 0
for w in ("alive1", "alive2"):
    announced = re.findall(r"finished: (\d+) requests", open(f"{work}/{w}.err").read())
    assert announced and len(by[w]) == int(announced[0]), f"{w}: {len(by[w])} merged, announced {announced}"
    assert len(by[w]) > 80, f"{w}: {len(by[w])} requests, expected its 80 and a share of the victim's"
    assert all(r["error"] == "none" for r in by[w]), f"{w}: a request failed against a healthy mock"
    survivors += len(by[w])
victim = by["victim"]
assert 4 <= len(victim) < 80, f"victim: {len(victim)} records merged, expected some of its 80"
assert all(r["error"] == "none" and r["output_tokens"] == 30 for r in victim), "victim: a partial record"
assert level["requests_ok"] == survivors + len(victim) == len(rows), (level["requests_ok"], len(rows))
ids = collections.Counter(r["request_id"] for r in rows)
assert max(ids.values()) == 1 and max(ids) < 240, "a request ordinal ran twice, or past max_requests"
print(f"survivors {survivors}, victim {len(victim)} merged before it hung, {240 - len(rows)} "
      "ordinals lost or skipped at the handover")
PY

before=$(arrivals)
kill -CONT "$VICTIM"
woke=$(date +%s%N)
wait_for_line "$WORK/victim.err" 10 "no word from the controller|abandoning run" >/dev/null ||
    fail "the woken worker did not notice that its controller is gone: $(cat "$WORK/victim.err")"
wait_mock_idle 5 || fail "the woken worker still has requests running on the mock 5 s later"
stopped_ms=$((($(date +%s%N) - woke) / 1000000))
assert_no_tokens_for_1_5_s "tokens generated after the woken worker stopped"
# Its controller went silent (and told it to drop the run) before the wake-up: at most the two requests its two slots may
# start while the wake-up's first events are handled, not a further share of a run nobody counts.
orphaned=$(($(arrivals) - before))
[ "$orphaned" -le 2 ] ||
    fail "the woken worker sent $orphaned requests after its controller was gone (at most 2 allowed): $(grep -v '^\[' "$WORK/victim.err")"
echo "ok: hung worker lost after $NOTICED_MS ms, run ended $ENDED_MS ms after the hang;" \
    "woken without a controller: $orphaned requests sent, no load $stopped_ms ms later"
