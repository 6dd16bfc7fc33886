#!/bin/bash
# A metrics endpoint that accepts connections and never answers never stalls the run: the load
# (a fixed 2 s duration against a mock) runs its course, the page is reported with its timeout
# (null figures, the reason), the end of the run waits for it at most the scrape timeout (2 s),
# and the run stays valid. A closed port is the same, without waiting.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 2
start_test_server metrics_fixture_server.py hang hang
HANG=$URL
cat >"$WORK/hang.yaml" <<YAML
target: {endpoints: [$MOCK_URL], ignore_eos: true}
workload: {kind: requests, input_tokens: 16, output_tokens: 8}
scheduler: {kind: concurrent, concurrency: 2}
limits: {duration: 2s}
server_metrics: [$HANG/metrics]
gpu_metrics: [http://127.0.0.1:1/metrics]
scrape_interval: 200ms
YAML
started=$(date +%s%N)
run_bounded 60 "$WORK/hang.out" "$WORK/hang.err" "$WORK/hang.yaml" --workers 1 --out "$WORK/hang"
elapsed_ms=$((($(date +%s%N) - started) / 1000000))
[ "$RUN_RC" = 0 ] || fail "run exited $RUN_RC: $(tail -5 "$WORK/hang.err")"
# 2 s of load, the start lead and the worker's start-up, and at most 2.5 s waiting for the last
# marks; a run that waited on the page at each of its ~10 periodic scrapes would take 20 s more
[ "$elapsed_ms" -lt 12000 ] || fail "the run took $elapsed_ms ms: the dead page held it"
# the controller's loop never waited on the page: no stall said, the live line kept its pace, the
# worker was never taken for lost
! grep -q 'stalled' "$WORK/hang.err" || fail "the controller stalled: $(grep stalled "$WORK/hang.err")"
grep -Eq '\] [12]\.[0-9] s( of [0-9]+ s)? \|' "$WORK/hang.err" || fail "no live line during the run: $(cat "$WORK/hang.err")"
grep -q "cannot read $HANG/metrics: timed out after 2000 ms" "$WORK/hang.err" ||
    fail "the dead page was not named: $(cat "$WORK/hang.err")"
check_results "$WORK/hang" <<'PY' || fail "the dead page's figures are wrong"
s = level["server"]
p = s["pages"][0]
assert "timed out after 2000 ms" in p["error"], p["error"]
assert p["requests"] is None and p["ttft"] is None and p["dialect"] is None, p
assert s["gpu"]["pages"][0]["error"] is not None and s["gpu"]["energy_j"] is None, s["gpu"]
# the load ran its 2 s: the client's figures are there
assert level["requests_ok"] > 20, level["requests_ok"]
assert not results["workers"][0]["lost"], results["workers"]
assert results["validity"]["valid"], results["validity"]
PY
echo "PASS"
