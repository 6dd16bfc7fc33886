#!/usr/bin/env bash
# The scale figures of issue 12 in one go: the Kubernetes layout's cases (bench/system_scale.py:
# concurrency 160 over 4 workers and 2,000 over 8, a separate controller and worker processes,
# CURVE on, totals checked) and one controller's ceiling (bench_fanin: 64, 256 and 1,024 fake
# workers at 10,000 tokens/s each). `make bench` runs both (as `system` and `fanin`); this runs
# only them. Prints the load average before each, since other tenants move every figure.
#   STAMPEDE_BUILD=build bash bench/run_scale.sh [bench_fanin options...]
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${STAMPEDE_BUILD:-build}
export STAMPEDE_BIN=${STAMPEDE_BIN:-$PWD/$BUILD/stampede}
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
failed=0
echo "== scale (load: $(cut -d' ' -f1-3 /proc/loadavg))"
bash bench/run_system.sh scale || failed=1
echo
echo "== fanin (load: $(cut -d' ' -f1-3 /proc/loadavg))"
"$BUILD/bench_fanin" "$@" || failed=1
exit $failed
