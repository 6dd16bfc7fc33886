#!/bin/bash
# Streams that end badly in ways the mock cannot produce, from reliability_server.py (a scripted
# server; request k gets mode k mod 7, each mode with its own number of token chunks), through
# `stampede run --workers 2 --trace`, 70 requests, concurrency 4:
#   ok (4 chunks, [DONE])                               -> ok
#   finish_nodone (5 chunks, finish_reason, no [DONE])  -> ok (docs/metrics.md: incomplete is
#                                                          "ended before [DONE]/finish_reason")
#   nodone (1 chunk, clean end, no finish, no [DONE])   -> no_done
#   fin (2 chunks, then FIN mid-body)                   -> reset_mid_stream
#   midchunk (3 chunks, half a chunk, FIN)              -> truncated_json
#   empty (request read, connection closed, no byte)    -> reset_before_headers
#   error_event (6 chunks, an error event in the 200)   -> server_error_event, its message quoted
# Asserted: for every mode, the trace holds exactly as many requests with that class and that
# chunk count as the server served in that mode (10 each); results.json counts ok 20,
# reset_mid_stream, truncated_json and reset_before_headers 10 each, no_done 10, server_error_event 10, nothing else; latencies come from the ok requests only (TTFT count
# 20); the run exits 0 (requests succeeded) with no worker lost and results not partial.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_test_server reliability_server.py scripted \
    --plan ok,finish_nodone,nodone,fin,midchunk,empty,error_event

write_workload "$WORK/h.yaml" seed=2 model=rel timeout=10s concurrency=4 max_requests=70
run_bounded 60 "$WORK/table" "$WORK/run.err" "$WORK/h.yaml" --workers 2 --target "$URL" \
    --out "$WORK/out" --trace
assert_equal "exit status" "$RUN_RC" 0
grep -q "lost" "$WORK/run.err" && fail "a worker was lost: $(grep lost "$WORK/run.err")"
curl -s --max-time 5 "$URL/counts" >"$WORK/counts.json" || fail "the scripted server does not answer"

check_results "$WORK/out" "$WORK/counts.json" <<'PY'
counts = json.load(open(argv[0]))
expected = {  # mode: (class, tokens)
    "ok": ("none", 4), "finish_nodone": ("none", 5), "nodone": ("no_done", 1),
    "fin": ("reset_mid_stream", 2), "midchunk": ("truncated_json", 3),
    "empty": ("reset_before_headers", 0),
    "error_event": ("server_error_event", 6),
}
problems = []
assert sum(counts.values()) == 70 and len(rows) == 70, f"served {counts}, {len(rows)} trace lines, expected 70"
# tokens, not chunks: the server writes its events back to back, and events that arrive in one
# read are one chunk of several tokens
seen = collections.Counter(
    (row["error"], sum(row.get("chunk_tokens") or [1] * len(row["chunks_us"] or []))) for row in rows)
for mode, (cls, chunks) in expected.items():
    if counts[mode] != 10:
        problems.append(f"server served {counts[mode]} '{mode}' requests, expected 10")
    if seen[(cls, chunks)] != counts[mode]:
        got = {k: v for k, v in seen.items() if k[1] == chunks}
        problems.append(f"mode '{mode}' ({counts[mode]} served): expected class {cls} with {chunks} "
                        f"tokens, the trace has {got}")
bad = [row for row in rows if row["error"] == "server_error_event" and "engine core died" not in (row["error_message"] or "")]
if bad:
    problems.append(f"protocol errors without the server's message: {bad[0]['error_message']!r}")
want = {cls: 0 for cls in level["errors"]}
want.update(reset_mid_stream=10, truncated_json=10, reset_before_headers=10,
            server_error_event=10, no_done=10)
if level["errors"] != want:
    problems.append(f"errors {level['errors']}, expected {want}")
for key, value in (("requests_ok", 20), ("requests_failed", 50), ("requests_cancelled", 0)):
    if level[key] != value:
        problems.append(f"{key} = {level[key]}, expected {value}")
if level["ttft_ms"]["count"] != 20:
    problems.append(f"TTFT count {level['ttft_ms']['count']}, expected 20 (ok requests only)")
if results["partial"]:
    problems.append("results marked partial")
assert not problems, "\n".join(problems)
print("per mode (class, tokens):", dict(seen))
PY
echo "ok: each way of hanging up in its own class, the error event as server_error_event, the rest ok"
