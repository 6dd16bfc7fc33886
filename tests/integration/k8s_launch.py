"""Starts the controller and the workers exactly as rendered Kubernetes manifests say, on this
machine (tests/integration/test_k8s_fleet.sh runs it inside a network and mount namespace of its
own, where /etc/hosts maps the Service and frontend names to loopback).

From the rendered objects (JSON, k8s/tools/to-json.mjs): the controller Job's and the workers
Job's container args, with $(VAR) expanded from the container's env as the kubelet does; env
values, secretKeyRef from the test's Secrets; the files of every volume (ConfigMap items, Secret
items with their modes, emptyDir), each mountPath mapped under ROOT/POD (the only liberty taken:
a path the args name outside every volume stays as it is and fails); the workers' Indexed Job
giving each pod JOB_COMPLETION_INDEX = 0 .. parallelism-1. The workload of the ConfigMap is run
as written but for its durations, shortened by --shorten (the sweep's levels cut to the first
two, its warm-up, snapshots and drain to seconds, validity.max_schedule_lag raised to 2 s for a
loaded machine, server_metrics: none since every frontend is the same mock).

  k8s_launch.py OBJECTS.json STAMPEDE ROOT SECRETS.json [--shorten]  writes ROOT/controller.sh,
  ROOT/worker-I.sh (each execs its pod's process) and ROOT/launch.json: {"controller",
  "workers": {"argv", "env", "cwd"}, "metrics_port", "metrics_token_file" (the controller's
  --metrics-token-file as mounted, or null), "hosts": [names for loopback],
  "frontend_ports", "expect"}
"""
import json
import os
import re
import shlex
import sys

import yaml


def fail(msg):
    sys.exit(f"k8s_launch: {msg}")


def expand(text, env):
    # $(VAR) from the container's env; $$(VAR) stays literal, as the kubelet does.
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                  lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), text)


def shorten(text):
    w = yaml.safe_load(text)
    s = w.get("sweep")
    if s:
        levels = s.get("concurrency") or s.get("rate")
        key = "concurrency" if "concurrency" in s else "rate"
        if isinstance(levels, dict):
            s[key] = [levels["from"], levels["from"] + levels["step"]]
        else:
            s[key] = levels[:2]
        s["warmup"] = "1s"
        s["snapshots"] = {"count": 2, "duration": "2s"}
        s["drain"] = "3s"
        s["repeat"] = 1
    # A loaded 2-core test machine fires timers late; the run's validity is not what is tested.
    w.setdefault("validity", {})["max_schedule_lag"] = "2s"
    # Every frontend name is one mock on loopback here, so each endpoint's /metrics (scraped by
    # default) counts the others' requests too: the shared-rig guard would be right to call it
    # shared. Not what is tested.
    w.setdefault("server_metrics", "none")
    if "capacity" in w:
        w["capacity"].update({"start": 1, "max": 2, "repeat_near_boundary": 0})
        w["limits"]["duration"] = "4s"
        w["warmup"] = "1s"
    return yaml.safe_dump(w, sort_keys=False)


