#!/bin/bash
# Inside test_k8s_fleet.sh's own network and mount namespace: runs the pods k8s_launch.py wrote
# under ROOT (controller.sh, worker-I.sh) against `stampede mock` on the frontends' port, with
# /etc/hosts (bind-mounted here only) mapping the Service and frontend names to loopback.
#   k8s_fleet_pods.sh ROOT DASHBOARD_METRICS STAMPEDE
set -euo pipefail
root=$1 metrics=$2 stampede=$3
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
launch() { python3 -c "import json,sys; print(json.dumps(json.load(open('$root/launch.json'))$1))" | tr -d '"'; }
wait_line() { # FILE SECONDS REGEX
    for ((i = 0; i < $2 * 10; i++)); do grep -Eq "$3" "$1" 2>/dev/null && return 0; sleep 0.1; done
    return 1
}

ip link set lo up
{
    echo "127.0.0.1 localhost"
    for h in $(launch '["hosts"]' | tr -d '[],'); do echo "127.0.0.1 $h"; done
} >"$root/hosts"
mount --bind "$root/hosts" /etc/hosts

for port in $(launch '["frontend_ports"]' | tr -d '[],'); do
    "$stampede" mock --port "$port" --bind 127.0.0.1 --ttft-ms 20 --itl-ms 20 >"$root/mock-$port.log" 2>&1 &
    pids+=($!)
    wait_line "$root/mock-$port.log" 10 "listening on" || fail "mock on $port: $(cat "$root/mock-$port.log")"
done

n=$(launch '["expect"]')
# Workers first, as a Job may well schedule them: they retry until the controller is up.
for ((i = 0; i < n; i++)); do
    bash "$root/worker-$i.sh" 2>"$root/worker-$i.err" &
    pids+=($!)
    eval "worker_pid_$i=$!"
done
wait_line "$root/worker-0.err" 10 "not reachable yet" || fail "worker 0 did not retry: $(cat "$root/worker-0.err")"
bash "$root/controller.sh" >"$root/controller.out" 2>"$root/controller.err" &
ctl=$!
pids+=($ctl)
mport=$(launch '["metrics_port"]')
token_file=$(launch '["metrics_token_file"]')
[ -f "$token_file" ] || fail "the controller has no --metrics-token-file (its port binds 0.0.0.0)"
auth="Authorization: Bearer $(head -n 1 "$token_file")"
wait_line "$root/controller.err" 150 "serving .* read-only at http://" ||
    fail "no linger: $(tail -20 "$root/controller.err")"
kill -0 "$ctl" || fail "the controller exited before its linger"
[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$mport/metrics")" = 401 ] ||
    fail "the metrics port answers without the token"
curl -sf --max-time 5 -H "$auth" "http://127.0.0.1:$mport/results/results.json" -o "$root/got.json" ||
    fail "results.json over HTTP"
results=$(sed -n 's|.*serving \(.*\) read-only at .*|\1|p' "$root/controller.err")
cmp "$root/got.json" "$results/results.json" || fail "results.json over HTTP differs"
grep -q "^<!-- .*report.md -->" "$root/controller.out" || fail "no report.md in the log"
curl -sf --max-time 5 -H "$auth" "http://127.0.0.1:$mport/metrics" -o "$root/scrape.txt" ||
    fail "scrape"
while read -r m; do
    grep -Eq "^$m(\{| )" "$root/scrape.txt" || fail "the dashboard's $m is not in a real scrape"
done <"$metrics"
kill -TERM "$ctl"
rc=0
wait "$ctl" || rc=$?
[ "$rc" = 0 ] || fail "controller exit status $rc: $(tail -20 "$root/controller.err")"
for ((i = 0; i < n; i++)); do
    eval "p=\$worker_pid_$i"
    for ((t = 0; t < 600 && $(kill -0 "$p" 2>/dev/null && echo 1 || echo 0); t++)); do sleep 0.1; done
    kill -0 "$p" 2>/dev/null && fail "worker $i still running 60 s after the controller left"
    rc=0
    wait "$p" || rc=$?
    [ "$rc" = 0 ] || fail "worker $i exit status $rc: $(tail -5 "$root/worker-$i.err")"
    grep -q "registered with" "$root/worker-$i.err" || fail "worker $i never registered"
done
echo "$n workers, $(grep -c . "$metrics") dashboard metrics scraped, results over HTTP"
