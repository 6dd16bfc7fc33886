#!/bin/bash
# Manifests match the binary (docs/kubernetes.md): each overlay of k8s/ is rendered with the
# pinned kustomize, and its controller and N workers are started exactly as the rendered Jobs say
# (k8s_launch.py: args with $(VAR) expanded, env, Secret and ConfigMap files, JOB_COMPLETION_INDEX
# per pod), inside a network and mount namespace of the test's own where /etc/hosts maps the
# Service and the frontends to loopback and `stampede mock` serves the frontends' port. The
# workload is the ConfigMap's with its durations shortened. The run must complete with exit 0,
# the summary must be in the controller's log, results.json must come over HTTP during the
# linger, every metric the Grafana dashboard queries must be in a real scrape, and the workers
# must exit 0 by themselves (--idle-exit) once the controller is gone.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"
command -v unshare >/dev/null || fail "unshare (util-linux) is needed"
[ "$(id -u)" = 0 ] || fail "needs root for its network and mount namespace"
install_tools k8s/tools k8s-tools "the k8s tools"
cp "$SRC/k8s/tools/to-json.mjs" "$TOOLS/"

mkdir -p "$WORK/keys"
(cd "$WORK/keys" && "$STAMPEDE" keygen controller worker >/dev/null)
python3 - "$WORK/keys" >"$WORK/secrets.json" <<'PY'
import json, sys
k = lambda n: open(f"{sys.argv[1]}/{n}").read()
print(json.dumps({
    "stampede-controller-key": {"controller.key": k("controller.key"), "worker.pub": k("worker.pub")},
    "stampede-worker-key": {"worker.key": k("worker.key"), "controller.pub": k("controller.pub")},
    "inference-api-key": {"key": "sk-test-not-a-secret"},
    "stampede-metrics-token": {"token": "k8s-test-metrics-token\n"},
}))
PY

# The metric names the dashboard queries.
python3 - "$SRC/k8s/monitoring/grafana-dashboard.json" >"$WORK/dashboard-metrics.txt" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
exprs = [t["expr"] for p in d["panels"] for t in p["targets"]]
exprs += [v["definition"] for v in d["templating"]["list"] if "definition" in v]
print("\n".join(sorted({m for e in exprs for m in re.findall(r"\bstampede_[a-z0-9_]+", e)})))
PY
[ "$(wc -l <"$WORK/dashboard-metrics.txt")" -ge 8 ] || fail "too few dashboard metrics found"

# The overlays side by side, each in a namespace of its own (the manifests' fixed ports do not
# meet), bounded in time.
overlays=(${K8S_OVERLAYS:-sweep-50-160 agentic-diamond capacity})
pids=()
for overlay in "${overlays[@]}"; do
    "$TOOLS/bin/kubectl" kustomize "$SRC/k8s/overlays/$overlay" >"$WORK/$overlay.yaml" ||
        fail "$overlay does not render"
    node "$TOOLS/to-json.mjs" "$WORK/$overlay.yaml" >"$WORK/$overlay.json"
    root="$WORK/$overlay-pods"
    mkdir -p "$root"
    python3 "$TESTS_DIR/k8s_launch.py" "$WORK/$overlay.json" "$STAMPEDE" "$root" "$WORK/secrets.json" \
        --shorten || fail "$overlay: the manifests cannot be launched"
    timeout 240 unshare --net --mount -- bash "$TESTS_DIR/k8s_fleet_pods.sh" "$root" \
        "$WORK/dashboard-metrics.txt" "$STAMPEDE" >"$WORK/$overlay.log" 2>&1 &
    pids+=($!)
    BACKGROUND+=($!)
done
failed=0
for i in "${!overlays[@]}"; do
    rc=0
    wait "${pids[$i]}" || rc=$?
    if [ "$rc" != 0 ]; then
        echo "FAIL: ${overlays[$i]} (exit $rc): $(grep -v '^\[' "$WORK/${overlays[$i]}.log" | tail -25)" >&2
        failed=1
    else
        echo "ok: ${overlays[$i]}: $(tail -1 "$WORK/${overlays[$i]}.log")"
    fi
done
[ "$failed" = 0 ] || exit 1
