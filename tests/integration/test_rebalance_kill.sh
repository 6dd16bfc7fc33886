#!/bin/bash
# SIGKILL one of four workers mid-run (docs/protocol.md "Worker loss and rebalancing"):
# `stampede controller` and four `stampede worker --once` against a fixed-mode mock (TTFT 50 ms,
# ITL 10 ms, 40 tokens: 0.44 s a request), concurrency 8 (2 slots a worker), 14 s by duration,
# default heartbeats (1 s x 3). Checked:
#  - the controller declares the victim lost ("worker victim lost") and hands its 2 slots to the
#    survivors at once ("taken over by 3 workers");
#  - the survivors' total in flight, the mock's running gauge, is back at the target 8 (three
#    polls in a row) within 3 s of that line, having dropped below it after the kill;
#  - the run completes by its duration: exit 0, valid, not partial; results.json says degraded,
#    the victim's loss (from/to, taken over), the lost sessions by number (its 2 in flight), and
#    load_held dips to 6 and comes back to 8; the table's label says "held 6 for";
#  - everything the victim delivered before the kill counts: the mock completed N requests for
#    it, its records merged are whole ok requests, and at most its 2 slots' last batch (a request
#    that ended within the ~50 ms before the kill) is missing;
#  - no session index runs twice (requests.jsonl: every (session, node) once).
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 50 --itl-ms 10
start_run_on_mock k 4 20 --trace seed=5 output_tokens=40 concurrency=8 duration=14s
start_once_workers alive1 alive2 victim alive3
wait_workers_ready
wait_run_reaches "$WORK/ctl.err" 15 3
running=$(mock_metric vllm:num_requests_running)
[ "${running%.*}" -ge 6 ] || fail "no full load before the kill (running = $running)"
kill -KILL "${WORKER_PIDS[2]}"

# The gauge drops (the victim's connections closed), then comes back once its share is taken over.
dropped=0
for ((i = 0; i < 40; i++)); do
    r=$(mock_metric vllm:num_requests_running)
    [ "${r%.*}" -lt 8 ] && { dropped=1; break; }
    sleep 0.05
done
[ "$dropped" = 1 ] || fail "the mock's running gauge never dropped below 8 after the kill"
wait_log_says "$WORK/ctl.err" 10 "worker victim lost: .*" \
    "the controller did not declare the victim lost within 10 s"
lost_at=$(date +%s%N)
grep -q "victim's share .* taken over by 3 workers" "$WORK/ctl.err" ||
    fail "the victim's share was not taken over: $(grep -v '^\[' "$WORK/ctl.err")"
full=0
for ((i = 0; i < 60 && full < 3; i++)); do
    r=$(mock_metric vllm:num_requests_running)
    if [ "${r%.*}" = 8 ]; then full=$((full + 1)); else full=0; fi
    [ "$full" = 1 ] && back_at=$(date +%s%N)
    sleep 0.05
done
[ "$full" -ge 3 ] || fail "the survivors' in-flight total did not return to 8 (last $r)"
back_ms=$(((back_at - lost_at) / 1000000))
[ "$back_ms" -le 3000 ] || fail "in flight back at the target $back_ms ms after the loss (> 3 s)"

wait_controller_ok 30
assert_exit_0 survivor 15 "${WORKER_PIDS[0]}" "${WORKER_PIDS[1]}" "${WORKER_PIDS[3]}"
sleep 0.5
length_total=$(mock_metric vllm:request_success_total 'finished_reason="length"')
grep -q "held 6 for" "$WORK/ctl.err.out" || fail "the table's label does not show the load held: $(head -3 "$WORK/ctl.err.out")"
grep -q "Worker lost: victim" "$WORK/ctl.err.out" || fail "the table does not report the loss"

check_results "$WORK/out" "$WORK/ctl.err" "$WORK" "$length_total" <<'PY'
ctl_log, work = argv[:2]
length_total = int(float(argv[2]))
loss = whole_run_degraded_by_victim()
assert results["run"]["stop_reason"] == "duration reached", results["run"]["stop_reason"]
assert abs(loss["share"] - 0.25) < 1e-9, loss
assert loss["to_s"] - loss["from_s"] < 6, loss
assert 1 <= loss["lost_sessions"] <= 2, f"lost sessions {loss['lost_sessions']}, expected its 2 in flight"
assert level["lost_sessions"] == loss["lost_sessions"]
held = [s["concurrency"] for s in level["load_held"]]
assert held == [8, 6, 8], level["load_held"]
assert "held 6 for" in level["label"], level["label"]

names, by = rows_by_worker_name(ctl_log)
assert_each_session_once(lambda r: (r["session"], r["node"]), "session/node")
survivors_ok = 0
for w in ("alive1", "alive2", "alive3"):
    announced = re.findall(r"finished: (\d+) requests", open(f"{work}/{w}.err").read())
    assert announced and len(by[w]) == int(announced[0]), (w, len(by[w]), announced)
    survivors_ok += sum(r["error"] == "none" for r in by[w])
took = sum("took over" in open(f"{work}/{w}.err").read() for w in ("alive1", "alive2", "alive3"))
assert took == 2, f"{took} survivors took a slot over, expected 2 (one slot each)"
delivered = by["victim"]
assert len(delivered) >= 6, f"the victim delivered only {len(delivered)} records in its ~3 s"
assert all(r["error"] == "none" and r["output_tokens"] == 40 for r in delivered)
victim_completed = length_total - survivors_ok
assert len(delivered) <= victim_completed <= len(delivered) + 2, (
    f"the mock completed {victim_completed} requests of the victim, {len(delivered)} were merged")
print(f"victim: {len(delivered)} merged of {victim_completed} completed, {loss['lost_sessions']} "
      f"sessions lost; degraded {loss['from_s']:.1f}-{loss['to_s']:.1f} s")
PY
echo "ok: in flight back at 8 within $back_ms ms of the loss; degraded, valid, nothing duplicated"
