#!/bin/bash
# `stampede plan` (docs/plan.md):
#  (a) the worked example of reference/capacity-planning.md §2.1, line for line, from the issue's
#      literal acceptance command (--free-gib 40): the document's figures "8 KiB per token per
#      layer, about 3.2 GB per sequence, and about 12 sequences" with its arithmetic (40 / 3.2 =
#      12.5, rounded down), beside the exact bound in bytes (13: 40 GiB / 3.05 GiB; with --free
#      40GB, 12: 40 GB / 3.28 GB);
#  (b) Hugging Face config.json variants: GQA heads split over TP ranks, head_dim that is not
#      hidden / heads, MLA, a multimodal text_config, no num_key_value_heads (MHA), flags over
#      the file;
#  (c) a malformed config.json: the file, line and column or the key, and exit 1;
#  (d) missing or bad inputs: what is missing, exit 2;
#  (e) --workload: the context it estimates equals, to the printed tenth of a token, what a run
#      of the same file against the mock sent and received (usage), for a chat and for a graph
#      (roles, appended replies, partial and chained histories), and the fill point and sweep
#      levels follow from the printed figures; an example file from examples/ works as is.
# ctest: parallel (arithmetic and messages only)
source "$(dirname "$0")/protocol_lib.sh"

DATA=$SRC/tests/data/plan
cd "$WORK"

# Runs `stampede plan ARGS...`; stdout in out.txt, stderr in err.txt; checks the exit status $1.
plan() {
    local want=$1 rc=0
    shift
    timeout 60 "$STAMPEDE" plan "$@" >out.txt 2>err.txt || rc=$?
    [ "$rc" = "$want" ] || fail "stampede plan $*: exit $rc, expected $want; stderr: $(cat err.txt)"
}
# Checks that out.txt has exactly the line $1.
has_line() {
    grep -qxF -- "$1" out.txt || fail "no line '$1' in:
$(cat out.txt)"
}
# Checks that err.txt is one line matching the extended regex $1.
error_is() {
    [ "$(wc -l <err.txt)" = 1 ] || fail "expected one line of error, got: $(cat err.txt)"
    grep -Eq -- "$1" err.txt || fail "stderr '$(cat err.txt)' does not match /$1/"
}

# (a) the worked example: the issue's acceptance command, literally
plan 0 --layers 80 --hidden 16384 --kv-ratio 0.125 --dtype-bytes 2 --pp 8 --context 40000 --free-gib 40
grep -qF "8 KiB per token per layer, about 3.2 GB per sequence, and about 12 sequences" out.txt ||
    fail "the acceptance command does not print the document's figures:
$(cat out.txt)"
has_line "as the document counts    8 KiB per token per layer, about 3.2 GB per sequence, and about 12 sequences"
has_line "                          (reference/capacity-planning.md section 2.1: 40000 x 10 x 8 KiB = 3200000 KiB,"
has_line "                          written 3.2 GB; 40 / 3.2 = 12.5, rounded down; in bytes a sequence is"
has_line "                          3.05 GiB, and the memory bound above is exact)"
example=(--layers 80 --hidden 16384 --kv-ratio 0.125 --dtype-bytes 2 --pp 8 --context 40000)
has_line "model                     80 layers, KV width = hidden 16384 x KV ratio 0.125, 2 bytes per value"
has_line "parallelism               PP 8 x TP 1 = 8 GPUs per replica, 10 layers per GPU, 1 replica"
has_line "KV per token per layer    8192 bytes (8 KiB, 8.19 kB) = 2 (K and V) x 2048 x 2 bytes"
has_line "KV per sequence per GPU   3276800000 bytes (3.05 GiB, 3.28 GB) = 40000 tokens x 10 layers x 8 KiB = 3200000 KiB"
has_line "KV free per GPU           42949672960 bytes (40 GiB, 42.9 GB)"
has_line "memory bound              13 concurrent sequences per replica (free / per sequence = 13.1), 13 in all"
has_line "guidance                  concurrency 2 (2R) most stable, 4 (4R) exploratory, R = 1 replica;"
plan 0 "${example[@]}" --free 40GB
has_line "KV free per GPU           40000000000 bytes (37.3 GiB, 40 GB)"
has_line "memory bound              12 concurrent sequences per replica (free / per sequence = 12.2), 12 in all"
has_line "as the document counts    8 KiB per token per layer, about 3.2 GB per sequence, and about 12 sequences"
has_line "                          3.28 GB, and the memory bound above is exact)"
# the document's count follows the free figure as given: 20 GiB -> 20 / 3.2 = 6.25 -> 6
plan 0 "${example[@]}" --free 20GiB
has_line "as the document counts    8 KiB per token per layer, about 3.2 GB per sequence, and about 6 sequences"
# replicas from GPUs: 64 GPUs are 8 replicas of PP 8
plan 0 "${example[@]}" --free 40GB --gpus 64
has_line "memory bound              12 concurrent sequences per replica (free / per sequence = 12.2), 96 in all"
has_line "guidance                  concurrency 16 (2R) most stable, 32 (4R) exploratory, R = 8 replicas;"
echo "ok: the worked example"

