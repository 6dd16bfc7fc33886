#!/bin/bash
# The embedded mock serves Anthropic Messages (/v1/messages) and OpenAI Responses (/v1/responses)
# from the same engine as chat, and the official SDKs read it: `@anthropic-ai/sdk` and `openai`
# (pinned in tests/sdk/package-lock.json, installed into the build's sdk-tools/) stream one
# request each with their accumulating helpers (tests/sdk/api_streams.mjs) against a mock
# reasoning for 3 tokens:
#  - neither SDK raises; the thinking (reasoning) and the text each SDK puts together are the
#    deltas as sent (the same request read raw, event by event), 3 and 9 words;
#  - usage as sent: 7 input tokens (system and message words), 12 output, the stop reason
#    max_tokens (Responses: status incomplete);
#  - a request over --max-model-len is a 400 whose message each SDK shows (Anthropic's SDK
#    quotes the error body, so the message is inside it).
# Then stampede itself runs chat sessions against that mock with target.api messages and
# responses (a system prompt, tools, every later turn a tool result): every request ok, 3
# reasoning and 5 answer events and 8 output tokens from usage each, and the prompt tokens the
# mock counted are exactly the words sent (the system, the tools' descriptions, tool_use and
# tool_result blocks, function_call_output items).
# ctest: parallel (content only)
source "$(dirname "$0")/protocol_lib.sh"
install_tools tests/sdk sdk-tools "the SDKs"
cp "$SRC/tests/sdk/api_streams.mjs" "$TOOLS/"

# 15 ms between tokens: the answer starts 45 ms after the first reasoning token, so a mock
# delayed on a loaded machine does not put both in one write (then TTFC equals TTFT, rightly).
start_mock --reasoning-tokens 3 --max-model-len 100 --ttft-ms 1 --itl-ms 15
timeout 30 node "$TOOLS/api_streams.mjs" "$MOCK_URL" mock-llama >"$WORK/sdk.out" 2>"$WORK/sdk.err" ||
    fail "an SDK failed: $(tail -5 "$WORK/sdk.err")"
PYTHONPATH=$TESTS_DIR python3 - "$MOCK_URL" "$WORK/sdk.out" <<'PY' || fail "the SDKs disagree with the streams"
import json, sys
from mock_client import Connection
url, out = sys.argv[1], sys.argv[2]
host, port = url[len("http://"):].rsplit(":", 1)
said = {line["what"]: line for line in map(json.loads, open(out))}

def raw(path, body):
    """(reasoning, text, events) of the stream read event by event, as sent"""
    c = Connection(host, int(port))
    r = c.request("POST", path, body)
    c.close()
    assert r.status == 200, (path, r.status, r.body[:200])
    events = [json.loads(d) for _, d in r.events]
    return events

prompt = "one two three four five"
events = raw("/v1/messages", {"model": "mock-llama", "max_tokens": 12, "stream": True,
                              "system": "be brief", "messages": [{"role": "user", "content": prompt}]})
deltas = [e["delta"] for e in events if e["type"] == "content_block_delta"]
thinking = "".join(d["thinking"] for d in deltas if d["type"] == "thinking_delta")
text = "".join(d["text"] for d in deltas if d["type"] == "text_delta")
m = said["messages"]
assert (m["thinking"], m["text"]) == (thinking, text), (m, thinking, text)
assert (len(thinking.split()), len(text.split())) == (3, 9), (thinking, text)
final = [e for e in events if e["type"] == "message_delta"][0]
assert m["usage"]["input_tokens"] == 7 and m["usage"]["output_tokens"] == 12 == final["usage"]["output_tokens"], m
assert m["stop_reason"] == "max_tokens", m

events = raw("/v1/responses", {"model": "mock-llama", "max_output_tokens": 12, "stream": True,
                               "instructions": "be brief", "input": prompt})
reasoning = "".join(e["delta"] for e in events if e["type"] == "response.reasoning_text.delta")
text2 = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
seq = [e["sequence_number"] for e in events]
assert seq == list(range(len(seq))), f"sequence numbers {seq}"
r = said["responses"]
assert (r["reasoning"], r["text"]) == (reasoning, text2), (r, reasoning, text2)
assert (reasoning, text2) == (thinking, text), "the same engine gives the same reply in both APIs"
assert (r["usage"]["input_tokens"], r["usage"]["output_tokens"]) == (7, 12), r["usage"]
assert r["status"] == "incomplete", r
message = "This model's maximum context length is 100 tokens."
for what in ("messages 400", "responses 400"):
    assert said[what]["status"] == 400 and message in said[what]["message"], said[what]
print(f"ok: both SDKs read thinking {thinking!r}, text {text!r}, usage 7 in / 12 out; "
      f"the 400 says: {said['responses 400']['message'][:60]}...")
PY

for api in messages responses; do
    cat >"$WORK/$api.yaml" <<YAML
seed: 2
target: {api: $api, model: mock-llama, ignore_eos: true, endpoints: [$MOCK_URL]}
workload:
  kind: chat
  turns: 3
  input_tokens: 6
  output_tokens: 8
  scaffold: {system_tokens: 10, tools: 2, tool_tokens: 5, tool_results: 1}
scheduler: {kind: concurrent, concurrency: 2}
limits: {max_sessions: 2}
YAML
    run_bounded 60 "$WORK/$api.table" "$WORK/$api.err" "$WORK/$api.yaml" --workers 1 \
        --out "$WORK/$api.out" --trace
    assert_equal "$api: exit status" "$RUN_RC" 0
    check_results "$WORK/$api.out" "$api" <<'PY'
assert level["requests_ok"] == 6 and level["requests_failed"] == 0, level["errors"]
assert level["output_tokens"] == 48 and level["token_source"]["from_usage"] == 6, level["token_source"]
assert all((r["reasoning_chunks"], r["content_chunks"]) == (3, 5) for r in rows), \
    [(r["reasoning_chunks"], r["content_chunks"]) for r in rows]
assert all(r["ttfc_ms"] >= r["ttft_ms"] for r in rows), "TTFC before TTFT"
assert level["ttfc_ms"]["p50"] > level["ttft_ms"]["p50"] + 15, "TTFC did not wait for the answer"
extra = level["prompt_vs_intended"]
assert extra["requests_checked"] == 6 and extra["min_extra_tokens"] == extra["max_extra_tokens"] == 0, extra
print(f"ok: {argv[0]}: 6 requests against the mock, TTFT {level['ttft_ms']['p50']:.2f} ms, "
      f"TTFC {level['ttfc_ms']['p50']:.2f} ms, the mock counted every prompt word sent")
PY
done
echo "ok: the mock's Messages and Responses streams read right in both SDKs and in stampede"