def pod(job, objects, secrets, root, name, short, extra_env):
    spec = job["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    env = dict(extra_env)
    for e in container.get("env", []):
        if "value" in e:
            env[e["name"]] = expand(e["value"], env)
        elif "secretKeyRef" in e.get("valueFrom", {}):
            ref = e["valueFrom"]["secretKeyRef"]
            value = secrets.get(ref["name"], {}).get(ref["key"])
            if value is None and not ref.get("optional"):
                fail(f"{name}: env {e['name']}: no Secret {ref['name']}/{ref['key']}")
            if value is not None:
                env[e["name"]] = value
        else:
            fail(f"{name}: env {e['name']}: unsupported source {e}")
    base = os.path.join(root, name)
    mounts = {}
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    for m in container.get("volumeMounts", []):
        v = volumes.get(m["name"]) or fail(f"{name}: volumeMount {m['name']}: no such volume")
        local = base + m["mountPath"]
        os.makedirs(local, exist_ok=True)
        mounts[m["mountPath"]] = local
        if "configMap" in v:
            cm = next((o for o in objects if o["kind"] == "ConfigMap" and
                       o["metadata"]["name"] == v["configMap"]["name"]), None)
            cm or fail(f"{name}: volume {m['name']}: no ConfigMap {v['configMap']['name']}")
            for key, text in cm["data"].items():
                with open(os.path.join(local, key), "w") as f:
                    f.write(shorten(text) if short and key.endswith(".yaml") else text)
        elif "secret" in v:
            data = secrets.get(v["secret"]["secretName"])
            data is not None or fail(f"{name}: no Secret {v['secret']['secretName']}")
            items = v["secret"].get("items") or [{"key": k, "path": k} for k in data]
            for it in items:
                path = os.path.join(local, it["path"])
                with open(path, "w") as f:
                    f.write(data[it["key"]])
                os.chmod(path, it.get("mode", v["secret"].get("defaultMode", 0o644)))
        elif "emptyDir" in v or "persistentVolumeClaim" in v:
            pass
        else:
            fail(f"{name}: volume {m['name']}: unsupported {v}")

    def remap(arg):
        for mp in sorted(mounts, key=len, reverse=True):
            if arg == mp or arg.startswith(mp + "/"):
                return mounts[mp] + arg[len(mp):]
        return arg

    if container.get("command"):
        fail(f"{name}: a command overrides the image's ENTRYPOINT; this test runs the binary")
    argv = [remap(expand(a, env)) for a in container["args"]]
    return {"argv": argv, "env": env, "cwd": base}


def main():
    objects_file, stampede, root, secrets_file = sys.argv[1:5]
    short = "--shorten" in sys.argv[5:]
    objects = json.load(open(objects_file))
    secrets = json.load(open(secrets_file))
    jobs = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Job"}
    ctl_job = jobs.get("stampede-controller") or fail("no Job stampede-controller")
    wk_job = jobs.get("stampede-workers") or fail("no Job stampede-workers")
    ws = wk_job["spec"]
    if ws.get("completionMode") != "Indexed":
        fail("the workers Job is not an Indexed Job")
    n = ws["parallelism"]
    if ws.get("completions") != n:
        fail(f"workers: completions {ws.get('completions')} != parallelism {n}")
    controller = pod(ctl_job, objects, secrets, root, "controller", short, {})
    workers = [pod(wk_job, objects, secrets, root, f"worker-{i}", short,
                   {"JOB_COMPLETION_INDEX": str(i)}) for i in range(n)]
    for p in [controller] + workers:
        p["argv"] = [stampede] + p["argv"]
    argv = controller["argv"]
    expect = int(argv[argv.index("--expect-workers") + 1])
    if expect != n:
        fail(f"the controller expects {expect} workers, the Indexed Job runs {n}")
    port = int(argv[argv.index("--metrics-listen") + 1].rsplit(":", 1)[1])
    token_file = (argv[argv.index("--metrics-token-file") + 1]
                  if "--metrics-token-file" in argv else None)
    services = [o for o in objects if o["kind"] == "Service"]
    hosts = {s["metadata"]["name"] for s in services}
    cm_paths = [a for a in argv if a.endswith(".yaml")]
    workload = yaml.safe_load(open(cm_paths[0])) if cm_paths else {}
    urls = workload.get("target", {}).get("endpoints", [])
    hosts |= {re.match(r"https?://([^:/]+)", u).group(1) for u in urls}
    ports = {int(re.search(r":(\d+)", u.split("//", 1)[1]).group(1)) for u in urls}
    # One script a pod: its working directory, an environment of nothing but the pod's (and a
    # PATH), the argv.
    for name, p in [("controller", controller)] + [(f"worker-{i}", w) for i, w in enumerate(workers)]:
        env = ["PATH=/usr/local/bin:/usr/bin:/bin"] + [f"{k}={v}" for k, v in p["env"].items()]
        with open(os.path.join(root, f"{name}.sh"), "w") as f:
            f.write(f"cd {shlex.quote(p['cwd'])} && exec env -i "
                    f"{' '.join(shlex.quote(e) for e in env)} "
                    f"{' '.join(shlex.quote(a) for a in p['argv'])}\n")
    with open(os.path.join(root, "launch.json"), "w") as f:
        json.dump({"controller": controller, "workers": workers, "metrics_port": port,
                   "metrics_token_file": token_file,
                   "hosts": sorted(hosts), "frontend_ports": sorted(ports), "expect": expect},
                  f, indent=1)


main()