# (b) config.json variants
plan 0 --model-config "$DATA/llama-3-70b.json" --tp 8 --context 8192 --free-gib 40
has_line "model                     80 layers, KV width = 8 KV heads x head_dim 128 (of 64 heads), 2 bytes per value"
has_line "KV per token per layer    4096 bytes (4 KiB, 4.1 kB) = 2 (K and V) x 1024 x 2 bytes; 512 bytes per TP rank (TP 8)"
has_line "memory bound              128 concurrent sequences per replica (free / per sequence = 128.0), 128 in all"
# 16 ranks over 8 KV heads: each rank still keeps a whole head
plan 0 --model-config "$DATA/llama-3-70b.json" --tp 16 --context 8192 --free-gib 40
has_line "KV per token per layer    4096 bytes (4 KiB, 4.1 kB) = 2 (K and V) x 1024 x 2 bytes; 512 bytes per TP rank (TP 16)"
# head_dim 256, not 3584 / 16 = 224; float32
plan 0 --model-config "$DATA/gemma-2-9b.json" --context 1000 --free-gib 10
has_line "model                     42 layers, KV width = 8 KV heads x head_dim 256 (of 16 heads), 4 bytes per value"
has_line "KV per token per layer    16384 bytes (16 KiB, 16.4 kB) = 2 (K and V) x 2048 x 4 bytes"
# an fp8 KV cache: flags override the file
plan 0 --model-config "$DATA/gemma-2-9b.json" --dtype-bytes 1 --context 1000 --free-gib 10
has_line "KV per token per layer    4096 bytes (4 KiB, 4.1 kB) = 2 (K and V) x 2048 x 1 bytes"
plan 0 --model-config "$DATA/deepseek-v3.json" --tp 8 --context 1000 --free-gib 10
has_line "model                     61 layers, MLA latent width 576 = kv_lora_rank + qk_rope_head_dim, 2 bytes per value"
has_line "KV per token per layer    1152 bytes (1.12 KiB, 1.15 kB) = 576 x 2 bytes; 1152 bytes per TP rank (TP 8)"
plan 0 --model-config "$DATA/multimodal-text-config.json" --context 1000 --free-gib 10
has_line "model                     48 layers, KV width = 8 KV heads x head_dim 128 (of 40 heads), 2 bytes per value"
plan 0 --model-config "$DATA/mha-no-kv-heads.json" --context 1000 --free-gib 10
has_line "KV per token per layer    16384 bytes (16 KiB, 16.4 kB) = 2 (K and V) x 4096 x 2 bytes"
echo "ok: config.json variants"

# (c) malformed config.json: exit 1, the file and the place or key
plan 1 --model-config "$DATA/malformed-syntax.json" --context 1000 --free-gib 10
error_is "^plan: .*/malformed-syntax\.json:4:[0-9]+: invalid JSON: "
plan 1 --model-config "$DATA/malformed-kv-heads.json" --context 1000 --free-gib 10
error_is "^plan: .*/malformed-kv-heads\.json: num_key_value_heads: expected a whole number of at least 1, got \"8\"$"
plan 1 --model-config "$DATA/missing-layers.json" --context 1000 --free-gib 10
error_is "^plan: .*/missing-layers\.json: num_hidden_layers: missing$"
plan 1 --model-config "$DATA/bad-dtype.json" --context 1000 --free-gib 10
error_is "^plan: .*/bad-dtype\.json: torch_dtype: expected a dtype such as .*got \"complex64\"$"
plan 1 --model-config "$WORK/none.json" --context 1000 --free-gib 10
error_is "^plan: .*/none\.json: .*No such file or directory$"
[ ! -s out.txt ] || fail "a refused config.json still printed a plan"
echo "ok: malformed config.json refused"

