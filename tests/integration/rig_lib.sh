# Helpers for the shared rig's tests (stampede serve, docs/rig.md), sourced after protocol_lib.sh:
# keys for the rig, users alice and bob, admin root, dave (his key file d-laptop.pub names him in
# a "# name:" line), stranger carol (not authorized) and worker w1; a mock and rig.yaml with its one group g1 on it; three free ports in a row for serve.
command -v sqlite3 >/dev/null || fail "sqlite3 is not installed (make test-deps)"
(cd "$WORK" && "$STAMPEDE" keygen rig alice bob root carol dave w1 >/dev/null) ||
    fail "keygen failed"
mkdir "$WORK/users" "$WORK/workers"
cp "$WORK"/{alice,bob,root}.pub "$WORK/users/"
{ echo "# name: dave"; cat "$WORK/dave.pub"; } >"$WORK/users/d-laptop.pub"
cp "$WORK/w1.pub" "$WORK/workers/"

start_mock --ttft-ms 5 --itl-ms 1
cat >"$WORK/rig.yaml" <<YAML
groups:
  g1: [$MOCK_URL]
admins: [root]
YAML
# Three free ports in a row: users, workers' control and data (kept across a restart).
PORT=$(python3 - <<'PY'
import os, socket
# Triples by pid (tests started together have near pids: theirs must not overlap), below the
# kernel's ephemeral ports (32768 up) that clients and mocks on port 0 are given.
start = 20000 + os.getpid() % 4000 * 3
for base in list(range(start, 32000, 3)) + list(range(20000, start, 3)):
    socks = [socket.socket() for _ in range(3)]
    try:
        for i, s in enumerate(socks):
            s.bind(("127.0.0.1", base + i))
        print(base)
        break
    except OSError:
        pass
    finally:
        for s in socks:
            s.close()
PY
)
USERS="tcp://127.0.0.1:$PORT"

# start_serve LOG [ARGS...]: serve in the background (stderr to LOG, stdout to LOG.out), its pid in
# SERVE_PID, once its workers' socket is bound.
start_serve() {
    SERVE_LOG=$1
    shift
    "$STAMPEDE" serve --bind "$USERS" --key "$WORK/rig.key" --authorized-keys "$WORK/users" \
        --worker-keys "$WORK/workers" --archive "$WORK/arch" --config "$WORK/rig.yaml" "$@" \
        >"$SERVE_LOG.out" 2>"$SERVE_LOG" &
    SERVE_PID=$!
    BACKGROUND+=($SERVE_PID)
    wait_for_line "$SERVE_LOG" 10 "workers on tcp://127.0.0.1:$((PORT + 1))" >/dev/null ||
        fail "serve did not start: $(cat "$SERVE_LOG")"
}

# rig_worker_key NAME: a key pair for worker NAME, admitted by a serve started after this.
rig_worker_key() {
    (cd "$WORK" && "$STAMPEDE" keygen "$1" >/dev/null) && cp "$WORK/$1.pub" "$WORK/workers/" ||
        fail "keygen $1 failed"
}

# start_rig_worker [NAME [ARGS...]]: worker NAME (default w1) attached to the rig, with ARGS, once
# serve says it registered.
start_rig_worker() {
    local name=${1:-w1}
    shift || true
    start_worker "$WORK/$name.err" --connect "tcp://127.0.0.1:$((PORT + 1))" \
        --key "$WORK/$name.key" --server-key "$WORK/rig.pub" --id "$name" "$@"
    wait_for_line "$SERVE_LOG" 10 "worker $name .* registered" >/dev/null ||
        fail "worker $name did not register: $(cat "$SERVE_LOG" "$WORK/$name.err")"
}

as() { # as USER stampede-args...: a client command with USER's key
    local user=$1
    shift
    "$STAMPEDE" "$@" --to "$USERS" --key "$WORK/$user.key" --server-key "$WORK/rig.pub" \
        --timeout 10s
}

