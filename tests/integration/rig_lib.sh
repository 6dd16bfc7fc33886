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
