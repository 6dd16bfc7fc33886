#!/bin/bash
# A run and a sweep leave report.md, results.csv and hgrm/*.hgrm beside results.json, and
# `stampede report DIR` re-renders them byte for byte. The workload file's deployment: map
# reaches config.yaml, results.json run.deployment and the report's Deployment Details. A results
# file of another schema version and a missing run directory exit 1 naming the file.
# ctest: parallel (files and byte-for-byte re-renders only)
source "$(dirname "$0")/protocol_lib.sh"

cat >"$WORK/run.yaml" <<YAML
seed: 3
target: {ignore_eos: true}
workload: {input_tokens: 64, output_tokens: 16}
scheduler: {kind: concurrent, concurrency: 2}
limits: {max_requests: 20}
deployment:
  Model: "mock-llama | simulated"
  GPU: none
  max-num-seqs: 64
YAML
run_bounded 120 /dev/null "$WORK/run.err" "$WORK/run.yaml" --workers 1 --out "$WORK/run"
[ "$RUN_RC" = 0 ] || fail "run exited $RUN_RC: $(tail -5 "$WORK/run.err")"
for f in report.md results.csv hgrm/01-c2-ttft.hgrm hgrm/01-c2-tpot.hgrm hgrm/01-c2-itl.hgrm \
    hgrm/01-c2-e2e.hgrm hgrm/01-c2-ttfc.hgrm; do
    [ -s "$WORK/run/$f" ] || fail "the run left no $f"
done
for f in report.md results.csv hgrm/01-c2-ttft.hgrm; do
    assert_equal "mode of $f" "$(stat -c %a "$WORK/run/$f")" 640
done
grep -qxF '| Model | mock-llama \| simulated |' "$WORK/run/report.md" ||
    fail "report.md lacks the deployment's Model row"
assert_equal "run.deployment in results.json" \
    "$(json_value "$WORK/run/results.json" 'r["run"]["deployment"]["max-num-seqs"]')" 64
grep -q '^deployment: {"Model":"mock-llama | simulated"' "$WORK/run/config.yaml" ||
    fail "config.yaml lacks the deployment map"
assert_equal "results.csv rows (header, all, the endpoint, the role)" \
    "$(wc -l <"$WORK/run/results.csv")" 4
assert_equal ".hgrm total count = ttft_ms.count" \
    "$(sed -n 's/^#\[Max .*Total count *= *\([0-9]*\)\]$/\1/p' "$WORK/run/hgrm/01-c2-ttft.hgrm")" \
    "$(json_value "$WORK/run/results.json" 'l["ttft_ms"]["count"]')"

cp -r "$WORK/run" "$WORK/first"
rm -r "$WORK/run/report.md" "$WORK/run/results.csv" "$WORK/run/hgrm"
timeout 30 "$STAMPEDE" report "$WORK/run" >"$WORK/report.out" 2>"$WORK/report.err" ||
    fail "stampede report exited $?: $(cat "$WORK/report.err")"
for f in report.md results.csv hgrm/01-c2-ttft.hgrm hgrm/01-c2-itl.hgrm; do
    cmp "$WORK/first/$f" "$WORK/run/$f" || fail "re-rendered $f differs from the run's"
done

cat >"$WORK/sweep.yaml" <<YAML
seed: 5
target: {ignore_eos: true}
workload: {kind: chat, turns: 2, input_tokens: 64, output_tokens: 8, think_time: 50ms}
scheduler: {kind: concurrent}
sweep:
  concurrency: [1, 2]
  warmup: 300ms
  snapshots: {count: 2, duration: 500ms}
  drain: 3s
  repeat: 2
YAML
run_bounded 180 /dev/null "$WORK/sweep.err" "$WORK/sweep.yaml" --workers 1 --out "$WORK/sweep"
[ "$RUN_RC" = 0 ] || fail "sweep exited $RUN_RC: $(tail -5 "$WORK/sweep.err")"
grep -q '^| 2 | ' "$WORK/sweep/report.md" || fail "the sweep's report.md has no row for level 2"
assert_equal "sweep results.csv rows (header + 2 levels x 2 repetitions x 3 slices)" \
    "$(wc -l <"$WORK/sweep/results.csv")" 13
[ -s "$WORK/sweep/hgrm/02-c2-ttft.hgrm" ] || fail "the sweep left no hgrm/02-c2-ttft.hgrm"
cp "$WORK/sweep/report.md" "$WORK/sweep.md"
cp "$WORK/sweep/results.csv" "$WORK/sweep.csv"
timeout 30 "$STAMPEDE" report "$WORK/sweep" >/dev/null 2>"$WORK/report.err" ||
    fail "stampede report on the sweep exited $?: $(cat "$WORK/report.err")"
cmp "$WORK/sweep.md" "$WORK/sweep/report.md" || fail "the sweep's report.md re-rendered differs"
cmp "$WORK/sweep.csv" "$WORK/sweep/results.csv" || fail "the sweep's results.csv differs"

mkdir "$WORK/old"
echo '{"schema_version": 1, "levels": []}' >"$WORK/old/results.json"
rc=0
"$STAMPEDE" report "$WORK/old" >/dev/null 2>"$WORK/old.err" || rc=$?
assert_equal "exit status on schema_version 1" "$rc" 1
grep -qF "$WORK/old/results.json: schema_version 1, this stampede reads 2" "$WORK/old.err" ||
    fail "the schema error does not name the file: $(cat "$WORK/old.err")"
rc=0
"$STAMPEDE" report "$WORK/missing" >/dev/null 2>"$WORK/missing.err" || rc=$?
assert_equal "exit status on a missing run directory" "$rc" 1
grep -qF "$WORK/missing: No such file or directory" "$WORK/missing.err" ||
    fail "the error does not name the directory: $(cat "$WORK/missing.err")"
echo "PASS"
