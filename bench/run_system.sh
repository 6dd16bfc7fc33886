#!/usr/bin/env bash
# Whole-system benchmarks of `stampede run` (controller + forked workers) against `stampede mock`:
# rate mode at 1,000 and 5,000 req/s, the controller's merge rate and CPU share with 4 workers,
# 10,000 concurrent streams in one worker, and the scale cases of the Kubernetes layout
# (system_scale.py: a separate controller and N `stampede worker` processes, CURVE on). Each prints `RESULT name=... key=value ...` lines;
# none passes or fails on a figure, a benchmark fails only when it could not run.
#   STAMPEDE_BIN=build/stampede bash bench/run_system.sh [rate|controller|streams|scale]...
# SYSBENCH_DIR=DIR keeps every run's outputs and logs under DIR (default: the system temp dir).
set -uo pipefail
export PYTHONDONTWRITEBYTECODE=1
cd "$(dirname "$0")/.."
export STAMPEDE_BIN=${STAMPEDE_BIN:-$PWD/build/stampede}
if [ ! -x "$STAMPEDE_BIN" ]; then
    echo "run_system: no stampede binary at $STAMPEDE_BIN (set STAMPEDE_BIN)" >&2
    exit 1
fi
# 10,000 streams need as many descriptors in the worker and in the mock.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 12000 ]; then
    echo "run_system: warning: ulimit -n is $(ulimit -n); the 10,000-stream run needs ~10,300" >&2
fi

failed=0
bench() {
    local name=$1 limit=$2
    shift 2
    echo "-- system $name"
    timeout --kill-after=10 "$limit" python3 "$@"
    local rc=$?
    if [ $rc -ne 0 ]; then
        [ $rc -eq 124 ] && echo "run_system: $name did not finish within $limit s" >&2
        echo "run_system: $name could not run (exit $rc)" >&2
        failed=1
    fi
}

selected=("$@")
[ ${#selected[@]} -eq 0 ] && selected=(rate controller streams scale)
for name in "${selected[@]}"; do
    case $name in
    rate) bench rate 180 bench/system_rate.py 1000 5000 ;;
    controller) bench controller 120 bench/system_controller.py 4 ;;
    streams) bench streams 150 bench/system_streams.py 10000 ;;
    scale) bench scale 600 bench/system_scale.py c160 c2000 ;;
    *)
        echo "run_system: unknown benchmark '$name' (rate, controller, streams, scale)" >&2
        failed=1
        ;;
    esac
done
exit $failed
