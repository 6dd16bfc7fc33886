#!/bin/bash
# ctest: parallel
# Veeksha's files run as they are (docs/workloads.md, "Veeksha files"): fixtures of our own, one
# per construct, each run end to end on the mock (short: a few sessions, a second or two), and the
# files that are out of scope refused with their exact messages.
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 2 --itl-ms 1
MOCK_ADDR=${MOCK_URL#http://}
# FILE [ARGS...]: `stampede run` (a capacity file: `stampede capacity` when ARGS start with capacity)
run_veeksha() {
    local name=$1
    shift
    run_bounded 60 "$WORK/$name.out" "$WORK/$name.err" "$WORK/$name.yml" --workers 1 "$@"
    [ "$RUN_RC" = 0 ] || fail "$name exited $RUN_RC: $(tail -5 "$WORK/$name.err")"
}
check() { # NAME PYTHON (reads sys.argv[1] = $WORK)
    python3 - "$WORK" "$1" <<<"$2" || fail "$1: the check above failed"
}

# client (api_base is the endpoint without --target; completions type; timeout; token params),
# a fixed interval_generator, single_request sessions, output_dir and trace_recorder.
cat >"$WORK/client.yml" <<YAML
client:
  type: openai_completions
  model: mock-llama
  api_base: http://$MOCK_ADDR/v1
  request_timeout: 5
  max_tokens_param: max_tokens
  min_tokens_param: min_tokens
traffic_scheduler: {type: rate, interval_generator: {type: fixed, interval: 0.05}}
session_generator:
  session_graph: {type: single_request}
  output_spec: {text: {output_length_generator: {type: fixed, value: 3}}}
runtime: {max_sessions: 6}
output_dir: $WORK/client-out
trace_recorder: {enabled: true}
YAML
# The file's translation is checked below, not the machine: six sends 50 ms apart make the
# schedule lag's p99 their slowest one, and a loaded 2-core runner can hold one back 10 ms,
# which makes the run invalid (exit 3).
run_veeksha client --allow-invalid
check client '
import json, sys
rows = sorted(map(json.loads, open(sys.argv[1] + "/client-out/requests.jsonl")), key=lambda r: r["session"])
assert len(rows) == 6 and all(r["status"] == 200 for r in rows), f"{len(rows)} requests"
assert [r["intended_us"] for r in rows] == [i * 50000 for i in range(6)], [r["intended_us"] for r in rows]
assert all(r["output_tokens"] == 3 for r in rows), [r["output_tokens"] for r in rows]
cfg = open(sys.argv[1] + "/client-out/config.yaml").read()
assert "api: completions" in cfg and "min_tokens: true" in cfg and "timeout: 5s" in cfg, cfg
print("ok: client, fixed interval 50 ms, single_request, output_dir, trace_recorder")'

# Veeksha's defaults where the generators are left out: 6..12 turns of 6..12 tokens, 6..12 out
# (asked as max_completion_tokens, which the mock honours with ignore_eos), each turn continuing
# the conversation (inherit_history); a concurrent scheduler.
cat >"$WORK/defaults.yml" <<YAML
session_generator:
  session_graph: {type: linear, request_wait_generator: {type: fixed, interval: 0}}
traffic_scheduler: {type: concurrent, target_concurrent_sessions: 2, rampup_seconds: 0}
runtime: {max_sessions: 2}
client: {model: mock-llama}
YAML
run_veeksha defaults --target "$MOCK_URL" --out "$WORK/defaults-out"
check defaults '
import json, sys, collections
rows = list(map(json.loads, open(sys.argv[1] + "/defaults-out/requests.jsonl")))
by = collections.defaultdict(list)
for r in rows: by[r["session"]].append(r)
assert sorted(by) == [0, 1], sorted(by)
for s, rs in by.items():
    rs.sort(key=lambda r: r["send_us"])
    assert 6 <= len(rs) <= 12, f"session {s}: {len(rs)} turns"
    assert all(6 <= r["new_input_length"] <= 12 and 6 <= r["output_tokens"] <= 12 for r in rs), rs
    p = [r["usage"]["prompt_tokens"] for r in rs]
    assert p == sorted(p) and p[-1] > p[0] + 5 * 6, f"session {s}: prompts do not carry the history: {p}"
cfg = open(sys.argv[1] + "/defaults-out/config.yaml").read()
assert "max_tokens_param: max_completion_tokens" in cfg, "the chat client names the limit max_completion_tokens"
print("ok: Veeksha defaults: 6..12 turns of 6..12 tokens, history carried, max_completion_tokens")'

# inherit_history: false, a fixed request_wait_generator (interval), gamma arrivals,
# cancel_session_on_failure: false and wandb (both noted).
cat >"$WORK/nohistory.yml" <<YAML
session_generator:
  session_graph:
    type: linear
    inherit_history: false
    num_request_generator: {type: fixed, value: 3}
    request_wait_generator: {type: fixed, interval: 0.2}
  channels: [{type: text, body_length_generator: {type: fixed, value: 30}}]
traffic_scheduler:
  type: rate
  interval_generator: {type: gamma, arrival_rate: 20, cv: 0.5}
  cancel_session_on_failure: false
runtime: {max_sessions: 3}
wandb: {enabled: true, project: veeksha}
YAML
run_veeksha nohistory --target "$MOCK_URL" --out "$WORK/nohistory-out"
grep -qF "run: note: $WORK/nohistory.yml:11:30: traffic_scheduler.cancel_session_on_failure: false: stampede still ends a session at its first failed request (true is its only behaviour)" "$WORK/nohistory.err" ||
    fail "no note for cancel_session_on_failure: $(cat "$WORK/nohistory.err")"
grep -qF "run: note: $WORK/nohistory.yml:13:1: wandb: Weights & Biases logging is not mapped; ignored" "$WORK/nohistory.err" ||
    fail "no note for wandb: $(cat "$WORK/nohistory.err")"
check nohistory '
import json, sys, collections
rows = list(map(json.loads, open(sys.argv[1] + "/nohistory-out/requests.jsonl")))
by = collections.defaultdict(list)
for r in rows: by[r["session"]].append(r)
assert sorted(by) == [0, 1, 2] and all(len(v) == 3 for v in by.values()), {k: len(v) for k, v in by.items()}
for s, rs in by.items():
    rs.sort(key=lambda r: r["send_us"])
    gaps = [(b["send_us"] - a["end_us"]) / 1000 for a, b in zip(rs, rs[1:])]
    assert all(199 <= g <= 400 for g in gaps), f"session {s}: waits {gaps} ms, expected 200"
    p = [r["usage"]["prompt_tokens"] for r in rs]
    assert max(p) - min(p) <= 2, f"session {s}: prompts {p} grow without inherit_history"
print("ok: no history, fixed waits of 200 ms, gamma arrivals, notes for cancel and wandb")'

# a branching graph, a shared prefix, rampup_seconds and the evaluators' SLOs.
cat >"$WORK/branching.yml" <<YAML
session_generator:
  session_graph:
    type: branching
    num_layers_generator: {type: fixed, value: 3}
    layer_width_generator: {type: fixed, value: 2}
    fan_in_generator: {type: fixed, value: 1}
    request_wait_generator: {type: fixed, interval: 0}
  channels:
    - type: text
      shared_prefix_ratio: 0.5
      body_length_generator: {type: fixed, value: 40}
  output_spec: {text: {output_length_generator: {type: fixed, value: 2}}}
traffic_scheduler: {type: concurrent, target_concurrent_sessions: 2, rampup_seconds: 1}
runtime: {max_sessions: 2}
evaluators:
  - type: performance
    slos: [{name: ttfc, metric: ttfc, percentile: 0.99, value: 5, type: constant}]
YAML
run_veeksha branching --target "$MOCK_URL" --out "$WORK/branching-out"
check branching '
import json, sys, collections
w = sys.argv[1] + "/branching-out/"
rows = list(map(json.loads, open(w + "requests.jsonl")))
by = collections.defaultdict(list)
for r in rows: by[r["session"]].append(r)
assert sorted(by) == [0, 1], sorted(by)
for s, rs in by.items():
    assert len(rs) == 5, f"session {s}: {len(rs)} nodes, expected 1 + 2 + 2"
    assert sum(1 for r in rs if not r["parents"]) == 1, f"session {s}: not one root"
    assert all(r["new_input_length"] == 20 for r in rs), [r["new_input_length"] for r in rs]
first = {s: min(r["send_us"] for r in rs) for s, rs in by.items()}
assert max(first.values()) >= 450000, f"the second session started at {max(first.values())} us: no rampup"
assert "system_prompt_tokens: 20" in open(w + "config.yaml").read()
slo = json.load(open(w + "results.json"))["analysis"]["slo"]
assert [c["label"] for c in slo["checks"]] == ["TTFC p99 <= 5000 ms"], slo["checks"]
print("ok: branching 1 + 2 + 2 nodes, shared prefix of 20 tokens, rampup, the file SLO")'

# runtime max_sessions -1 with benchmark_timeout, and !expand on the arrival rate: sweep levels.
cat >"$WORK/sweep.yml" <<YAML
session_generator:
  session_graph: {type: single_request}
  output_spec: {text: {output_length_generator: {type: fixed, value: 2}}}
traffic_scheduler:
  type: rate
  interval_generator: {type: poisson, arrival_rate: !expand [10, 20]}
runtime: {max_sessions: -1, benchmark_timeout: 0.5}
YAML
run_veeksha sweep --target "$MOCK_URL" --out "$WORK/sweep-out"
check sweep '
import json, sys
d = json.load(open(sys.argv[1] + "/sweep-out/results.json"))
levels = [l["rate"] for l in d["levels"]]
assert levels == [10, 20], levels
assert all(l["requests_ok"] > 0 for l in d["levels"]), [l["requests_ok"] for l in d["levels"]]
print(f"ok: !expand arrival_rate is a sweep of rates {levels}")' 2>&1 | tee "$WORK/sweep.check"

# !expand on another key: one run per value.
cat >"$WORK/runs.yml" <<YAML
session_generator:
  session_graph: {type: single_request}
  channels: [{type: text, body_length_generator: {type: fixed, value: !expand [8, 16]}}]
  output_spec: {text: {output_length_generator: {type: fixed, value: 2}}}
traffic_scheduler: {type: concurrent, target_concurrent_sessions: 1, rampup_seconds: 0}
runtime: {max_sessions: 2}
YAML
run_veeksha runs --target "$MOCK_URL" --out "$WORK/runs-out"
check runs '
import json, sys
for k, n in ((1, 8), (2, 16)):
    rows = list(map(json.loads, open(f"{sys.argv[1]}/runs-out/run-{k}/requests.jsonl")))
    assert len(rows) == 2 and all(r["new_input_length"] == n for r in rows), (k, rows)
print("ok: !expand on a length is one run per value")'

# a capacity search: stampede capacity FILE, the search from start_value by expansion_factor.
cat >"$WORK/capacity.yml" <<YAML
start_value: 1
max_value: 2
expansion_factor: 2
max_iterations: 2
precision: 0
benchmark_config:
  session_generator:
    session_graph: {type: single_request}
    output_spec: {text: {output_length_generator: {type: fixed, value: 2}}}
  traffic_scheduler: {type: concurrent}
  runtime: {max_sessions: -1, benchmark_timeout: 0.5}
YAML
RUN_RC=0
timeout 60 "$STAMPEDE" capacity "$WORK/capacity.yml" --workers 1 --target "$MOCK_URL" \
    --out "$WORK/capacity-out" >"$WORK/capacity.out" 2>"$WORK/capacity.err" || RUN_RC=$?
[ "$RUN_RC" = 0 ] || fail "capacity exited $RUN_RC: $(tail -5 "$WORK/capacity.err")"
check capacity '
import json, sys
d = json.load(open(sys.argv[1] + "/capacity-out/results.json"))
cap = d["analysis"]["capacity"]
levels = [t["level"] for t in cap["trials"]]
assert cap["axis"] == "concurrency" and levels == [1, 2], cap
assert cap["frontier"]["level"] == 2 and cap["precision"] == 1, cap
print(f"ok: capacity search over concurrency {levels} (max_iterations 2)")'

# a managed server: ignored with --target, refused without.
cat >"$WORK/server.yml" <<YAML
server: {type: vllm, port: 30003}
session_generator: {session_graph: {type: single_request}}
runtime: {max_sessions: 1}
YAML
run_veeksha server --target "$MOCK_URL" --out "$WORK/server-out"
grep -qF "run: note: $WORK/server.yml:1:1: server: a managed vllm server (Veeksha starts it): ignored: --target is given" "$WORK/server.err" ||
    fail "no note for server: $(cat "$WORK/server.err")"
RUN_RC=0
timeout 20 "$STAMPEDE" run "$WORK/server.yml" --out "$WORK/server-none" >/dev/null 2>"$WORK/server-none.err" || RUN_RC=$?
[ "$RUN_RC" != 0 ] && grep -qxF "run: $WORK/server.yml:1:1: server: a managed vllm server (Veeksha starts it): stampede does not start servers; start it and give its URL with --target URL" "$WORK/server-none.err" ||
    fail "a managed server without --target: exit $RUN_RC, $(cat "$WORK/server-none.err")"

# a trace: Veeksha's timed_synthetic_session rows (a DAG by session_context, a legacy linear
# session) replay with their graph, the sessions arriving as the rate scheduler sends them (a fixed
# interval of 300 ms); a trace_file that does not exist is named with its key.
cat >"$WORK/t.jsonl" <<'JSONL'
{"session_id": 8, "input_length": 8, "new_input_length": 8, "output_length": 2, "session_context": {"node_id": 0, "parent_nodes": [], "history_parent": null, "wait_after_ready": 0.0}}
{"session_id": 8, "input_length": 8, "new_input_length": 8, "output_length": 2, "session_context": {"node_id": 1, "parent_nodes": [], "history_parent": null, "wait_after_ready": 0.1}}
{"session_id": 8, "input_length": 16, "new_input_length": 8, "output_length": 2, "session_context": {"node_id": 2, "parent_nodes": [0, 1], "history_parent": 1, "wait_after_ready": 0.2}}
{"session_id": 9, "input_length": 5, "new_input_length": 5, "output_length": 2}
{"session_id": 9, "input_length": 12, "new_input_length": 5, "output_length": 2, "wait_after_previous_response_s": 0.1}
JSONL
printf 'session_generator:\n  type: trace\n  trace_file: t.jsonl\n  wrap_mode: false\ntraffic_scheduler: {type: rate, interval_generator: {type: fixed, interval: 0.3}}\n' >"$WORK/trace.yml"
run_veeksha trace --target "$MOCK_URL" --out "$WORK/trace-out"
check trace '
import json, sys, collections
rows = list(map(json.loads, open(sys.argv[1] + "/trace-out/requests.jsonl")))
by = collections.defaultdict(list)
for r in rows: by[r["session"]].append(r)
assert sorted(by) == [0, 1] and len(by[0]) == 3 and len(by[1]) == 2, {k: len(v) for k, v in by.items()}
join = [r for r in by[0] if len(r["parents"]) == 2]
assert len(join) == 1 and join[0]["history_parent"] is not None, by[0]
assert min(r["intended_us"] for r in by[1]) == 300000, [r["intended_us"] for r in by[1]]
print("ok: a Veeksha trace keeps its DAG and chain; sessions 300 ms apart as its scheduler says")'
sed 's/t.jsonl/missing.jsonl/' "$WORK/trace.yml" >"$WORK/missing.yml"
refused() { # FILE MESSAGE
    local rc=0
    "$STAMPEDE" run "$WORK/$1.yml" --target "$MOCK_URL" --out "$WORK/$1-out" >/dev/null 2>"$WORK/$1.err" || rc=$?
    [ "$rc" != 0 ] || fail "$1 ran; it should be refused with: $2"
    grep -qxF "run: $WORK/$1.yml:$2" "$WORK/$1.err" || fail "$1: expected 'run: $WORK/$1.yml:$2', got: $(cat "$WORK/$1.err")"
}
refused missing "3:15: session_generator.trace_file: cannot read the trace 'missing.jsonl' ($WORK/missing.jsonl): No such file or directory"

# out of scope, each refused naming what.
printf '# to run with `veeksha decode`\nmodel: m\napi_base: http://localhost:30002/v1\ninput_lengths: [512]\nbatch_sizes: [1, 2]\nengine_chunk_size: 512\n' >"$WORK/decode.yml"
refused decode '4:1: input_lengths: a file for `veeksha decode` (its decode microbenchmark over input_lengths x batch_sizes), out of scope: stampede runs the files of `veeksha benchmark` (stampede run FILE) and `veeksha capacity-search` (stampede capacity FILE)'
printf 'model: m\ninput_lengths: [128, 256]\nsamples_per_length: 10\noutput_tokens: 1\n' >"$WORK/prefill.yml"
refused prefill '2:1: input_lengths: a file for `veeksha prefill` (its prefill microbenchmark over input_lengths), out of scope: stampede runs the files of `veeksha benchmark` (stampede run FILE) and `veeksha capacity-search` (stampede capacity FILE)'
printf 'client:\n  type: stt\n  provider: deepgram_nova\nsession_generator: {type: trace, trace_file: a.jsonl, flavor: {type: audio}}\n' >"$WORK/stt.yml"
refused stt '2:9: client.type: a stt client: audio (speech-to-text and text-to-speech) is out of scope: stampede drives text LLM endpoints (/v1/chat/completions, /v1/completions)'
printf 'client:\n  type: tts\n  provider: mistral\n' >"$WORK/tts.yml"
refused tts '2:9: client.type: a tts client: audio (speech-to-text and text-to-speech) is out of scope: stampede drives text LLM endpoints (/v1/chat/completions, /v1/completions)'
printf 'session_generator:\n  type: lmeval\n  tasks: [triviaqa]\n' >"$WORK/lmeval.yml"
refused lmeval '2:9: session_generator.type: lmeval sessions: lm-eval accuracy evaluation is out of scope: stampede measures serving performance, not task accuracy'
printf 'evaluators:\n  - type: performance\n  - type: accuracy_lmeval\n    bootstrap_iters: 10\n' >"$WORK/accuracy.yml"
refused accuracy '3:11: evaluators[1].type: an accuracy_lmeval evaluator: lm-eval accuracy evaluation is out of scope: stampede measures serving performance, not task accuracy'
echo "ok: every Veeksha construct runs on the mock; out-of-scope files are refused saying what"
