#!/bin/bash
# make soak: SOAK_MINUTES (default 10) of SOAK_STREAMS (default 2000) concurrent streams from one
# local worker (`stampede run --workers 1`) against the embedded mock with faults on (every kind
# of docs/mock.md's table but the connection-level `refused`, ~11 % of requests in all). Prints the
# RSS (and VmData, what is allocated, touched or not) of the controller (the `stampede run`
# process), the worker and the mock every minute, then judges the memory flat after warm-up:
#   for the controller and the worker, the RSS at the last minute <= 1.10 x the RSS at minute 2
#   + 4 MiB. Minutes 1-2 fill the streams, the connection pool and the allocator's arenas; the
#   4 MiB are fixed tables paged in as the run goes: a latency histogram is 264 KiB allocated at
#   once (common/histogram.c), its pages touched only as latencies reach new ranges (the 30 s
#   timeouts, the slow headers), and the controller holds dozens (per metric, phase, endpoint,
#   role). Over minutes 2-10 (~96,000 requests) the bound catches growth of ~60 bytes a request
#   in the controller and ~150 in the worker; LeakSanitizer (make asan, make test-asan-all)
#   catches unreferenced leaks of any size.
# It also fails if the run did not last, a process died, or no fault was injected or classed.
# Opt-in: not part of make test. Usage: STAMPEDE=build/stampede bash tests/soak/soak.sh
set -euo pipefail
: "${STAMPEDE:?STAMPEDE must name the built stampede binary}"
minutes=${SOAK_MINUTES:-10}
streams=${SOAK_STREAMS:-2000}
[ "$minutes" -ge 3 ] || { echo "soak: SOAK_MINUTES must be at least 3 (warm-up is 2)" >&2; exit 2; }
work=$(mktemp -d /tmp/stampede-soak.XXXXXX)
run_pid=""
cleanup() {
    [ -z "$run_pid" ] || kill "$run_pid" 2>/dev/null || true
    [ -z "$run_pid" ] || wait "$run_pid" 2>/dev/null || true
    [ -n "${KEEP_WORK:-}" ] && echo "soak: kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT

# 200-token replies at 50 ms a token: a stream lasts ~10 s, so 2,000 streams make ~200 req/s and
# ~40,000 tokens/s. The stall outlasts the 30 s request timeout (class timeout).
faults="500:0.01,503:0.01,429:0.01,context-length:0.005,reset-headers:0.01,reset-mid:0.01"
faults="$faults,stall:0.005,malformed:0.01,truncated:0.01,no-done:0.01,slow-headers:0.01/500"
faults="$faults,event-error:0.01,not-sse:0.005"
faults=${SOAK_FAULTS-$faults} # SOAK_FAULTS= (empty): no faults, to compare
cat >"$work/soak.yaml" <<EOF
target:
  ignore_eos: true
  timeout: 30s
workload:
  kind: requests
  input_tokens: 64
  output_tokens: 200
scheduler:
  kind: concurrent
  concurrency: $streams
limits:
  duration: ${minutes}m
mock:
  ttft: 100ms
  itl: 50ms
EOF
[ -z "$faults" ] || echo "  faults: '$faults'" >>"$work/soak.yaml"

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
# VmData: the heap and anonymous mappings, allocated whether touched yet or not
data_kib() { awk '/^VmData:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
# The child of the run (by parent pid) whose command line has word $1 (worker, mock).
child() {
    ps --ppid "$run_pid" -o pid=,args= | awk -v w="$1" '{for (i = 2; i <= NF; i++) if ($i == w) {print $1; exit}}'
}

"$STAMPEDE" run "$work/soak.yaml" --workers 1 --allow-invalid --out "$work/out" \
    >"$work/run.out" 2>"$work/run.err" &
run_pid=$!
worker="" mock=""
for ((i = 0; i < 200 && (${#worker} == 0 || ${#mock} == 0); i++)); do
    sleep 0.1
    worker=$(child worker)
    mock=$(child mock)
done
[ -n "$worker" ] && [ -n "$mock" ] || { echo "soak: no worker or mock started: $(cat "$work/run.err")" >&2; exit 1; }
for ((i = 0; i < 300; i++)); do
    grep -q "all workers ready" "$work/run.err" && break
    sleep 0.1
done
grep -q "all workers ready" "$work/run.err" || { echo "soak: the run did not start: $(cat "$work/run.err")" >&2; exit 1; }
echo "soak: $streams streams for $minutes min, faults $faults"
printf '%6s %22s %22s %10s  %s\n' minute "controller RSS/data KiB" "worker RSS/data KiB" "mock RSS" requests
declare -a ctl_rss wrk_rss
start=$(date +%s)
for ((m = 1; m <= minutes; m++)); do
    while (($(date +%s) < start + 60 * m)); do
        kill -0 "$run_pid" 2>/dev/null && kill -0 "$worker" 2>/dev/null ||
            { echo "soak: a process ended at minute $m: $(tail -5 "$work/run.err")" >&2; exit 1; }
        sleep 1
    done
    ctl_rss[m]=$(rss_kib "$run_pid")
    wrk_rss[m]=$(rss_kib "$worker")
    ok=$(grep -Eo '[0-9]+ ok, [0-9]+ failed' "$work/run.err" | tail -1)
    printf '%6d %22s %22s %10s  %s\n' "$m" "${ctl_rss[m]}/$(data_kib "$run_pid")" \
        "${wrk_rss[m]}/$(data_kib "$worker")" "$(rss_kib "$mock")" "${ok:-?}"
done
rc=0
wait "$run_pid" || rc=$?
run_pid=""
[ "$rc" -lt 128 ] || { echo "soak: the run was killed by signal $((rc - 128))" >&2; exit 1; }
[ -f "$work/out/results.json" ] || { echo "soak: no results.json: $(tail -5 "$work/run.err")" >&2; exit 1; }
python3 - "$work/out/results.json" "$faults" <<'PY' || exit 1
import json, sys
level = json.load(open(sys.argv[1]))["levels"][0]
ok, failed = level["requests_ok"], level["requests_failed"]
errors = level.get("errors", {})
print("soak: %d ok, %d failed; error classes %s" % (ok, failed, json.dumps(errors, sort_keys=True)))
if ok == 0 or (failed == 0 and sys.argv[2]):
    sys.exit("soak: expected both successes and injected faults")
PY
flat=1
for who in controller worker; do
    if [ $who = controller ]; then warm=${ctl_rss[2]} last=${ctl_rss[minutes]}; else warm=${wrk_rss[2]} last=${wrk_rss[minutes]}; fi
    if ((last * 100 > warm * 110 + 4096 * 100)); then
        echo "soak: $who RSS not flat: $last KiB at minute $minutes > 1.10 x $warm KiB at minute 2 + 4 MiB" >&2
        flat=0
    else
        echo "soak: $who RSS flat: $last KiB at minute $minutes <= 1.10 x $warm KiB at minute 2 + 4 MiB"
    fi
done
[ $flat = 1 ] || exit 1
echo "soak: ok"
