#!/bin/bash
# The shared-rig guard. A second client hitting the same mock during the run makes the server
# finish markedly more requests than the run sent: the run is invalid (exit 3) and its validity
# says someone else is using this server. A mock restarted mid-run (killed and started again on
# the same port) makes its counters go backwards between two periodic scrapes: the run is
# invalid and its validity says the server restarted. A run alone on its mock stays valid (the
# mock-deltas test checks that).
# In a two-level sweep whose second level alone is hit by a second client, that level's validity
# names it, and the first level's stays valid.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

write_run() { # name
    cat >"$WORK/$1.yaml" <<YAML
target: {endpoints: [$MOCK_URL], ignore_eos: true, timeout: 5s}
workload: {kind: requests, input_tokens: 16, output_tokens: 8}
scheduler: {kind: concurrent, concurrency: 2}
limits: {duration: 4s}
server_metrics: auto
scrape_interval: 200ms
YAML
}

start_run() { # name: `stampede run` in the background; RUN_PID, once its start is announced
    timeout 60 "$STAMPEDE" run "$WORK/$1.yaml" --workers 1 --out "$WORK/$1" \
        >"$WORK/$1.out" 2>"$WORK/$1.err" &
    RUN_PID=$!
    BACKGROUND+=($RUN_PID)
    wait_for_line "$WORK/$1.err" 20 'start in' >/dev/null || fail "$1 did not start: $(cat "$WORK/$1.err")"
}

assert_invalid() { # name bound: the run in the background (RUN_PID) exits 3 within bound seconds
    wait_exit "$RUN_PID" "$2"
    [ "$EXIT_STATUS" = 3 ] || fail "$1: exit $EXIT_STATUS, expected 3 (invalid): $(tail -5 "$WORK/$1.err")"
}

# 1. someone else's requests during the run
start_mock --ttft-ms 10 --itl-ms 2
write_run shared
start_run shared
sleep 1
someone_else "$MOCK_URL"
assert_invalid shared 30
check_results "$WORK/shared" <<'PY' || fail "the second client went unnoticed"
v = results["validity"]
assert not v["valid"], v
why = [r for r in v["reasons"] if r.startswith("someone else is using this server")]
assert len(why) == 1, v["reasons"]
g = level["server"]["guard"]
assert g["shared"] and g["shared_reason"] == why[0] and not g["restarted"], g
p = level["server"]["pages"][0]
# the server finished the run's requests and the other client's (120 sent; a loaded machine may
# finish some after the window's end)
assert p["requests"] >= level["gap"]["endpoints"][0]["requests"]["client"] + 60, p["requests"]
PY
grep -q 'someone else is using this server' "$WORK/shared.out" || fail "the table does not say so"

# 2. the mock restarts mid-run on the same port
start_mock --ttft-ms 10 --itl-ms 2
MOCK_PID=${BACKGROUND[-1]}
PORT=${MOCK_URL##*:}
write_run restart
start_run restart
sleep 1.5
kill "$MOCK_PID"
wait "$MOCK_PID" 2>/dev/null || true
"$STAMPEDE" mock --port "$PORT" --ttft-ms 10 --itl-ms 2 >"$WORK/mock2.out" 2>&1 &
BACKGROUND+=($!)
wait_for_line "$WORK/mock2.out" 10 'listening on' >/dev/null || fail "the mock did not restart: $(cat "$WORK/mock2.out")"
assert_invalid restart 30
check_results "$WORK/restart" <<'PY' || fail "the restart went unnoticed"
v = results["validity"]
why = [r for r in v["reasons"] if r.startswith("the server restarted during the run")]
assert not v["valid"] and len(why) == 1, v["reasons"]
assert "went from" in why[0], why[0]
assert level["server"]["guard"]["restarted"], level["server"]["guard"]
PY
# 3. a sweep: the second client comes during the second level only. That level's validity names
# it; the first level, alone on the server, stays valid.
start_mock --ttft-ms 10 --itl-ms 2
cat >"$WORK/sweep.yaml" <<YAML
target: {endpoints: [$MOCK_URL], ignore_eos: true, timeout: 5s}
workload: {kind: requests, input_tokens: 16, output_tokens: 8}
scheduler: {kind: concurrent}
sweep:
  concurrency: [2, 3]
  warmup: 300ms
  snapshots: {count: 1, duration: 3s}
  drain: 2s
server_metrics: auto
scrape_interval: 200ms
validity: {max_schedule_lag: 2s}
YAML
timeout 90 "$STAMPEDE" run "$WORK/sweep.yaml" --workers 1 --out "$WORK/sweep" \
    >"$WORK/sweep.out" 2>"$WORK/sweep.err" &
RUN_PID=$!
BACKGROUND+=($RUN_PID)
wait_for_line "$WORK/sweep.err" 60 'level 2/2 concurrency 3 rep 1/1 \| snapshot 1/1' >/dev/null ||
    fail "the sweep's second level did not start: $(tail -5 "$WORK/sweep.err")"
someone_else "$MOCK_URL"
assert_invalid sweep 60
check_results "$WORK/sweep" <<'PY' || fail "the sweep did not name the second client in its level"
first, second = results["levels"]
assert first["concurrency"] == 2 and second["concurrency"] == 3
assert first["validity"]["valid"], first["validity"]
assert not any("someone else" in r for r in first["validity"]["reasons"]), first["validity"]
why = [r for r in second["validity"]["reasons"] if "someone else is using this server" in r]
assert not second["validity"]["valid"] and why, second["validity"]
assert not results["validity"]["valid"], results["validity"]
print("ok: the second level's validity:", why[0])
PY
echo "PASS"
