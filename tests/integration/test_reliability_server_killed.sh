#!/bin/bash
# The server dies mid-run: `stampede run --workers 2 --trace` against a fixed-mode mock (TTFT
# 5 ms, ITL 10 ms, 50 tokens: 0.5 s a request, concurrency 4 with the slots started 0.25 s apart
# so that they are at different points of their streams, max_requests 300), and the mock is
# SIGKILLed after ~2 s. Asserted:
#  - the run ends by itself within 20 s of the kill: the endpoint failed every request for
#    limits.endpoint_dead_after (10 s), so the circuit breaker stops it, exit 3 (invalid), the
#    reason naming the endpoint and the last error; no worker lost, results partial (the level
#    did not reach its limit) with the breaker as the reason;
#  - every request is accounted for: ok + the hang-up classes + refused + cancelled = the trace's
#    rows (trace and results.json), fewer than 300, no other class;
#  - the streams the kill cut are reset_mid_stream (or truncated_json): 1 to 4 with an HTTP 200
#    head (the 4 in flight), at least one of them after having received chunks; any request the
#    dying server accepted and dropped before answering has status 0 (refused when reset,
#    reset_before_headers when closed);
#  - the requests after the kill are refused (ECONNREFUSED), tried with a back-off doubling from
#    10 ms to 1 s (no connect storm against a server that may be restarting);
#  - the ok requests before it are whole (50 tokens each), at least 8 of them.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 10
MOCK_PID=${BACKGROUND[-1]}
write_workload "$WORK/k.yaml" seed=3 ignore_eos=true output_tokens=50 concurrency=4 ramp_up=1s \
    max_requests=300
"$STAMPEDE" run "$WORK/k.yaml" --workers 2 --target "$MOCK_URL" --out "$WORK/out" --trace \
    >"$WORK/table" 2>"$WORK/run.err" &
RUN=$!
BACKGROUND+=($RUN)
wait_run_reaches "$WORK/run.err" 30 2
kill -KILL "$MOCK_PID"
killed=$(date +%s%N)
wait_exit "$RUN" 20
ended_ms=$((($(date +%s%N) - killed) / 1000000))
[ "$EXIT_STATUS" != timeout ] || fail "the run did not end within 20 s of the server's death"
assert_equal "exit status" "$EXIT_STATUS" 3
[ "$ended_ms" -ge 9000 ] || fail "the run ended $ended_ms ms after the kill, before endpoint_dead_after"
grep -q "stopped by the circuit breaker: every request to $MOCK_URL failed for [0-9.]* s (limits.endpoint_dead_after 10 s); the last: refused" \
    "$WORK/table" || fail "the table does not say why the run stopped: $(grep -A3 INVALID "$WORK/table")"
grep -q "lost" "$WORK/run.err" && fail "a worker was lost: $(grep lost "$WORK/run.err")"

check_results "$WORK/out" <<'PY'
assert 0 < len(rows) < 300, f"{len(rows)} trace lines, expected fewer than 300 (stopped early)"
classes = collections.Counter(row["error"] for row in rows)
hangups = {"reset_mid_stream", "truncated_json", "reset_before_headers"}
assert set(classes) <= {"none", "refused", "cancelled"} | hangups, f"unexpected classes: {classes}"
errors = level["errors"]
assert all(errors[c] == classes[c] for c in hangups | {"refused"}), (errors, classes)
assert level["requests_ok"] == classes["none"], level
assert level["requests_failed"] == len(rows) - classes["none"] - classes["cancelled"], level
# stopped before its limit by the breaker: the level did not finish, and says why
assert results["partial"] and "circuit breaker" in level.get("partial_reason", ""), \
    (results["partial"], level.get("partial_reason"))
incomplete = [row for row in rows if row["error"] in hangups or
              (row["error"] == "refused" and "before any response byte" in row["error_message"])]
cut = [row for row in incomplete if row["status"] == 200]
assert all(row["error"] in ("reset_mid_stream", "truncated_json") for row in cut), cut
assert 1 <= len(cut) <= 4, f"{len(cut)} streams with a 200 head cut, expected the 4 in flight (1 to 4)"
assert any(len(row["chunks_us"]) > 0 for row in cut), "no cut stream had received chunks"
for row in incomplete:
    if row["status"] != 200:
        assert row["status"] == 0 and row["error"] in ("refused", "reset_before_headers"), row
refused = [row for row in rows if row["error"] == "refused" and row not in incomplete]
assert refused, "no refused connection after the server died"
# ECONNREFUSED, or a connection that reached the dying server's listen backlog and was reset
# with it ("Connection reset by peer" on connect): both end in class refused
said = [(row["error_message"] or "").lower() for row in refused]
assert all("refused" in m or "reset by peer" in m for m in said), [m for m in said if "refused" not in m]
ok = [row for row in rows if row["error"] == "none"]
assert len(ok) >= 8, f"only {len(ok)} requests ok before the kill"
# tokens, not chunks: a loaded loop reads several tokens in one wake-up, which makes one chunk
assert all(sum(row.get("chunk_tokens") or [1] * len(row["chunks_us"])) == 50 for row in ok), \
    "an ok request is not whole"
# Each slot pauses 10 ms, doubling to 1 s, after a connect error: over the connect errors' span
# (about 10 s), the 4 slots' pauses add up to 10+20+...+640 ms, then 1 s each, so they cannot have
# tried more than 4 x (8 + the span's whole seconds) times (without the pause a dead loopback port
# is retried tens of thousands of times a second).
sends = sorted(row["send_us"] for row in refused)
span_s = (sends[-1] - sends[0]) / 1e6 if len(sends) > 1 else 0
assert len(refused) <= 4 * (8 + span_s + 1), f"{len(refused)} connect attempts in {span_s:.3f} s: no back-off"
print(f"ok {len(ok)}, hung up {len(incomplete)} ({len(cut)} cut streams), refused {len(refused)} over {span_s:.2f} s")
PY
echo "ok: server killed mid-run: cut streams reset_mid_stream, later requests refused, run ended $ended_ms ms after the kill"
