#!/usr/bin/env bash
# make realworld: every sample config Veeksha ships ($REALWORLD/configs/veeksha/sample_configs) through
# stampede as it is: `veeksha benchmark` files with `stampede run FILE --target MOCK`,
# `veeksha capacity-search` files with `stampede capacity FILE --target MOCK`, MOCK a `stampede mock`
# on loopback (fixed timings, fast). stampede has no dry-run mode and the samples' own timeouts run
# to 20 minutes, so each run is cut with SIGINT after a short cap (RW_VEEKSHA_CAP, 15 s; capacity
# searches RW_VEEKSHA_CAPACITY_CAP, 40 s): stampede writes the partial results (exit 130).
# Verdicts: a runnable sample is ok when it ran requests and none failed; an audio, lm-eval or
# microbenchmark sample is ok when refused saying it is out of scope; a sample whose trace file
# Veeksha does not ship is a note when refused naming the key and the path. Anything else FAILs.
set -u
source "$(dirname "$0")/row.sh"
dir=$REALWORLD/configs/veeksha/sample_configs
[ -d "$dir" ] || { row "configs/veeksha" "absent" "no sample configs" "note"; exit 0; }
work=$RW_SCRATCH/veeksha
mkdir -p "$work"
"$STAMPEDE" mock --port 0 --ttft-ms 1 --itl-ms 1 >"$work/mock.log" 2>&1 &
mock=$!
trap 'kill "$mock" 2>/dev/null; wait "$mock" 2>/dev/null' EXIT
for _ in $(seq 50); do grep -q 'listening on' "$work/mock.log" && break; sleep 0.1; done
addr=$(grep -o 'listening on [0-9.]*:[0-9]*' "$work/mock.log" | cut -d' ' -f3)
[ -n "$addr" ] || { echo "check_veeksha: the mock did not start: $(cat "$work/mock.log")" >&2; exit 1; }
url=http://$addr
failed=0

# Sums requests ok and failed over every results.json under $1 (a run, a sweep, runs run-N).
figures() {
    python3 - "$1" <<'PY'
import glob, json, os, sys
ok = failed = levels = 0
partial = False
files = [f for f in glob.glob(os.path.join(sys.argv[1], "**", "results.json"), recursive=True)
         if "/levels/" not in f]
for f in files:
    d = json.load(open(f))
    partial = partial or d.get("partial", False)
    for l in d.get("levels", []):
        levels += 1
        ok += l.get("requests_ok", 0)
        failed += l.get("requests_failed", 0)
print(ok, failed, levels, len(files), "partial" if partial else "whole")
PY
}

for f in "$dir"/*.yml; do
    name=$(basename "$f" .yml)
    out=$work/$name
    cmd=run cap=${RW_VEEKSHA_CAP:-15}
    if grep -q '^benchmark_config:' "$f"; then cmd=capacity cap=${RW_VEEKSHA_CAPACITY_CAP:-40}; fi
    expect=runs
    grep -qE '^# to run with `veeksha (benchmark|capacity-search)`' "$f" || expect=refused
    grep -qE '^\s+type: lmeval' "$f" && expect=refused
    rc=0
    timeout --preserve-status -s INT -k 20 "$cap" "$STAMPEDE" "$cmd" "$f" --target "$url" --workers 1 --out "$out" \
        >"$out.out" 2>"$out.err" || rc=$?
    notes=$(grep -c '^run: note:' "$out.err")
    refusal=$(grep -E "^(run|capacity): $dir/" "$out.err" | head -n 1 | sed "s|^[a-z]*: $dir/||")
    if [ -z "$refusal" ] && { [ "$rc" = 0 ] || [ "$rc" = 130 ]; }; then
        read -r ok bad levels runs whole <<<"$(figures "$out")"
        recognised=$cmd
        what="$ok ok, $bad failed, $levels levels, $runs runs, $notes notes"
        [ "$whole" = partial ] && what="$what, cut ${cap}s"
        verdict=ok
        if [ "$expect" != runs ] || [ "$ok" = 0 ] || [ "$bad" != 0 ]; then verdict=FAIL; fi
    elif [ -n "$refusal" ] && [ "$expect" = refused ] && grep -q 'out of scope' <<<"$refusal"; then
        recognised=refused what=$(sed 's/^[^ ]* //' <<<"$refusal") verdict=ok
    elif [ -n "$refusal" ] && grep -q 'trace_file: cannot read the trace' <<<"$refusal"; then
        recognised=refused what="its trace file is not shipped (key and path named)" verdict=note
    else
        recognised="exit $rc" what=${refusal:-$(tail -n 1 "$out.err")} verdict=FAIL
    fi
    row "$f" "$recognised" "${what:0:60}" "$verdict"
    [ "$verdict" = FAIL ] && failed=1
done
exit $failed
