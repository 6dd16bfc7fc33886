#!/bin/bash
# HTTP phases and latency from the intended start, against truth_server.py (which counts the
# connections it accepted):
#  1. keep-alive, response headers 100 ms late, 12 requests 2 at a time, --trace --http-phases:
#     waiting p50 in [95, 140] ms; tls 0 (plain http); per request, connecting > 0 exactly when the
#     connection was new; connection_reused share = 1 - connections / requests the server saw;
#     the table shows the phases.
#  2. Connection: close on every reply: no request reuses a connection, each one connects.
#  3. rate mode, 20 arrivals/s capped at 1 in flight while each request takes > 100 ms, so the
#     cap makes the schedule slip: ttft_from_intended = ttft + schedule lag (means agree within
#     0.01 ms), E2E likewise, and the table shows the rows from the intended start.
source "$(dirname "$0")/protocol_lib.sh"

# start_server NAME ARGS...: truth_server.py in the background; sets URL.
start_server() {
    start_test_server truth_server.py "$@"
}

# server_stats: the server's {"requests", "connections"} (a GET on a connection of its own).
server_stats() {
    python3 -c "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1] + '/stats', timeout=5).read().decode())" "$URL"
}

# 1. keep-alive, slow headers
start_server keepalive --tokens 5 --gap-ms 5 --header-delay-ms 100
write_workload "$WORK/k.yaml" seed=5 model=truth timeout=20s concurrency=2 max_requests=12
run_bounded 60 "$WORK/k.table" "$WORK/k.err" "$WORK/k.yaml" --workers 1 --target "$URL" \
    --out "$WORK/k.out" --trace --http-phases
assert_equal "keep-alive: exit status" "$RUN_RC" 0
grep -q "^HTTP (ms)" "$WORK/k.table" || fail "no HTTP phases table: $(cat "$WORK/k.table")"
grep -q "^waiting " "$WORK/k.table" || fail "no waiting row in the table"
check_results "$WORK/k.out" "$(server_stats)" <<'PY'
stats = json.loads(argv[0])
assert level["requests_ok"] == 12 and stats["requests"] == 12, (level["requests_ok"], stats)
http = level["http_ms"]
assert set(http) == {"blocked", "dns", "connecting", "tls", "sending", "waiting", "receiving"}, http
w = http["waiting"]["p50"]
assert 95 <= w <= 140, f"waiting p50 {w} ms, the server held the headers 100 ms"
assert http["tls"]["p99"] == 0, f"tls {http['tls']} on plain http"
assert http["receiving"]["p50"] >= 15, f"receiving {http['receiving']}: 5 tokens 5 ms apart"
reused = round(level["connection_reused"] * level["requests_ok"])
assert reused == stats["requests"] - stats["connections"], \
    f"{reused} reused of 12; the server accepted {stats['connections']} connections"
assert stats["connections"] < 12, f"keep-alive: {stats['connections']} connections for 12 requests"
for r in rows:
    ph = r["http_ms"]
    if r["connection_reused"]:
        assert ph["connecting"] == 0 and ph["dns"] == 0, f"reused but connecting: {r}"
    else:
        assert ph["connecting"] > 0, f"a new connection with connecting 0: {r}"
    assert 95 <= ph["waiting"] <= 1000, f"waiting {ph['waiting']} ms"
print(f"keep-alive: waiting p50 {w:.1f} ms, {stats['connections']} connections, "
      f"{reused} of 12 reused")
PY

# 2. Connection: close
start_server close --tokens 3 --gap-ms 2 --close
write_workload "$WORK/c.yaml" seed=5 model=truth timeout=20s concurrency=2 max_requests=8
run_bounded 60 "$WORK/c.table" "$WORK/c.err" "$WORK/c.yaml" --workers 1 --target "$URL" \
    --out "$WORK/c.out" --trace
assert_equal "close: exit status" "$RUN_RC" 0
grep -q "^HTTP (ms)" "$WORK/c.table" && fail "the phases table printed without --http-phases"
check_results "$WORK/c.out" "$(server_stats)" <<'PY'
stats = json.loads(argv[0])
assert stats["connections"] == stats["requests"] == 8, stats
assert level["connection_reused"] == 0, level["connection_reused"]
assert all(not r["connection_reused"] and r["http_ms"]["connecting"] > 0 for r in rows), rows
print("close: 8 requests, 8 connections, none reused")
PY

# 3. rate mode held back by the concurrency cap
start_server rate --tokens 3 --gap-ms 5 --header-delay-ms 100
write_workload "$WORK/r.yaml" seed=6 model=truth timeout=20s output_tokens=3 rate=20/s \
    arrival=constant concurrency=1 max_requests=8
run_bounded 60 "$WORK/r.table" "$WORK/r.err" "$WORK/r.yaml" --workers 1 --target "$URL" \
    --out "$WORK/r.out"
assert_equal "rate: exit status" "$RUN_RC" 0
grep -q "^TTFT intended" "$WORK/r.table" || fail "no TTFT intended row: $(cat "$WORK/r.table")"
grep -q "^E2E intended" "$WORK/r.table" || fail "no E2E intended row"
check_results "$WORK/r.out" <<'PY'
lag = level["schedule_lag_ms"]
assert lag["p99"] > 100, f"schedule lag {lag}: the cap should have held arrivals back"
for m in ("ttft", "e2e"):
    plain, late = level[f"{m}_ms"], level[f"{m}_from_intended_ms"]
    assert late["count"] == plain["count"] == 8, (plain, late)
    assert abs(late["mean"] - (plain["mean"] + lag["mean"])) < 0.01, \
        f"{m} from intended mean {late['mean']} != {plain['mean']} + lag {lag['mean']}"
print(f"rate: lag p99 {lag['p99']:.1f} ms; TTFT mean {level['ttft_ms']['mean']:.1f} ms, "
      f"from intended {level['ttft_from_intended_ms']['mean']:.1f} ms")
PY
echo "ok: HTTP phases, connection reuse and latency from the intended start"
