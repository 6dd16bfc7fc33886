#!/bin/bash
# The h200-llama70b-eagle3 profile's speculative decoding, end to end: its SSE events carry 1-4
# tokens (the drafts an acceptance draw keeps), usage counts the tokens exactly, and stampede's
# accounting follows. Two short levels through `stampede run`:
#  - c = 8 on the embedded mock (`mock: {profile: h200-llama70b-eagle3}`): every request gets its
#    64 tokens by usage in fewer events (usage_chunks_differ = all), 1.3-1.8 tokens per event
#    (acceptance 0.37: 1.57 per decode step), each request's TPOT is (last - first event) / 63,
#    ITL is one sample per event after the first, and TPOT ~ ITL / tokens per event;
#  - c = 2 against a mock started here: the client's event and token totals equal the mock's own
#    counters (stampede_mock_chunks_sent_total, vllm:generation_tokens_total), and the client's
#    mean TPOT is the mock's (its request_time_per_output_token histogram) within 10 %.
# And the events themselves (one stream with continuous usage and 7 reasoning tokens): each
# event's words are exactly its growth of usage.completion_tokens, some carry several, and none
# straddles the end of the reasoning.
# ctest: parallel (rates within 10 % and relative TPOT/ITL ratios; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

# check_chunks RUN_DIR REQUESTS: the accounting assertions on a run of REQUESTS x 64 tokens.
check_chunks() {
    check_results "$1" "$2" <<'PY'
n = int(argv[0])
assert level["requests_ok"] == n and level["requests_failed"] == 0, (level["requests_ok"], level["requests_failed"])
assert level["output_tokens"] == 64 * n, level["output_tokens"]
src = level["token_source"]
assert src["output"] == "usage" and src["usage_chunks_differ"] == n, src
events = sum(r["content_chunks"] for r in rows)
tokens = sum(r["output_tokens"] for r in rows)
assert len(rows) == n and tokens == 64 * n, (len(rows), tokens)
assert all(r["content_chunks"] < r["output_tokens"] for r in rows), [r["content_chunks"] for r in rows]
per_event = tokens / events
assert 1.3 < per_event < 1.8, f"{per_event:.2f} tokens per event"
for r in rows:
    first, last = r["chunks_us"][0], r["chunks_us"][-1]
    assert abs(r["tpot_ms"] - (last - first) / 1000 / 63) < 0.01, (r["tpot_ms"], first, last)
assert level["itl_ms"]["count"] == events - n, (level["itl_ms"]["count"], events, n)
ratio = level["tpot_ms"]["mean"] * per_event / level["itl_ms"]["mean"]
assert 0.85 < ratio < 1.15, f"TPOT {level['tpot_ms']['mean']:.1f} ms x {per_event:.2f} vs ITL {level['itl_ms']['mean']:.1f} ms per event"
print(f"{events} events for {tokens} tokens ({per_event:.2f} per event), TPOT mean {level['tpot_ms']['mean']:.1f} ms, ITL per event {level['itl_ms']['mean']:.1f} ms")
PY
}

cat >"$WORK/embedded.yaml" <<YAML
seed: 3
target: {ignore_eos: true}
workload: {kind: requests, input_tokens: 200, output_tokens: 64}
scheduler: {kind: concurrent, concurrency: 8}
limits: {max_requests: 24}
mock: {profile: h200-llama70b-eagle3}
YAML
run_bounded 120 /dev/null "$WORK/embedded.err" "$WORK/embedded.yaml" --workers 1 --trace \
    --out "$WORK/embedded"
[ "$RUN_RC" = 0 ] || fail "embedded eagle3 run exited $RUN_RC: $(tail -5 "$WORK/embedded.err")"
check_chunks "$WORK/embedded" 24 || fail "c = 8: multi-token events are not accounted"

start_mock --profile h200-llama70b-eagle3 --seed 5
sed -e 's/concurrency: 8/concurrency: 2/' -e 's/max_requests: 24/max_requests: 6/' \
    -e '/^mock:/d' "$WORK/embedded.yaml" >"$WORK/target.yaml"
run_bounded 120 /dev/null "$WORK/target.err" "$WORK/target.yaml" --workers 1 --trace \
    --target "$MOCK_URL" --out "$WORK/target"
