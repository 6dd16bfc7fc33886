#!/bin/bash
# Anthropic Messages and OpenAI Responses streams are measured exactly as the chat stream is.
# truth_server.py serves one logical stream in each API's shape (--api): 20 tokens on a true 10 ms
# gap, written 2 or 3 events per send(), the first 5 reasoning (reasoning_content, thinking_delta,
# response.reasoning_text.delta), a ping (Messages' ping event; an SSE comment otherwise) written
# alone halfway through every gap, and usage saying 100 prompt tokens of which 64 cached (chat:
# a usage chunk; Messages: message_start and message_delta; Responses: response.completed). For
# messages and responses, through `stampede run --trace` with target.api set:
#  - every request ok; ITL p50 within 0.5 ms of the 10 ms truth and p90 within 1 ms (a coalesced
#    group counted as one gap would put it at 20 or 30), ITL min > 0, and the ITL sample count is
#    output tokens minus every request's first-chunk tokens;
#  - the differential, against the chat run on the same stream: ITL and TPOT p50 within 0.5 ms,
#    and TTFT and TTFC (the first answer token, after the thinking) p50 within 0.5 ms, both
#    counted from the response headers (the server starts its clock there: what the client does
#    before, sending and the server's wake-up, is the same for every API and only adds the shared
#    machine's noise); TTFT and TTFC from the send within 2 ms;
#  - output 20, input 100 and cached 64 tokens a request, from usage; 5 reasoning and 15 answer
#    events a request.
source "$(dirname "$0")/protocol_lib.sh"

# run NAME API: 10 requests, 2 at a time, against truth_server.py --api API.
run() {
    local name=$1 api=$2
    start_test_server truth_server.py "$name" --api "$api" --tokens 20 --gap-ms 10 --groups 2,3 \
        --reasoning 5 --ping --usage
    write_workload "$WORK/$name.yaml" seed=4 api="$api" model=truth timeout=20s concurrency=2 \
        max_requests=10 output_tokens=20
    run_bounded 60 "$WORK/$name.table" "$WORK/$name.err" "$WORK/$name.yaml" --workers 1 \
        --target "$URL" --out "$WORK/$name.out" --trace
    assert_equal "$name: exit status" "$RUN_RC" 0
}

run chat chat
for api in messages responses; do
    run "$api" "$api"
    check_results "$WORK/$api.out" "$api" "$WORK/chat.out" <<'PY'
import statistics
name, chat_dir = argv
chat = json.load(open(os.path.join(chat_dir, "results.json")))["levels"][0]
chat_rows = [json.loads(line) for line in open(os.path.join(chat_dir, "requests.jsonl"))]

def from_headers(rows, key):
    """p50 over the requests of key's instant less the response headers', in ms"""
    return statistics.median((r[key] - r["headers_us"]) / 1000 for r in rows)

assert level["requests_ok"] == 10 and level["requests_failed"] == 0, \
    f"{name}: ok {level['requests_ok']}, failed {level['requests_failed']}: {level['errors']}"
itl = level["itl_ms"]
for p, bound in (("p50", 0.5), ("p90", 1)):
    assert abs(itl[p] - 10) <= bound, f"{name}: ITL {p} {itl[p]} ms, truth 10 ms"
assert itl["min"] > 0, f"{name}: ITL min {itl['min']} ms: a coalesced event counted as a gap of 0"
first = sum((r.get("chunk_tokens") or [1])[0] for r in rows if r["error"] == "none")
assert itl["count"] == level["output_tokens"] - first, \
    f"{name}: {itl['count']} ITL samples, expected {level['output_tokens']} - {first}"
for metric, bound in (("tpot_ms", 0.5), ("itl_ms", 0.5), ("ttft_ms", 2), ("ttfc_ms", 2)):
    ours, theirs = level[metric]["p50"], chat[metric]["p50"]
    assert abs(ours - theirs) <= bound, f"{name}: {metric} p50 {ours:.3f}, chat's {theirs:.3f}"
for key in ("first_token_us", "first_content_us"):
    ours, theirs = from_headers(rows, key), from_headers(chat_rows, key)
    assert abs(ours - theirs) <= 0.5, f"{name}: headers to {key} p50 {ours:.3f} ms, chat's {theirs:.3f}"
assert level["ttfc_ms"]["p50"] > level["ttft_ms"]["p50"] + 40, f"{name}: TTFC did not wait for the answer"
assert (level["output_tokens"], level["input_tokens"], level["cached_tokens"]) == (200, 1000, 640), \
    f"{name}: tokens {level['output_tokens']} out, {level['input_tokens']} in, {level['cached_tokens']} cached"
assert level["token_source"]["from_usage"] == 10, level["token_source"]
for r in rows:
    assert (r["reasoning_chunks"], r["content_chunks"]) == (5, 15), \
        f"{name}: request {r['request_id']}: {r['reasoning_chunks']} reasoning, {r['content_chunks']} answer events"
print(f"{name}: TTFT {level['ttft_ms']['p50']:.3f} (chat {chat['ttft_ms']['p50']:.3f}), "
      f"TTFC {level['ttfc_ms']['p50']:.3f} (chat {chat['ttfc_ms']['p50']:.3f}), from the headers "
      f"TTFT {from_headers(rows, 'first_token_us'):.3f} (chat {from_headers(chat_rows, 'first_token_us'):.3f}), "
      f"TTFC {from_headers(rows, 'first_content_us'):.3f} (chat {from_headers(chat_rows, 'first_content_us'):.3f}), "
      f"ITL p50 {itl['p50']:.3f} p90 {itl['p90']:.3f} (chat {chat['itl_ms']['p50']:.3f}), "
      f"TPOT {level['tpot_ms']['p50']:.3f} (chat {chat['tpot_ms']['p50']:.3f}) ms")
PY
done
echo "ok: Messages and Responses streams give the chat stream's figures"
