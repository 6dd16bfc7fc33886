#!/usr/bin/env bash
# Runs every libFuzzer target of a STAMPEDE_FUZZ build in turn (one at a time: the machine may be
# shared), each for FUZZ_SECONDS or until FUZZ_RUNS inputs, starting from its checked-in corpus
# (tests/fuzz/corpus/NAME, never written to: new inputs go to BUILD/fuzz-corpus/NAME), and prints
# per target the inputs executed, libFuzzer's final coverage (cov: edges, ft: features) and the
# crashes saved under BUILD/fuzz-crashes/NAME. tests/fuzz/NAME.dict, when there is one, is its
# libFuzzer dictionary. Exits non-zero when a target crashed.
# Usage: tests/fuzz/run.sh BUILD_DIR [NAME...]   (default: every tests/fuzz/fuzz_*.c)
set -u
build=${1:?usage: run.sh BUILD_DIR [NAME...]}
shift
src=$(cd "$(dirname "$0")" && pwd)
seconds=${FUZZ_SECONDS:-120}
runs=${FUZZ_RUNS:--1}
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for f in "$src"/fuzz_*.c; do
        n=$(basename "$f" .c)
        names+=("${n#fuzz_}")
    done
fi
printf '%-10s %12s %8s %8s %10s %8s  %s\n' target execs exec/s cov ft crashes log
failed=0
for name in "${names[@]}"; do
    bin="$build/fuzz_$name"
    if [ ! -x "$bin" ]; then
        echo "$bin: not built (configure with CC=clang -DSTAMPEDE_FUZZ=ON)" >&2
        exit 2
    fi
    corpus="$build/fuzz-corpus/$name"
    crashes="$build/fuzz-crashes/$name"
    log="$build/fuzz-$name.log"
    mkdir -p "$corpus" "$crashes"
    dict=()
    [ -f "$src/$name.dict" ] && dict=(-dict="$src/$name.dict") # keys and tokens it would guess slowly
    # -fork=0: stop at the first crash and keep it; -timeout: an input slower than 10 s is a hang.
    "$bin" -max_total_time="$seconds" -runs="$runs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$crashes/" "${dict[@]}" "$corpus" "$src/corpus/$name" \
        >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+' "$log" | grep -E ' cov: ' | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    found=$(find "$crashes" -type f | wc -l)
    printf '%-10s %12s %8s %8s %10s %8s  %s\n' "$name" "${execs:-?}" "${speed:-?}" "${cov:-?}" \
        "${ft:-?}" "$found" "$log"
    if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
        failed=1
        grep -E 'invariant failed|ERROR: |SUMMARY: ' "$log" | head -3 | sed 's/^/    /'
    fi
done
exit $failed
