#!/bin/bash
# The session figures against a server that is not our mock: truth_server.py writes its 10 tokens
# 20 ms apart, 2 or 3 events per send(), and never sends a `usage` block. Chats of 4 turns with a
# 300 ms think time, 2 workers:
#  - every session is counted, and its idle time is its 3 think times (900 ms + client gaps);
#  - with no usage the prefix-cache hit rate is not measured (null, not 0), while the prompt reuse
#    ratio, from the words sent, is measured and between 0 and 1;
#  - decode overlap and the per-role figures are there.
source "$(dirname "$0")/protocol_lib.sh"

start_test_server truth_server.py sessions --tokens 10 --gap-ms 20 --groups 2,3
cat >"$WORK/chat.yaml" <<YAML
seed: 6
target:
  api: chat
  model: truth
  endpoints: [$URL]
workload:
  kind: chat
  turns: 4
  input_tokens: 40
  output_tokens: 10
  think_time: 300ms
  system_prompt_tokens: 64
scheduler:
  kind: concurrent
  concurrency: 4
limits:
  max_sessions: 8
YAML

run_bounded 120 "$WORK/table" "$WORK/run.err" "$WORK/chat.yaml" --workers 2 --out "$WORK/out"
assert_equal "exit status" "$RUN_RC" 0
check_results "$WORK/out" <<'PY'
s = level["sessions"]
assert s["count"] == 8, s
assert s["idle_ms"]["min"] >= 899.9, s["idle_ms"]
assert abs(s["idle_ms"]["mean"] - 900) <= 0.15 * 900, s["idle_ms"]
assert s["critical_path_ms"]["max"] <= s["makespan_ms"]["max"], s
assert level["prefix_cache_hit_rate"] is None, level["prefix_cache_hit_rate"]
assert 0 < level["prompt_reuse_ratio"] < 1, level["prompt_reuse_ratio"]
overlap = level["decode_overlap"]
assert overlap and overlap[0] == {"k": 1, "share": 1.0}, overlap
role = level["roles"]["role 0"]
assert role["requests"] == 32 and role["prompt_tokens_mean"] > 0, role
print(f"sessions {s['count']}, idle mean {s['idle_ms']['mean']:.1f} ms, "
      f"prompt reuse {level['prompt_reuse_ratio']:.3f}, overlap {overlap}")
PY
echo "ok: session figures hold against a coalescing server without usage"