db() { sqlite3 "$WORK/arch/rig.db" "$1"; }

wait_state() { # wait_state ID STATE SECONDS
    local i
    for ((i = 0; i < $3 * 10; i++)); do
        [ "$(db "select state from runs where id = $1")" = "$2" ] && return 0
        sleep 0.1
    done
    fail "run $1 is '$(db "select state from runs where id = $1")', not $2, after $3 s: $(tail -20 "$SERVE_LOG")"
}

# write_rig_sweep FILE LEVELS WARMUP SNAPSHOT [OUTPUT_TOKENS [LIVENESS]]: a sweep of concurrency
# LEVELS ("1, 2, 3") of fixed requests ignoring EOS, one snapshot of SNAPSHOT a level after WARMUP,
# a 2 s drain; LIVENESS (fleet.liveness) when given.
write_rig_sweep() {
    {
        echo "target: {ignore_eos: true}"
        echo "workload: {kind: requests, input_tokens: 8, output_tokens: ${5:-8}}"
        echo "scheduler: {kind: concurrent}"
        [ -z "${6:-}" ] || echo "fleet: {liveness: $6}"
        printf 'sweep:\n  concurrency: [%s]\n  warmup: %s\n' "$2" "$3"
        printf '  snapshots: {count: 1, duration: %s}\n  drain: 2s\n' "$4"
        echo "validity: {max_schedule_lag: 2s}"
    } >"$1"
}

# wait_handovers SERVE_ERR: after serve's restart, each of workers w1 and w2 either names no run
# (its every record was acknowledged when serve died: it drops the run) or hands its batches
# over: serve takes them, the hand-over ends, the worker is released. Those that handed over in
# HANDED; HANDED_NAMES matches them as serve's notes list them ("w[12], w[12]").
wait_handovers() {
    local w
    HANDED=()
    for w in w1 w2; do
        wait_for_line "$WORK/$w.err" 15 "the controller counts this worker in run [0-9a-f]+ still: sending its unacknowledged batches from [0-9]+|abandoning run [0-9a-f]+: the controller no longer counts this worker in it" >/dev/null ||
            fail "worker $w did not come back to serve: $(tail -5 "$WORK/$w.err")"
        grep -q "abandoning run" "$WORK/$w.err" && continue
        HANDED+=($w)
        wait_for_line "$1" 15 "worker $w .*holds batches [0-9]+-[0-9]+ of run [0-9a-f]+ .*taking them over" >/dev/null ||
            fail "serve did not take worker $w's batches: $(cat "$1")"
        wait_for_line "$1" 15 "worker $w handed over run [0-9a-f]+: batches up to [0-9]+" >/dev/null ||
            fail "worker $w's hand-over did not end: $(cat "$1")"
        wait_for_line "$WORK/$w.err" 5 "released by the controller; idle" >/dev/null ||
            fail "worker $w was not released after its hand-over: $(tail -5 "$WORK/$w.err")"
    done
    [ ${#HANDED[@]} -gt 0 ] || fail "no worker held anything when serve died"
    HANDED_NAMES=$([ ${#HANDED[@]} = 1 ] && echo "w[12]" || echo "w[12], w[12]")
}

# taken_over SERVE_ERR HELD REBUILT: serve, restarted with its log in SERVE_ERR, said at its start
# that run 1 was in progress and HELD (a fixed string); every worker's hand-over ends
# (wait_handovers); then serve says run 1 was REBUILT (a regex) with those workers' batches.
taken_over() {
    grep -qF "run 1 was in progress when serve stopped: $2; its workers' unacknowledged batches are taken when they come back" \
        "$1" || fail "run 1 was not held for its workers: $(cat "$1")"
    wait_handovers "$1"
    wait_for_line "$1" 10 "run 1: $3; [0-9]+ records recovered from its workers \($HANDED_NAMES\)" >/dev/null ||
        fail "run 1 was not rebuilt with the batches of ${HANDED[*]}: $(grep 'run 1' "$1")"
}
