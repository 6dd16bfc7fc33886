#!/bin/bash
# A worker that dies mid-run (SIGKILL), with `stampede controller` and three `stampede worker
# --once` against a fixed-mode mock (TTFT 50 ms, ITL 10 ms, 40 tokens: 0.44 s a request), a
# 10 s duration-bounded run, concurrency 6 (2 per worker). docs/protocol.md promises:
#  - the controller notices: "worker victim lost: ..." on stderr within 10 s of the kill (3 s
#    without a heartbeat, fleet.heartbeat x fleet.liveness, plus slack for a busy machine), and
#    hands its 2 slots to the two survivors (one each);
#  - the run ends by its duration: the controller exits within 25 s of the kill, status 0 (its
#    share was taken over: the run is valid, not partial, but degraded over the loss);
#  - results.json names the victim's loss, taken over, with its unfinished sessions counted; the
#    table's label says the load held ("concurrency 6 (held 4 for ...)");
#  - what the dead worker delivered counts: its records in the trace are whole (all ok), and they
#    are every request it completed except at most one per slot (2): the mock completed
#    length_total requests, the survivors account for theirs, the rest were the victim's, and only
#    a request that ended within the last ~50 ms batch period before the kill may be missing;
#  - the survivors' requests are complete: for each, the records merged equal the records it
#    announced ("finished: N requests"), all ok, and it was released (exit 0);
#  - the dead worker's load stops: after the run the mock has no request running, generates no
#    token over 1.5 s, and aborted at most the victim's 2 in-flight requests (plus any the run's
#    end cancelled).
# ctest: parallel (its bounds are seconds: loss declared within 10 s, no worker lost over a 3 s liveness)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 50 --itl-ms 10
write_workload "$WORK/d.yaml" seed=4 ignore_eos=true endpoints="[$MOCK_URL]" output_tokens=40 \
    concurrency=6 duration=10s
start_controller "$WORK/ctl.err" "$WORK/d.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 3 \
    --out "$WORK/out" --trace --register-timeout 20
start_survivors_and_victim
wait_run_reaches "$WORK/ctl.err" 15 3
running=$(mock_metric vllm:num_requests_running)
[ "${running%.*}" -ge 1 ] || fail "no load before the kill (running = $running)"
kill -KILL "$VICTIM"
killed=$(date +%s%N)

assert_victim_lost "$killed" 25 dead
assert_equal "level partial" "$(json_value "$R" 'l["partial"]')" False
assert_equal "stop_reason" "$(json_value "$R" 'r["run"]["stop_reason"]')" "duration reached"
grep -q "concurrency 6 (held 4 for" "$WORK/ctl.err.out" ||
    fail "the table's label does not show the load held: $(grep 'stampede results' "$WORK/ctl.err.out")"
grep -q "records announced" "$WORK/ctl.err" && fail "controller reports missing records: $(cat "$WORK/ctl.err")"

for w in alive1 alive2; do
    pid_var=${w^^}
    wait_exit "${!pid_var}" 15
    assert_equal "$w exit status" "$EXIT_STATUS" 0
    grep -q "released by the controller" "$WORK/$w.err" || fail "$w was not released: $(tail -3 "$WORK/$w.err")"
done

# Let the mock settle, then read its counters once.
sleep 0.5
assert_equal "requests running on the mock after the run" "$(mock_metric vllm:num_requests_running)" 0
assert_no_tokens_for_1_5_s "tokens generated after the run"
length_total=$(mock_metric vllm:request_success_total 'finished_reason="length"')
aborted=$(mock_metric vllm:request_success_total 'finished_reason="abort"')

check_results "$WORK/out" "$WORK/ctl.err" "$WORK" "$length_total" "$aborted" <<'PY'
ctl_log, work = argv[:2]
length_total, aborted = int(float(argv[2])), int(float(argv[3]))
names, by = rows_by_worker_name(ctl_log)
assert sorted(names.values()) == ["alive1", "alive2", "victim"], names

counted = level["requests_ok"] + level["requests_failed"] + level["requests_cancelled"] + level["requests_warmup"]
assert counted == len(rows), f"results count {counted} requests, the trace {len(rows)}"

survivors_ok = survivors_cancelled = 0
for w in ("alive1", "alive2"):
    announced = re.findall(r"finished: (\d+) requests", open(f"{work}/{w}.err").read())
    assert announced, f"{w} did not announce its records"
    assert len(by[w]) == int(announced[0]), f"{w}: {len(by[w])} records merged, {announced[0]} announced"
    errors = collections.Counter(r["error"] for r in by[w])
    assert set(errors) <= {"none", "cancelled"}, f"{w}: failed requests against a healthy mock: {errors}"
    survivors_ok += errors["none"]
    survivors_cancelled += errors["cancelled"]
    assert errors["none"] >= 30, f"{w}: only {errors['none']} requests ok in a 10 s run at 2 slots"
assert 1 <= level["lost_sessions"] <= 2, f"{level['lost_sessions']} sessions lost, expected 1-2"
keys = collections.Counter(r["session"] for r in rows)
assert max(keys.values()) == 1, "a session ran twice"

delivered = by["victim"]
assert len(delivered) >= 4, f"the victim delivered only {len(delivered)} records in its ~3 s"
assert all(r["error"] == "none" and r["output_tokens"] == 40 for r in delivered), \
    "a record of the victim is not a whole ok request"
victim_completed = length_total - survivors_ok  # requests the mock finished for the victim
slack = 2 + survivors_cancelled  # its 2 slots' last requests; cancelled ones the mock finished
assert len(delivered) <= victim_completed <= len(delivered) + slack, (
    f"the mock completed {victim_completed} requests of the victim, {len(delivered)} were merged "
    f"(at most {slack} may be missing)")
assert aborted <= 2 + survivors_cancelled, f"the mock aborted {aborted} requests (victim in flight: 2)"
print(f"victim: {len(delivered)} records merged of {victim_completed} completed; survivors "
      f"{survivors_ok} ok, {survivors_cancelled} cancelled; mock aborted {aborted}")
PY
echo "ok: dead worker reported after $NOTICED_MS ms, run ended $ENDED_MS ms after the kill, share taken over"