# (d) missing and bad inputs: exit 2
plan 2
grep -q "^plan: missing --layers" err.txt || fail "no input: $(cat err.txt)"
plan 2 "${example[@]}"
grep -q "^plan: missing --free-gib or --free" err.txt || fail "no free memory: $(cat err.txt)"
plan 2 --layers 80 --hidden 16384 --kv-ratio 0.125 --dtype-bytes 2 --free-gib 40
grep -q "^plan: missing --context (tokens per sequence) or --workload" err.txt ||
    fail "no context: $(cat err.txt)"
plan 2 --layers 80 --hidden 16384 --kv-ratio 0.125 --context 1 --free-gib 40
grep -q "^plan: missing --dtype-bytes" err.txt || fail "no dtype: $(cat err.txt)"
plan 2 --layers 80 --kv-ratio 0.125 --dtype-bytes 2 --context 1 --free-gib 40
grep -q "^plan: missing --hidden (with --kv-ratio)" err.txt || fail "no hidden: $(cat err.txt)"
plan 2 "${example[@]}" --free-gib -4
grep -q "^plan: --free-gib: expected a number above 0 .*got '-4'" err.txt || fail "$(cat err.txt)"
plan 2 "${example[@]}" --free 40XB
grep -q "^plan: --free: expected a size above 0" err.txt || fail "$(cat err.txt)"
plan 2 "${example[@]}" --free-gib 40 --tp 100000
grep -q "^plan: --tp: expected a whole number from 1 to 65536, got '100000'" err.txt || fail "$(cat err.txt)"
plan 2 --layers 8 --hidden 100 --heads 3 --kv-heads 1 --dtype-bytes 2 --context 5 --free-gib 1
grep -q "^plan: --hidden 100 is not a multiple of --heads 3; give --head-dim" err.txt || fail "$(cat err.txt)"
plan 2 "${example[@]}" --free-gib 40 --pp 81
grep -q "^plan: pp: more pipeline stages than layers" err.txt || fail "$(cat err.txt)"
plan 2 "${example[@]}" --free-gib 40 --heads 8 --kv-heads 1
grep -q "^plan: give --kv-ratio or --heads and --kv-heads, not both" err.txt || fail "$(cat err.txt)"
plan 0 --help
grep -q "^usage: stampede plan" out.txt || fail "--help: $(cat out.txt)"
echo "ok: missing and bad inputs refused"

# (e) --workload against a real run of the same file on the mock
cat >w.yaml <<'YAML'
seed: 42
target:
  api: chat
  model: mock-llama
  ignore_eos: true
workload:
  kind: chat
  turns: {dist: uniform, min: 2, max: 4}
  input_tokens: {dist: uniform, min: 20, max: 60}
  output_tokens: {dist: uniform, min: 8, max: 16}
  system_prompt_tokens: 32
scheduler:
  kind: concurrent
  concurrency: 4
limits:
  max_sessions: 12
YAML
# Runs FILE ($1) on the mock with $2 local workers and prints its requests'
# context as the plan prints it, from the usage the server reported.
measure_run() {
    timeout 120 "$STAMPEDE" run "$1" --workers "$2" --out "run-$1" --trace >"run-$1.txt" 2>&1 ||
        fail "the run of $1 failed: $(tail -5 "run-$1.txt")"
    python3 - "run-$1/requests.jsonl" <<'PY' || fail "could not read the requests of $1"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert len(rs) > 12 and all(r["status"] == 200 for r in rs), "not every request ran"
p = [r["usage"]["prompt_tokens"] for r in rs]
o = [r["usage"]["completion_tokens"] for r in rs]
print("mean %.1f tokens (prompt %.1f + output %.1f), longest %d" % (
    sum(p + o) / len(rs), sum(p) / len(rs), sum(o) / len(rs), max(a + b for a, b in zip(p, o))))
PY
}
measured=$(measure_run w.yaml 1)
plan 0 --layers 32 --hidden 4096 --kv-ratio 0.25 --dtype-bytes 2 --free-gib 20 --workload w.yaml
has_line "workload                  w.yaml: 12 sessions sampled, 2.9 requests each, 1.00 in flight at once"
has_line "context per request       $measured"
# a graph: roles, a system prompt, appended replies, history none, a fraction, a history parent
cat >g.yaml <<'YAML'
seed: 9
target:
  api: chat
  model: mock-llama
  ignore_eos: true
