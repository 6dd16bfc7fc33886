#!/usr/bin/env bash
# The reference studies in virtual time (issue 21, docs/simulate.md "The reference studies"):
#   1. the three diamond presets (examples/diamond-{langgraph,autogen,a2a}.yaml) against the tp1-fp8
#      and tp2-fp8 profiles, each as a sweep of concurrency 1...64: the scaling report's
#      per-preset, per-deployment tables;
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
    for preset in langgraph autogen a2a; do
        # the preset's graph and load as a sweep of concurrency 1..64 (its max_sessions bound
        # dropped: each level runs its window)
        python3 - "examples/diamond-$preset.yaml" "$OUT/$preset.yaml" <<'PY'
import sys, yaml
cfg = yaml.safe_load(open(sys.argv[1]))
cfg.pop("limits", None)
cfg["scheduler"].pop("concurrency", None)
cfg["sweep"] = {"concurrency": [1, 2, 4, 8, 16, 32, 48, 64], "warmup": "30s",
                "snapshots": {"count": 3, "duration": "60s"}, "drain": "120s", "repeat": 1}
yaml.safe_dump(cfg, open(sys.argv[2], "w"), sort_keys=False)
PY
        for profile in tp1-fp8 tp2-fp8; do
            echo "== diamond $preset on $profile"
            "$BIN" simulate "$OUT/$preset.yaml" --profile "$profile" --allow-invalid \
                --out "$OUT/$preset-$profile" 2>/dev/null | sed -n '/^level/,/^(ms/p'
        done
    done
    echo "diamond tables: 3 presets x 2 profiles x 8 levels of 3.5 virtual minutes in $((($(date +%s%N) - start) / 1000000)) ms"
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
