#!/usr/bin/env bash
# `stampede report DIR --definitions vllm,aiperf,guidellm,sglang` on a real trace: the embedded mock
# with EAGLE-3 speculative decoding (chunks of 1-4 tokens, counted by continuous usage) and 8
# reasoning tokens per reply. Every tool's figures equal an independent recomputation from
# requests.jsonl, the tools disagree where their definitions do, and a run without a trace is
# refused with a message saying so.
# ctest: parallel (recomputed from the same trace; no timing bound)
set -euo pipefail
source "$STAMPEDE_SRC/tests/integration/protocol_lib.sh"

cat >"$WORK/run.yaml" <<'YAML'
seed: 11
target:
  api: chat
  ignore_eos: true
  continuous_usage_stats: true
workload:
  kind: requests
  input_tokens: 64
  output_tokens: 48
scheduler:
  kind: concurrent
  concurrency: 4
limits:
  max_requests: 16
mock:
  profile: h200-llama70b-eagle3
  reasoning_tokens: "8"
YAML
run_bounded 90 "$WORK/run.out" "$WORK/run.err" "$WORK/run.yaml" --workers 1 --out "$WORK/out" --trace
[ "$RUN_RC" = 0 ] || fail "stampede run exited $RUN_RC: $(tail -5 "$WORK/run.err")"

rc=0
timeout 30 "$STAMPEDE" report "$WORK/out" --definitions vllm,aiperf,guidellm,sglang \
    >"$WORK/table.txt" 2>"$WORK/report.err" || rc=$?
[ "$rc" = 0 ] || fail "report --definitions exited $rc: $(cat "$WORK/report.err")"
timeout 30 python3 "$STAMPEDE_SRC/tests/integration/definitions_check.py" "$WORK/out" \
    "$WORK/table.txt" || { cat "$WORK/table.txt" >&2; fail "definitions differ"; }

# the same results without the trace: refused, naming the file and --trace
mkdir "$WORK/notrace"
cp "$WORK/out/results.json" "$WORK/notrace/"
rc=0
timeout 30 "$STAMPEDE" report "$WORK/notrace" --definitions vllm >/dev/null 2>"$WORK/notrace.err" ||
    rc=$?
[ "$rc" = 1 ] || fail "report without a trace exited $rc"
grep -q "notrace/requests.jsonl: .*run with --trace" "$WORK/notrace.err" ||
    fail "no clear refusal: $(cat "$WORK/notrace.err")"
rc=0
timeout 30 "$STAMPEDE" report "$WORK/out" --definitions vllm,tgi >/dev/null 2>"$WORK/tool.err" || rc=$?
[ "$rc" = 2 ] && grep -q "'tgi' is not a tool" "$WORK/tool.err" ||
    fail "an unknown tool was not refused (rc $rc): $(cat "$WORK/tool.err")"
echo "PASS"