workload:
  kind: graph
  roles: [planner, worker, reviewer]
  system_prompt_tokens: 16
  input_tokens: {dist: uniform, min: 10, max: 40}
  output_tokens: {dist: uniform, min: 5, max: 20}
  graph:
    shape: template
    nodes:
      - {id: plan, role: planner}
      - {id: w1, parents: [plan], role: worker, history: none, append_parent_replies: true}
      - {id: w2, parents: [plan], role: worker, history: 0.5}
      - id: review
        parents: [w1, w2]
        history_parent: w2
        role: reviewer
        history: full
        append_parent_replies: true
      - {id: final, parents: [review], role: planner}
scheduler:
  kind: concurrent
  concurrency: 4
limits:
  max_sessions: 8
YAML
measured_graph=$(measure_run g.yaml 2)
plan 0 --layers 32 --hidden 4096 --kv-ratio 0.25 --dtype-bytes 2 --free-gib 20 --workload g.yaml
has_line "workload                  g.yaml: 8 sessions sampled, 5.0 requests each, 1.25 in flight at once"
has_line "context per request       $measured_graph"
plan 0 --layers 32 --hidden 4096 --kv-ratio 0.25 --dtype-bytes 2 --free-gib 20 --workload w.yaml
# the fill point is the KV tokens a replica holds over the tokens a session keeps in flight
python3 - out.txt <<'PY' || fail "the fill point does not follow from the figures: $(cat out.txt)"
import re, sys
t = open(sys.argv[1]).read()
session = float(re.search(r"KV per session in flight +([0-9.]+) tokens", t).group(1))
fill = float(re.search(r"KV cache fills at +\d+ sessions in flight \(([0-9.]+)\)", t).group(1))
tokens = int(re.search(r"with (\d+) KV tokens per replica", t).group(1))
assert tokens == 20 * 2**30 // (32 * 2 * 1024 * 2), tokens      # 163840
assert abs(fill - tokens / session) <= 0.05 * fill / session + 0.1, (fill, tokens / session)
levels = [int(x) for x in re.search(r"sweep: \{concurrency: \[([0-9, ]+)\]\}", t).group(1).split(",")]
assert levels[0] == 1 and levels == sorted(set(levels)) and levels[-2] == int(fill), levels
PY
# a request longer than --context is pointed out
plan 0 --layers 32 --hidden 4096 --kv-ratio 0.25 --dtype-bytes 2 --free-gib 20 --context 100 --workload w.yaml
has_line "note                      the workload's longest request (281 tokens) is longer than --context (100): a server with max_model_len 100 rejects it"
# an example file as shipped, with no --context: its longest request is the sequence
plan 0 --model-config "$DATA/llama-3-70b.json" --tp 8 --free-gib 40 --workload "$SRC/examples/diamond-a2a.yaml"
grep -q "^KV per sequence per GPU .* tokens (the workload's longest request) x 80 layers" out.txt ||
    fail "diamond-a2a: $(cat out.txt)"
grep -q "^workload .*diamond-a2a.yaml: 48 sessions sampled, 4.0 requests each, 1.33 in flight at once$" out.txt ||
    fail "diamond-a2a: $(cat out.txt)"
grep -q "the file runs concurrency 24" out.txt || fail "diamond-a2a: $(cat out.txt)"
plan 1 --layers 8 --hidden 64 --kv-ratio 1 --dtype-bytes 2 --free-gib 1 --workload "$WORK/none.yaml"
error_is "^plan: .*none\.yaml: cannot read the file"
echo "ok: --workload matches the run's usage and says where a sweep should look"
