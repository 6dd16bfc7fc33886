#!/usr/bin/env bash
# Multi-host for real: the controller, two workers and the mock each run in a network namespace of
# their own, joined by veth pairs to a bridge in a fifth namespace (the switch). The controller's
# link has 5 ms each way: the controller binds only 127.0.0.1 inside its namespace and
# delay_relay.py (this kernel has no netem qdisc) forwards its bridge address to it, so every
# worker-to-controller byte crosses the delay while worker-to-mock traffic does not.
#
# Asserts: the wiring first (each worker reaches the mock across the bridge; a round trip through
# the relay costs >= 2 x 5 ms); then the run exits 0 with exactly 96 requests ok, none failed, 32
# tokens each; the per-request numbers are those of the worker-mock path, not inflated by the
# control-plane delay (TTFT p50 50 +/- 2 ms and mean +/- 4 ms, ITL mean 10 ms +/- 3 %); each
# worker's clock probe sees RTT 9..25 ms and its offset is right within the error bound RTT/2 -
# worker 2 runs with its clock shifted by 3 s (STAMPEDE_TEST_CLOCK_OFFSET_NS) so the true offset
# is not trivially 0; both workers sent their first request at the same controller instant (within
# both bounds + 10 ms); both --once workers exit 0 after the run.
#
# Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN), iproute2 and python3. It never skips: when the kernel
# or the permissions refuse, it fails and names the command and its error. Everything it creates
# (namespaces, links, processes, files) is unique to this run and removed on exit.
set -u -o pipefail

: "${STAMPEDE:?set STAMPEDE to the stampede binary}"
: "${STAMPEDE_SRC:?set STAMPEDE_SRC to the repository root}"
HERE=$STAMPEDE_SRC/tests/integration
PYTHON=${PYTHON:-python3}
DELAY_MS=5
PORT=5555 # inside the controller's own namespace, so no other process can hold it
REQUESTS=96
CONCURRENCY=8
OUTPUT_TOKENS=32
TTFT_MS=50
ITL_MS=10
SHIFT_NS=3000000000
T0=$SECONDS

TAG=stampede-$$-$RANDOM
NS_SW=$TAG-sw
NS_CTL=$TAG-ctl
NS_W1=$TAG-w1
NS_W2=$TAG-w2
NS_SRV=$TAG-srv
SUBNET=10.213.0
declare -A ADDR=([$NS_CTL]=$SUBNET.1 [$NS_W1]=$SUBNET.2 [$NS_W2]=$SUBNET.3 [$NS_SRV]=$SUBNET.4)
CTL_ADDR=${ADDR[$NS_CTL]}
SRV_ADDR=${ADDR[$NS_SRV]}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/stampede-netns.XXXXXX") || exit 1
NAMESPACES=()
declare -A PID=()

log() { echo "netns: $*" >&2; }

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

cleanup() {
    local status=$? pid ns i
    trap - EXIT INT TERM
    # Only this shell's running jobs (all started by start()): a reaped PID is never signalled.
    for pid in $(jobs -rp); do
        kill -TERM "$pid" 2>/dev/null
    done
    for i in $(seq 30); do
        [ -z "$(jobs -rp)" ] && break
        sleep 0.1
    done
    for pid in $(jobs -rp); do
        kill -KILL "$pid" 2>/dev/null
    done
    # Whatever still runs inside our namespaces was started by this test (they are ours alone).
    for ns in "${NAMESPACES[@]}"; do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            kill -KILL "$pid" 2>/dev/null
        done
    done
    wait 2>/dev/null
    # Deleting a namespace destroys its veth ends and its bridge; nothing was made in the host's.
    for ns in "${NAMESPACES[@]}"; do
        ip netns del "$ns" 2>/dev/null
    done
    if [ "$status" != 0 ]; then
        for f in "$WORK"/*.log; do
            [ -s "$f" ] || continue
            echo "---- ${f##*/} (last 40 lines)" >&2
            tail -n 40 "$f" >&2
        done
    fi
    rm -rf "$WORK"
    exit "$status"
}
trap cleanup EXIT
trap 'echo "FAIL: interrupted (SIGINT)" >&2; exit 130' INT
trap 'echo "FAIL: interrupted (SIGTERM)" >&2; exit 143' TERM

