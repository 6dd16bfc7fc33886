#!/bin/bash
# The Veeksha write-up's synthetic multi-turn spec runs unchanged with --target
# (docs/workloads.md, "Veeksha files"): the spec part of examples/veeksha-multiturn.yaml
# (everything before its stampede `mock:` section) against a mock, one session at a time, 5
# sessions of 110-150 turns whose prompts grow turn by turn with 400-600 fresh tokens and ask for
# 150-250 output tokens. A misspelt key is refused naming the file, line and key.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

example="$(dirname "$0")/../../examples/veeksha-multiturn.yaml"
sed '/^mock:/,$d' "$example" >"$WORK/veeksha.yaml"
grep -q '^session_generator:' "$WORK/veeksha.yaml" || fail "no spec in $example"
start_mock --ttft-ms 0 --itl-ms 0 --max-model-len 131072
run_bounded 120 /dev/null "$WORK/run.err" "$WORK/veeksha.yaml" --target "$MOCK_URL" --workers 2 \
    --trace --out "$WORK/out"
[ "$RUN_RC" = 0 ] || fail "the Veeksha spec exited $RUN_RC: $(tail -5 "$WORK/run.err")"
python3 - "$WORK/out/requests.jsonl" <<'PY'
import collections, json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
sessions = collections.defaultdict(list)
for r in rows:
    assert r["status"] == 200, f"request failed: {r['status']} {r['error_message']}"
    sessions[r["session"]].append(r)
assert sorted(sessions) == [0, 1, 2, 3, 4], f"sessions {sorted(sessions)} (runtime.max_sessions: 5)"
for s, turns in sessions.items():
    turns.sort(key=lambda r: r["node"])
    assert 110 <= len(turns) <= 150, f"session {s} has {len(turns)} turns, not 110-150"
    for prev, r in zip(turns, turns[1:]):
        assert r["parents"] == [prev["node"]] and r["history_parent"] == prev["node"]
        assert r["requested_input_tokens"] > prev["requested_input_tokens"] + 400, \
            f"session {s} turn {r['node']}: the context did not grow by its fresh tokens"
    for r in turns:
        assert 400 <= r["new_input_length"] <= 600, f"fresh tokens {r['new_input_length']}"
        assert 150 <= r["requested_output_tokens"] <= 250, f"output {r['requested_output_tokens']}"
# one session at a time: each starts after the previous one's last request ended
spans = sorted((min(r["send_us"] for r in t), max(r["end_us"] for r in t)) for t in sessions.values())
for (a0, b0), (a1, b1) in zip(spans, spans[1:]):
    assert a1 >= b0, f"sessions overlapped (target_concurrent_sessions: 1): {spans}"
waits = [r["wait_after_ready"] for t in sessions.values() for r in t[1:]]
mean = sum(waits) / len(waits)
assert 0.025 < mean < 0.040, f"mean wait {mean:.4f} s, expected ~0.032 s (poisson 31.25/s)"
print(f"ok: {len(rows)} requests in 5 sessions, mean wait {mean * 1000:.1f} ms")
PY

sed 's/target_concurrent_sessions:/target_concurent_sessions:/' "$WORK/veeksha.yaml" >"$WORK/typo.yaml"
line=$(grep -n 'target_concurent_sessions' "$WORK/typo.yaml" | cut -d: -f1)
run_bounded 30 /dev/null "$WORK/typo.err" "$WORK/typo.yaml" --target "$MOCK_URL"
[ "$RUN_RC" != 0 ] || fail "a misspelt key was accepted"
grep -qF "typo.yaml:$line:3: traffic_scheduler.target_concurent_sessions: unknown key" "$WORK/typo.err" ||
    fail "the misspelt key was refused without file:line:key: $(cat "$WORK/typo.err")"
echo "ok: the Veeksha spec runs unchanged; unknown keys are refused with file:line:key"
