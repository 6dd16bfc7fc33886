#!/bin/bash
# Streams as real servers send them (docs/metrics.md section 2): sse_replay_server.py replays the
# fixtures of tests/data/sse (modelled on recorded OpenAI, vLLM/Qwen3 and R1-distill streams), one
# per request, 15 ms between writes; `stampede run --trace` must get, per request:
#  - a refusal-only reply: TTFT, TTFC (= TTFT) and TPOT, counted as a refusal;
#  - a Qwen3 think block in content with both tags split across events: 9 reasoning events, 6
#    answer events, TTFC at the event that ends the closing tag;
#  - an R1 distill's closing tag alone: the text before it is reasoning;
#  - each finish_reason (stop, length, tool_calls, content_filter, none) in requests.jsonl, in
#    results.json's per-level counts and in the table; with ignore_eos, a `stop` short of the
#    asked length fails the output-length check, named as such;
# and with the events three per write, the same counts over five chunks of three tokens.
# ctest: parallel (counts, contents and a lower bound of tens of ms; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"
DATA=$(cd "$(dirname "$0")/../data/sse" && pwd)

FIXTURES=(openai_refusal qwen3_think_split r1_closing_tag_only finish_stop finish_length
    finish_content_filter finish_tool_calls finish_none)

# replay NAME PER_WRITE REQUESTS FIXTURE...: one request at a time through the replay server.
replay() {
    local name=$1 per_write=$2 requests=$3
    shift 3
    local files=() f
    for f in "$@"; do files+=("$DATA/$f.sse"); done
    start_test_server sse_replay_server.py "$name" --per-write "$per_write" --gap-ms 15 "${files[@]}"
    write_workload "$WORK/$name.yaml" seed=3 model=replay timeout=20s concurrency=1 \
        max_requests="$requests"
    run_bounded 60 "$WORK/$name.table" "$WORK/$name.err" "$WORK/$name.yaml" --workers 1 \
        --target "$URL" --out "$WORK/$name.out" --trace
    assert_equal "$name: exit status" "$RUN_RC" 0
}