# A set-up command the kernel or the permissions may refuse: fail naming it and its error.
net() {
    local err rc=0
    err=$(timeout 10 "$@" 2>&1 >/dev/null) || rc=$?
    if [ $rc != 0 ]; then
        fail "network namespace set-up refused: '$*' exited with status $rc: ${err:-(no message)}." \
            "This test needs root (it runs as uid $(id -u)) with CAP_NET_ADMIN and CAP_SYS_ADMIN," \
            "iproute2, and a kernel with network namespaces, veth and bridge support" \
            "(CONFIG_NET_NS, CONFIG_VETH, CONFIG_BRIDGE)."
    fi
}

# start NAME NAMESPACE SECONDS CMD...: runs CMD in NAMESPACE under timeout, output in NAME.log.
start() {
    local name=$1 ns=$2 secs=$3
    shift 3
    ip netns exec "$ns" timeout -k 3 "$secs" "$@" >"$WORK/$name.log" 2>&1 &
    PID[$name]=$!
}

# wait_line NAME REGEX SECONDS: until NAME.log has a line matching REGEX; fails if NAME exits.
wait_line() {
    local name=$1 re=$2 i
    for i in $(seq $(($3 * 20))); do
        grep -Eq "$re" "$WORK/$name.log" && return 0
        kill -0 "${PID[$name]}" 2>/dev/null || break
        sleep 0.05
    done
    grep -Eq "$re" "$WORK/$name.log" && return 0
    fail "$name did not print /$re/ within $3 s (see $name.log below)"
}

# finish NAME SECONDS: waits for NAME to exit; its exit status in RC (124: still running).
finish() {
    local name=$1 i
    for i in $(seq $(($2 * 10))); do
        kill -0 "${PID[$name]}" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "${PID[$name]}" 2>/dev/null; then
        RC=124
        return
    fi
    wait "${PID[$name]}"
    RC=$?
    unset "PID[$name]"
}

for tool in ip timeout "$PYTHON"; do
    command -v "$tool" >/dev/null || fail "'$tool' is not installed (this test needs iproute2 and python3)"
done
[ -x "$STAMPEDE" ] || fail "STAMPEDE=$STAMPEDE is not an executable"

# --- Topology: a bridge in the switch namespace, one veth to it from each host namespace.
for ns in "$NS_SW" "$NS_CTL" "$NS_W1" "$NS_W2" "$NS_SRV"; do
    NAMESPACES+=("$ns")
    net ip netns add "$ns"
    net ip -n "$ns" link set lo up
