#!/usr/bin/env bash
# The reference studies in virtual time (issue 21, docs/simulate.md "The reference studies"):
#   1. the three diamond presets (examples/diamond-{autogen,langgraph,a2a}.yaml) against the
#      tp1-fp8, tp2-fp8 and tp2-fp16 profiles at concurrency 1...64 through `stampede simulate
#      --study`: the scaling report's §3-§5 tables;
#   2. examples/sweep-50-160.yaml against h200-llama70b (Phase 0) and h200-llama70b-eagle3
#      (Phase 3), then `stampede compare`: the EAGLE-3 report's Phase 0 vs Phase 3 analysis.
# Prints the tables and how long each part took; fails only when a command fails (`make bench`:
# nothing passes or fails on time). STUDY=diamond or STUDY=eagle3 runs one part.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${STAMPEDE_BIN:-$PWD/${STAMPEDE_BUILD:-build}/stampede}
OUT=$(mktemp -d /tmp/stampede-studies.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

if [ "${STUDY:-diamond}" = diamond ] || [ -z "${STUDY:-}" ]; then
    start=$(date +%s%N)
    # the scaling report's experiment as `stampede simulate --study` runs it (docs/simulate.md
    # "The scaling study"): each level the preset's own 48 tasks, c = 1 ... 64; the report's
    # matrix (autogen on every profile, every preset on tp1-fp8) and its §3-§5 tables
    "$BIN" simulate --study examples/diamond-autogen.yaml examples/diamond-langgraph.yaml \
        examples/diamond-a2a.yaml --profile tp1-fp8 --profile tp2-fp8 --profile tp2-fp16 \
        --concurrency 1,2,4,8,16,32,48,64 --out "$OUT/study" 2>"$OUT/study.err" ||
        { tail -5 "$OUT/study.err" >&2; exit 1; }
    echo "diamond tables (§3-§5): 5 cells x 8 levels of 48 tasks in $((($(date +%s%N) - start) / 1000000)) ms"
fi

if [ "${STUDY:-diamond}" = eagle3 ] || [ -z "${STUDY:-}" ]; then
    start=$(date +%s%N)
    for profile in h200-llama70b h200-llama70b-eagle3; do
        # --allow-invalid: Phase 3's last levels are stopped by the file's circuit breaker (every
        # request timing out for 10 s), as a real run on the mock is
        "$BIN" simulate examples/sweep-50-160.yaml --profile "$profile" --allow-invalid \
            --out "$OUT/$profile" >"$OUT/$profile.table" 2>/dev/null
    done
    "$BIN" compare "$OUT/h200-llama70b" "$OUT/h200-llama70b-eagle3"
    echo "EAGLE-3 comparison: 2 x 12 levels x 3 repetitions (~8 virtual hours) in $((($(date +%s%N) - start) / 1000000)) ms"
fi
