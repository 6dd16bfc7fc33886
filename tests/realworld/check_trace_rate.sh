# make realworld: Mooncake's conversation trace cut to its first 200 rows at time_scale 0.5,
# replayed against the embedded mock (1 ms per token, so the client and not the server sets the
# pace): the requested rate must be the rate in force (those rows' own, (n - 1) / the n-th
# arrival x 0.5, from the file itself) within 2 %, not the whole file's, and no shortfall warned of.
# About 40 s.
set -u
source "$(dirname "$0")/row.sh"
trace=$REALWORLD/traces/mooncake/conversation_trace.jsonl
[ -f "$trace" ] || { row "$trace" absent "-" note; exit 0; }
dir=$RW_SCRATCH/trace_rate
mkdir -p "$dir"
cat >"$dir/cut.yaml" <<YAML
seed: 1
target: {ignore_eos: true}
workload:
  kind: trace
  trace: {path: $trace, format: mooncake, time_scale: 0.5}
scheduler: {kind: rate}
limits: {max_sessions: 200}
mock: {ttft: 1ms, itl: 1ms}
validity: {max_schedule_lag: 2s}
YAML
if ! timeout 300 "$STAMPEDE" run "$dir/cut.yaml" --workers 2 --out "$dir/out" >"$dir/out.txt" \
    2>"$dir/err.txt"; then
    row "$trace" no "the run failed: $(tail -1 "$dir/err.txt")" FAIL
    exit 1
fi
verdict=$(python3 - "$trace" "$dir/out/results.json" <<'PY'
import json, sys
ts = [json.loads(line)["timestamp"] for line in open(sys.argv[1])]
level = json.load(open(sys.argv[2]))["levels"][0]
rate, n = level["rate"], 200
in_force = (n - 1) / (ts[n - 1] / 1000 * 0.5)
whole = (len(ts) - 1) / (ts[-1] / 1000 * 0.5)
ok = abs(rate["requested_per_s"] - in_force) <= 0.02 * in_force and rate["warning"] is None
print(f"{'ok' if ok else 'FAIL'} requested {rate['requested_per_s']:.3f}/s, in force "
      f"{in_force:.3f}/s (file {whole:.3f}/s), achieved {rate['achieved_per_s']:.3f}/s, "
      f"warning: {'none' if rate['warning'] is None else 'yes'}")
PY
)
row "$trace" "200 rows" "${verdict#* }" "${verdict%% *}"
[ "${verdict%% *}" = ok ]
