#!/usr/bin/env bash
# make realworld: every trace in $REALWORLD/traces loaded by stampede as a timed replay (Mooncake's
# *.jsonl as format mooncake, Azure's *.csv as format azure) and replayed for 1 s against a
# `stampede mock` on loopback (its context length raised: Mooncake prompts reach 40k+ tokens).
# Figures: the rows stampede read (the replay's session count, which limits.max_sessions becomes
# without wrap, in OUT/config.yaml) against the file's data lines, the trace's mean rate (the
# replay's requested rate) and the span it implies, and the requests sent in that second. ok when
# every row was read and the replay sent requests, none failing; a refusal or a count that
# differs FAILs.
set -u
source "$(dirname "$0")/row.sh"
dir=$REALWORLD/traces
[ -d "$dir" ] || { row "traces" "absent" "no traces" "note"; exit 0; }
work=$RW_SCRATCH/traces
mkdir -p "$work"
"$STAMPEDE" mock --port 0 --ttft-ms 1 --itl-ms 1 --max-model-len 1000000 >"$work/mock.log" 2>&1 &
mock=$!
trap 'kill "$mock" 2>/dev/null; wait "$mock" 2>/dev/null' EXIT
for _ in $(seq 50); do grep -q 'listening on' "$work/mock.log" && break; sleep 0.1; done
addr=$(grep -o 'listening on [0-9.]*:[0-9]*' "$work/mock.log" | cut -d' ' -f3)
[ -n "$addr" ] || { echo "check_traces: the mock did not start: $(cat "$work/mock.log")" >&2; exit 1; }
failed=0
for f in "$dir"/*/*.jsonl "$dir"/*/*.csv; do
    [ -f "$f" ] || continue
    case $f in
    *.csv) format=azure header=1 ;;
    *) format=mooncake header=0 ;;
    esac
    name=$(basename "$f")
    out=$work/$name
    cat >"$out.yaml" <<YAML
target: {api: chat, model: mock-llama, ignore_eos: true}
workload:
  kind: trace
  trace: {path: $f, format: $format}
scheduler: {kind: rate}
limits: {duration: 1s}
YAML
    rc=0
    timeout 60 "$STAMPEDE" run "$out.yaml" --target "http://$addr" --workers 1 --out "$out" \
        --allow-invalid >"$out.out" 2>"$out.err" || rc=$?
    lines=$(grep -cv '^[[:space:]]*$' "$f")
    lines=$((lines - header))
    if [ "$rc" != 0 ]; then
        row "$f" "$format" "exit $rc: $(grep -m1 -v '^run: note' "$out.err" | cut -c1-50)" "FAIL"
        failed=1
        continue
    fi
    read -r rows rate ok bad <<<"$(python3 - "$out" <<'PY'
import json, re, sys
cfg = open(sys.argv[1] + "/config.yaml").read()
rows = int(re.search(r"max_sessions: (\d+)", cfg).group(1))
level = json.load(open(sys.argv[1] + "/results.json"))["levels"][0]
print(rows, f"{level['rate']['requested_per_s']:.3f}", level["requests_ok"], level["requests_failed"])
PY
)"
    span=$(awk -v n="$rows" -v r="$rate" 'BEGIN { if (r > 0) printf "%.0f", n / r; else print "?" }')
    verdict=ok
    if [ "$rows" != "$lines" ] || [ "$ok" = 0 ] || [ "$bad" != 0 ]; then verdict=FAIL failed=1; fi
    row "$f" "$format" "$rows of $lines rows, $rate req/s (~${span}s), 1s: $ok ok $bad failed" "$verdict"
done
exit $failed