done
net ip -n "$NS_SW" link add br0 type bridge
net ip -n "$NS_SW" link set br0 up
for ns in "$NS_CTL" "$NS_W1" "$NS_W2" "$NS_SRV"; do
    port=p-${ns##*-}
    # Created directly in the two namespaces: no interface ever appears in the host's namespace.
    net ip -n "$NS_SW" link add "$port" type veth peer name eth0 netns "$ns"
    net ip -n "$NS_SW" link set "$port" master br0
    net ip -n "$NS_SW" link set "$port" up
    net ip -n "$ns" addr add "${ADDR[$ns]}/24" dev eth0
    net ip -n "$ns" link set eth0 up
done
log "namespaces $TAG-{sw,ctl,w1,w2,srv} on $SUBNET.0/24 (ctl .1, w1 .2, w2 .3, srv .4)"

# --- The mock in srv, fixed mode.
start mock "$NS_SRV" 120 "$STAMPEDE" mock --bind "$SRV_ADDR" --port 0 --ttft-ms $TTFT_MS --itl-ms $ITL_MS
wait_line mock 'listening on [0-9.]+:[0-9]+' 10
MOCK_PORT=$(grep -Eo 'listening on [0-9.]+:[0-9]+' "$WORK/mock.log" | head -1 | sed 's/.*://')
TARGET=http://$SRV_ADDR:$MOCK_PORT
log "mock at $TARGET"

# --- Wiring checks: each worker namespace reaches the mock across the bridge.
for ns in "$NS_W1" "$NS_W2"; do
    out=$(ip netns exec "$ns" timeout 10 "$PYTHON" "$HERE/netns_probe.py" http "$TARGET/metrics" 2>&1) ||
        fail "${ns##*-} cannot reach the mock at $TARGET/metrics across the bridge: $out"
done

# --- The delayed controller link: relay on ctl's bridge address -> 127.0.0.1 inside ctl.
start relay "$NS_CTL" 120 "$PYTHON" "$HERE/delay_relay.py" --delay-ms $DELAY_MS \
    "$CTL_ADDR:$PORT=127.0.0.1:$PORT" "$CTL_ADDR:$((PORT + 1))=127.0.0.1:$((PORT + 1))"
wait_line relay 'relay ready' 10

# Before the controller binds those ports, an echo server there proves the delay is in the path:
# a round trip through the relay from each worker namespace costs at least 2 x 5 ms.
start echo "$NS_CTL" 30 "$PYTHON" "$HERE/netns_probe.py" echo "127.0.0.1:$PORT" "127.0.0.1:$((PORT + 1))"
wait_line echo 'echo ready' 10
for ns in "$NS_W1" "$NS_W2"; do
    for p in $PORT $((PORT + 1)); do
        out=$(ip netns exec "$ns" timeout 10 "$PYTHON" "$HERE/netns_probe.py" rtt "$CTL_ADDR:$p" --count 10 2>&1) ||
            fail "${ns##*-} -> relay $CTL_ADDR:$p -> ctl 127.0.0.1:$p: $out"
        min=$(sed -n 's/.*min=\([0-9.]*\).*/\1/p' <<<"$out")
        log "${ns##*-} -> ctl:$p through the relay: $out"
        awk -v m="$min" -v d=$DELAY_MS 'BEGIN { exit !(m >= 2 * d - 0.2 && m <= 2 * d + 15) }' ||
            fail "RTT ${ns##*-} -> ctl:$p through the relay is $min ms, expected ${DELAY_MS}x2 ms (+15 ms slack)"
    done
done
kill -TERM "${PID[echo]}"
finish echo 5
[ $RC != 124 ] || fail "the echo server in ctl did not stop on SIGTERM"

# --- The run.
cat >"$WORK/run.yaml" <<EOF
seed: 11
target:
  api: chat
  model: mock-llama
  ignore_eos: true
workload:
  kind: requests
  input_tokens: 64
  output_tokens: $OUTPUT_TOKENS
scheduler:
  kind: concurrent
  concurrency: $CONCURRENCY
limits:
  max_requests: $REQUESTS
EOF
OUT=$WORK/out
start controller "$NS_CTL" 60 "$STAMPEDE" controller "$WORK/run.yaml" --bind "tcp://127.0.0.1:$PORT" \
    --expect-workers 2 --target "$TARGET" --out "$OUT" --trace --register-timeout 20
wait_line controller 'listening on' 10
# --insecure: plain TCP to a non-loopback controller (the namespaces are this test's own).
start w1 "$NS_W1" 60 "$STAMPEDE" worker --connect "tcp://$CTL_ADDR:$PORT" --once --id w1 --insecure
start w2 "$NS_W2" 60 env STAMPEDE_TEST_CLOCK_OFFSET_NS=$SHIFT_NS \
    "$STAMPEDE" worker --connect "tcp://$CTL_ADDR:$PORT" --once --id w2 --insecure

finish controller 60
[ $RC = 0 ] || fail "controller exited with status $RC, expected 0 (124 = timed out after 60 s)"

# Every failure below is listed before the test fails.
problems=()
"$PYTHON" "$HERE/netns_check.py" --out "$OUT" --requests $REQUESTS --output-tokens $OUTPUT_TOKENS \
    --ttft-ms $TTFT_MS --itl-ms $ITL_MS --delay-ms $DELAY_MS --shift-ms $((SHIFT_NS / 1000000)) ||
    problems+=("the results of the namespaced run are wrong (netns_check lines above)")
# A --once worker exits by itself once the controller has released it.
deadline=$((SECONDS + 15))
for w in w1 w2; do
    finish $w $((deadline > SECONDS ? deadline - SECONDS : 0))
    [ $RC = 0 ] || problems+=("worker $w (--once) exited with status $RC after the run, expected 0 (124 = still running 15 s after the controller exited; see $w.log)")
done
[ ${#problems[@]} = 0 ] || fail "$(printf '%s; ' "${problems[@]}")"
log "ok in $((SECONDS - T0)) s"