[ "$RUN_RC" = 0 ] || fail "eagle3 run against the mock exited $RUN_RC: $(tail -5 "$WORK/target.err")"
check_chunks "$WORK/target" 6 || fail "c = 2: multi-token events are not accounted"
check_results "$WORK/target" "$(mock_metric stampede_mock_chunks_sent_total)" \
    "$(mock_metric vllm:generation_tokens_total)" \
    "$(mock_metric vllm:request_time_per_output_token_seconds_sum)" \
    "$(mock_metric vllm:request_time_per_output_token_seconds_count)" <<'PY' ||
events, tokens, tpot_sum, tpot_count = (float(a) for a in argv)
assert sum(r["content_chunks"] for r in rows) == events, (sum(r["content_chunks"] for r in rows), events)
assert sum(r["output_tokens"] for r in rows) == tokens, (sum(r["output_tokens"] for r in rows), tokens)
server = 1000 * tpot_sum / tpot_count
client = level["tpot_ms"]["mean"]
assert abs(client / server - 1) < 0.10, f"client TPOT {client:.2f} ms, mock's {server:.2f} ms"
print(f"mock: {events:.0f} events, {tokens:.0f} tokens; TPOT client {client:.2f} ms, mock {server:.2f} ms")
PY
    fail "c = 2: the client's counts or TPOT differ from the mock's"
start_mock --profile h200-llama70b-eagle3 --reasoning-tokens 7
python3 - "$MOCK_URL" <<'PY' || fail "the events' words do not match their usage"
import json, sys, urllib.request
body = {"messages": [{"role": "user", "content": "one two three"}], "max_tokens": 200,
        "stream": True, "stream_options": {"include_usage": True, "continuous_usage_stats": True}}
req = urllib.request.Request(sys.argv[1] + "/v1/chat/completions", json.dumps(body).encode(),
                             {"content-type": "application/json"})
done, sizes, kinds = 0, [], []
with urllib.request.urlopen(req, timeout=60) as resp:
    for line in resp:
        line = line.decode().strip()
        if not line.startswith("data: {"):
            continue
        event = json.loads(line[6:])
        if not event["choices"]:
            continue
        delta = event["choices"][0]["delta"]
        text = delta.get("reasoning_content") or delta.get("content") or ""
        if not text:
            continue  # the role event
        words = len(text.split())
        grew = event["usage"]["completion_tokens"] - done
        assert words == grew, (text, grew)
        done += grew
        sizes.append(words)
        kinds.append("reasoning" if "reasoning_content" in delta else "content")
assert done == 200 and sum(sizes) == 200, (done, sum(sizes))
assert max(sizes) > 1 and max(sizes) <= 4 and min(sizes) >= 1, sorted(set(sizes))
assert sum(n for n, k in zip(sizes, kinds) if k == "reasoning") == 7, list(zip(sizes, kinds))[:6]
print(f"{len(sizes)} events for 200 tokens: sizes {dict((k, sizes.count(k)) for k in range(1, 5))}")
PY

# With target.continuous_usage_stats the client learns each event's token count from its usage:
# ITL is then per token (one sample per token after the first event's), and its mean is TPOT's.
sed -e 's/target: {ignore_eos: true}/target: {ignore_eos: true, continuous_usage_stats: true}/' \
    "$WORK/embedded.yaml" >"$WORK/continuous.yaml"
run_bounded 120 /dev/null "$WORK/continuous.err" "$WORK/continuous.yaml" --workers 1 --trace \
    --out "$WORK/continuous"
[ "$RUN_RC" = 0 ] || fail "continuous usage run exited $RUN_RC: $(tail -5 "$WORK/continuous.err")"
check_results "$WORK/continuous" 24 <<'PY' || fail "continuous usage: ITL is not per token"
n = int(argv[0])
assert level["requests_ok"] == n and level["output_tokens"] == 64 * n, level["output_tokens"]
first = sum(r["chunk_tokens"][0] if r.get("chunk_tokens") else 1 for r in rows)
count = level["itl_ms"]["count"]
assert 64 * n - 4 * n <= count <= 64 * n - n, (count, 64 * n)
ratio = level["itl_ms"]["mean"] / level["tpot_ms"]["mean"]
assert 0.9 < ratio < 1.1, f"ITL {level['itl_ms']['mean']:.1f} ms vs TPOT {level['tpot_ms']['mean']:.1f} ms"
print(f"per token: {count} ITL samples, ITL/TPOT {ratio:.3f}")
PY
echo "ok: EAGLE-3 events carry several tokens; usage, TPOT and ITL account for them exactly"
