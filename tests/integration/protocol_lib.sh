# Helpers for the run/protocol/cluster integration tests (sourced, never run alone).
# Every process started here is killed when the test exits; every wait is bounded.
set -euo pipefail

: "${STAMPEDE:?STAMPEDE must name the built stampede binary}"
[ -x "$STAMPEDE" ] || { echo "FAIL: $STAMPEDE is not executable" >&2; exit 1; }

WORK=$(mktemp -d /tmp/stampede-test.XXXXXX)
BACKGROUND=()

cleanup() {
    local pid
    for pid in "${BACKGROUND[@]:-}"; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    done
    for pid in "${BACKGROUND[@]:-}"; do
        [ -n "$pid" ] && wait "$pid" 2>/dev/null || true
    done
    [ -n "${KEEP_WORK:-}" ] && echo "kept $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# Waits (at most $2 seconds) until file $1 contains the extended regex $3; prints the match.
wait_for_line() {
    local file=$1 seconds=$2 pattern=$3 i
    for ((i = 0; i < seconds * 20; i++)); do
        if [ -f "$file" ] && grep -Eo "$pattern" "$file" | head -1 | grep -q .; then
            grep -Eo "$pattern" "$file" | head -1
            return 0
        fi
        sleep 0.05
    done
    return 1
}

# Starts `stampede mock --port 0 ARGS...` in the background; sets MOCK_URL to its base URL.
# (Call it directly, never in $(...): the pid must be recorded in this shell.)
start_mock() {
    local log="$WORK/mock.$RANDOM.out"
    "$STAMPEDE" mock --port 0 "$@" >"$log" 2>&1 &
    BACKGROUND+=($!)
    local addr
    addr=$(wait_for_line "$log" 10 'listening on [0-9.]+:[0-9]+') ||
        fail "the mock did not start within 10 s: $(cat "$log")"
    MOCK_URL="http://${addr#listening on }"
}

# Starts a controller in the background (stderr to $1, stdout to $1.out) with the remaining
# arguments; sets CONTROLLER_EP once it listens, and CONTROLLER_PID. (Call it directly.)
start_controller() {
    local log=$1
    shift
    "$STAMPEDE" controller "$@" >"$log.out" 2>"$log" &
    CONTROLLER_PID=$!
    BACKGROUND+=($CONTROLLER_PID)
    CONTROLLER_EP=$(wait_for_line "$log" 10 'tcp://127\.0\.0\.1:[0-9]+') ||
        fail "the controller did not listen within 10 s: $(cat "$log")"
}

# Waits at most $1 seconds for the controller to exit; sets CONTROLLER_RC.
wait_controller() {
    local i
    for ((i = 0; i < $1 * 10; i++)); do
        kill -0 "$CONTROLLER_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$CONTROLLER_PID" 2>/dev/null && fail "the controller did not finish within $1 s"
    CONTROLLER_RC=0
    wait "$CONTROLLER_PID" || CONTROLLER_RC=$?
}

# Starts a worker in the background; its stderr goes to $1; its pid is in WORKER_PID.
start_worker() {
    local log=$1
    shift
    "$STAMPEDE" worker "$@" 2>"$log" &
    WORKER_PID=$!
    BACKGROUND+=($WORKER_PID)
}

# Waits at most $2 seconds for process $1 (a child of this shell) to exit; sets EXIT_STATUS to its
# status, or to "timeout". (Call it directly, never in $(...): only this shell can reap it.)
wait_exit() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$1" 2>/dev/null; then
        EXIT_STATUS=timeout
        return 0
    fi
    EXIT_STATUS=0
    wait "$1" || EXIT_STATUS=$?
}

# Prints the value of a Python expression over results.json, bound to `r` (levels[0] is `l`).
json_value() {
    python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
l = r["levels"][0]
v = eval(sys.argv[2])
print(json.dumps(v) if isinstance(v, (dict, list)) else v)
PY
}

# Fails unless |actual - expected| <= tolerance * expected.
assert_within() {
    local what=$1 actual=$2 expected=$3 tolerance=$4
    python3 -c "import sys; a,e,t=map(float,sys.argv[1:]); sys.exit(0 if abs(a-e)<=t*e else 1)" \
        "$actual" "$expected" "$tolerance" ||
        fail "$what = $actual, expected $expected within $(python3 -c "print($tolerance*100)") %"
}

assert_equal() {
    [ "$2" = "$3" ] || fail "$1 = $2, expected $3"
}
