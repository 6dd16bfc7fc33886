#!/bin/bash
# Chats of 4 turns with a fixed 300 ms think time on the embedded mock (default engine, prefix
# cache on), 2 workers, sticky routing over two mocks: every session is counted, its idle time is
# its 3 think times (900 ms, plus only the client's small gaps), the critical path is the sum of its
# request durations and never exceeds its makespan (checked per session from the trace), affinity
# held, the prompts reuse the previous turn and the mock's prefix cache hits.
source "$(dirname "$0")/protocol_lib.sh"

start_mock
URL1=$MOCK_URL
start_mock
URL2=$MOCK_URL
cat >"$WORK/chat.yaml" <<YAML
seed: 5
target:
  api: chat
  model: mock-llama
  ignore_eos: true
  routing: sticky
  endpoints: [$URL1, $URL2]
workload:
  kind: chat
  turns: 4
  input_tokens: 40
  output_tokens: 12
  think_time: 300ms
  system_prompt_tokens: 64
scheduler:
  kind: concurrent
  concurrency: 4
limits:
  max_sessions: 8
YAML

run_bounded 120 "$WORK/table" "$WORK/run.err" "$WORK/chat.yaml" --workers 2 --trace \
    --out "$WORK/out"
[ "$RUN_RC" = 0 ] || fail "stampede run exited $RUN_RC: $(tail -5 "$WORK/run.err")"
R="$WORK/out/results.json"
[ -f "$R" ] || fail "no results.json"

assert_equal "sessions counted" "$(json_value "$R" 'l["sessions"]["count"]')" 8
assert_equal "requests per session" "$(json_value "$R" 'l["sessions"]["requests"]["max"]')" 4
# Idle is the think time: never below 900 ms, and within 15 % above it on a loaded machine.
idle_min=$(json_value "$R" 'l["sessions"]["idle_ms"]["min"]')
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 899.9 else 1)" "$idle_min" ||
    fail "idle min $idle_min ms is below the 900 ms of think time"
assert_within "idle mean (ms)" "$(json_value "$R" 'l["sessions"]["idle_ms"]["mean"]')" 900 0.15
assert_equal "role share" "$(json_value "$R" 'l["sessions"]["critical_path_share"]')" \
    '{"role 0": 1.0}'
assert_equal "affinity held" "$(json_value "$R" 'l["affinity"]["held"]')" True
assert_equal "sessions checked" "$(json_value "$R" 'l["affinity"]["sessions_checked"]')" 8
assert_equal "roles" "$(json_value "$R" 'sorted(l["roles"]["role 0"])')" \
    '["completion_tokens_mean", "errors", "errors_context_length", "errors_http_4xx", "itl_ms", "prompt_tokens_mean", "requests", "tpot_ms", "ttfc_ms", "ttft_ms"]'
assert_equal "role requests" "$(json_value "$R" 'l["roles"]["role 0"]["requests"]')" 32

# Per session from the trace: makespan = first send -> last end, critical path = the durations
# of the chain; the results' histograms hold the same values (to their resolution).
python3 - "$WORK/out/requests.jsonl" "$R" <<'PY' || fail "per-session check failed"
import json, sys
sessions = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    sessions.setdefault(r["session"], []).append(r)
res = json.load(open(sys.argv[2]))["levels"][0]
makespans, paths = [], []
for sid, recs in sessions.items():
    first = min(r["send_us"] for r in recs)
    last = max(r["end_us"] for r in recs)
    path = sum(r["end_us"] - r["send_us"] for r in recs)
    if path > last - first:
        sys.exit(f"session {sid}: critical path {path} us > makespan {last - first} us")
    makespans.append((last - first) / 1e3)
    paths.append(path / 1e3)
assert len(sessions) == 8, len(sessions)
def close(a, b):
    return abs(a - b) <= 0.01 * b + 0.01
s = res["sessions"]
for key, values in (("makespan_ms", makespans), ("critical_path_ms", paths)):
    if not close(s[key]["max"], max(values)) or not close(s[key]["min"], min(values)):
        sys.exit(f"{key}: results {s[key]['min']}..{s[key]['max']}, trace {min(values)}..{max(values)}")
    if not close(s[key]["mean"], sum(values) / len(values)):
        sys.exit(f"{key}: mean {s[key]['mean']}, trace {sum(values) / len(values)}")
PY

reuse=$(json_value "$R" 'l["prompt_reuse_ratio"]')
hit=$(json_value "$R" 'l["prefix_cache_hit_rate"]')
python3 -c "import sys; r,h=map(float,sys.argv[1:]); sys.exit(0 if 0.5<r<1 and 0<h<=1 else 1)" \
    "$reuse" "$hit" || fail "prompt_reuse_ratio $reuse, prefix_cache_hit_rate $hit"
overlap=$(json_value "$R" 'l["decode_overlap"][0]')
assert_equal "decode overlap at k=1" "$overlap" '{"k": 1, "share": 1.0}'
wall=$(json_value "$R" 'l["wall_clock_s"]')
python3 -c "import sys; sys.exit(0 if 1.8 <= float(sys.argv[1]) < 60 else 1)" "$wall" ||
    fail "wall_clock_s $wall: two rounds of sessions with 0.9 s of think time each take > 1.8 s"
grep -q "critical path" "$WORK/table" || fail "no sessions table on stdout"
grep -q "affinity held" "$WORK/table" || fail "no affinity line on stdout"
echo "ok: 8 sessions, idle mean $(json_value "$R" 'round(l["sessions"]["idle_ms"]["mean"],1)') ms," \
    "reuse $reuse, cache hits $hit, wall clock $wall s"
