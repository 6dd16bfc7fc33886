#!/bin/bash
# scheduler.kind: sequential runs one session at a time over the whole fleet: with 1 worker and
# with 3, no two sessions' [first send, last end] intervals overlap in the trace, every request
# runs on worker 0, and the workload digest is the same. Sessions are 3-turn chats with 30 ms
# think times, so a session is idle between its turns: a scheduler that started the next session
# early (or one per worker) would overlap there.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 5
cat >"$WORK/seq.yaml" <<YAML
seed: 5
target:
  endpoints: [$MOCK_URL]
  ignore_eos: true
workload:
  kind: chat
  turns: 3
  input_tokens: {dist: uniform, min: 8, max: 40}
  output_tokens: 6
  think_time: 30ms
scheduler:
  kind: sequential
limits:
  max_sessions: 10
YAML

for n in 1 3; do
    run_bounded 120 /dev/null "$WORK/run$n.err" "$WORK/seq.yaml" --workers $n --trace \
        --out "$WORK/out$n"
    [ "$RUN_RC" = 0 ] || fail "run with $n workers exited $RUN_RC: $(tail -5 "$WORK/run$n.err")"
    check_results "$WORK/out$n" "$n" <<'PY' || fail "sessions overlap or ran off worker 0 with $n workers"
workers = int(argv[0])
assert level["sessions_completed"] == 10, level["sessions_completed"]
assert len(rows) == 30, len(rows)
assert all(r["worker"] == 0 for r in rows), sorted(set(r["worker"] for r in rows))
assert all(r["status"] == 200 for r in rows), [r["status"] for r in rows]
spans = {}
for r in rows:
    lo, hi = spans.get(r["session"], (r["send_us"], r["end_us"]))
    spans[r["session"]] = (min(lo, r["send_us"]), max(hi, r["end_us"]))
order = sorted(spans.items(), key=lambda kv: kv[1][0])
assert [s for s, _ in order] == sorted(spans), order  # sessions start in index order
for (a, (_, a_end)), (b, (b_start, _)) in zip(order, order[1:]):
    assert b_start >= a_end, f"session {b} sent at {b_start} us before session {a} ended at {a_end} us"
if workers > 1:
    starts = [w["window_session_starts"] for w in results["workers"]]
    assert len(starts) == workers and starts[0] == 10 and starts[1:] == [0] * (workers - 1), starts
PY
done
d1=$(json_value "$WORK/out1/results.json" 'l["workload_digest"]')
d3=$(json_value "$WORK/out3/results.json" 'l["workload_digest"]')
[ -n "$d1" ] && [ "$d1" != "None" ] || fail "no workload_digest in results.json"
assert_equal "workload digest, 3 workers vs 1" "$d3" "$d1"
echo "ok: 10 sequential sessions, none overlapping, all on worker 0 with 1 and 3 workers; digest $d1"