replay one_per_write 1 ${#FIXTURES[@]} "${FIXTURES[@]}"
check_results "$WORK/one_per_write.out" "${FIXTURES[@]}" <<'PY'
rows.sort(key=lambda r: r["send_us"])
assert len(rows) == len(argv), f"{len(rows)} rows for {len(argv)} fixtures"
by = dict(zip(argv, rows))
for name, r in by.items():
    assert r["error"] == "none", f"{name}: {r['error']} {r.get('message')}"

def assert_ttfc_at_event(r, event, what):
    """TTFC is the chunk that holds token event `event` (0-based), counting each chunk's tokens:
    right however the reads grouped the writes on a loaded machine"""
    tokens = r.get("chunk_tokens") or [1] * len(r["chunks_us"])
    i = ttfc_chunk(r)
    before = sum(tokens[:i])
    assert before <= event < before + tokens[i], \
        f"{what}: TTFC at chunk {i} (token events {before}..{before + tokens[i] - 1}), expected event {event}"

def ttfc_chunk(r):
    """the index of the chunk TTFC was stamped at (the wire carries chunk times as microsecond
    gaps, so they differ from first_content_us by less than 1 us)"""
    at = r["first_content_us"]
    hits = [i for i, c in enumerate(r["chunks_us"]) if abs(c - at) < 1.5]
    assert hits, f"TTFC {r['ttfc_ms']} ms is no chunk's time"
    return hits[0]

r = by["openai_refusal"]
assert r["refusal"] is True and r["finish_reason"] == "stop", r
for key in ("ttft_ms", "ttfc_ms", "tpot_ms"):
    assert r[key] is not None, f"refusal: {key} missing"
assert r["ttfc_ms"] == r["ttft_ms"], "refusal: the refusal is the answer"
assert (r["content_chunks"], r["reasoning_chunks"], r["output_tokens"]) == (9, 0, 9), r

r = by["qwen3_think_split"]
assert (r["reasoning_chunks"], r["content_chunks"]) == (9, 6), \
    f"think: {r['reasoning_chunks']} reasoning, {r['content_chunks']} answer events"
assert_ttfc_at_event(r, 9, "think")  # 'ink>\\n\\n', where the answer begins
assert r["ttfc_ms"] - r["ttft_ms"] >= 9 * 15 * 0.5, f"think: TTFC-TTFT {r['ttfc_ms']-r['ttft_ms']}"

r = by["r1_closing_tag_only"]
assert (r["reasoning_chunks"], r["content_chunks"]) == (6, 3), r
assert_ttfc_at_event(r, 6, "r1")  # the event after </think>

expected = {"finish_stop": "stop", "finish_length": "length", "finish_content_filter":
            "content_filter", "finish_tool_calls": "tool_calls", "finish_none": "none"}
for name, reason in expected.items():
    assert by[name]["finish_reason"] == reason, f"{name}: {by[name]['finish_reason']}"
    assert by[name]["refusal"] is False, name
assert by["finish_tool_calls"]["ttfc_ms"] is not None, "tool calls are answer"

assert level["finish_reasons"] == {"none": 1, "stop": 4, "length": 1, "tool_calls": 1,
                                   "content_filter": 1, "other": 0}, level["finish_reasons"]
assert level["refusals"] == 1, level["refusals"]
assert level["ttft_ms"]["count"] == level["ttfc_ms"]["count"] == len(argv), \
    (level["ttft_ms"]["count"], level["ttfc_ms"]["count"])
print("one per write: refusal, think, R1 and finish reasons as expected")
PY
grep -qF "finish        none 1, stop 4, length 1, tool_calls 1, content_filter 1; 1 refusal" \
    "$WORK/one_per_write.table" || fail "no finish line in the table: $(cat "$WORK/one_per_write.table")"

replay three_per_write 3 2 qwen3_think_split openai_refusal
check_results "$WORK/three_per_write.out" <<'PY'
rows.sort(key=lambda r: r["send_us"])
think, refusal = rows
assert think["error"] == refusal["error"] == "none", (think["error"], refusal["error"])
# 18 events (15 token events, the finish chunk, usage, [DONE]) in writes of 3: token chunks of 3
# (of 6 or more only if a loaded machine read two writes at once)
tokens = think.get("chunk_tokens")
assert tokens and sum(tokens) == 15 and all(t % 3 == 0 for t in tokens), tokens
assert (think["reasoning_chunks"], think["content_chunks"]) == (9, 6), think
at = [i for i, c in enumerate(think["chunks_us"]) if abs(c - think["first_content_us"]) < 1.5]
assert at and sum(tokens[:at[0]]) <= 9 < sum(tokens[:at[0] + 1]), \
    f"TTFC at chunk {at}, not the write holding 'ink>\\n\\n' (token event 9): {tokens}"
assert think["ttfc_ms"] - think["ttft_ms"] >= 3 * 15 * 0.5
assert refusal["refusal"] is True and refusal["ttft_ms"] is not None
assert level["refusals"] == 1 and level["finish_reasons"]["stop"] == 2, level["finish_reasons"]
print("three per write: the same counts over five chunks of three tokens")
PY
# ignore_eos asks for exactly 8 tokens; a server that stops after 4 (finish_reason stop) fails
# the output-length check, and the reason says the server stopped early.
start_test_server sse_replay_server.py early_stop --gap-ms 5 "$DATA/finish_stop.sse"
write_workload "$WORK/early_stop.yaml" seed=3 model=replay timeout=20s concurrency=1 \
    max_requests=3 ignore_eos=true output_tokens=8
run_bounded 60 "$WORK/early_stop.table" "$WORK/early_stop.err" "$WORK/early_stop.yaml" \
    --workers 1 --target "$URL" --out "$WORK/early_stop.out"
check_results "$WORK/early_stop.out" <<'PY'
requested = level["output_vs_requested"]
assert (requested["requests_checked"], requested["mismatched_requests"],
        requested["stopped_early"]) == (3, 3, 3), requested
reasons = " | ".join(results["validity"]["reasons"])
assert "3 ended with finish_reason `stop` before it" in reasons, reasons
print("ignore_eos: early stops counted and named")
PY
grep -qF "3 ended with finish_reason stop before the length asked for" "$WORK/early_stop.table" ||
    fail "the table does not name the early stops: $(cat "$WORK/early_stop.table")"
echo "ok: refusals, think tags and finish reasons as real servers stream them"
