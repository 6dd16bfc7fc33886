"""Scale under the manifest-equivalent start: what k8s/ runs, as processes on this machine.

`stampede keygen controller worker`, then `stampede controller FILE --bind tcp://127.0.0.1:PORT
--expect-workers N --out OUT --key controller.key --authorized-keys DIR` (the controller Job's
arguments, CURVE on) and N separate `stampede worker --connect tcp://127.0.0.1:PORT --once
--key worker.key --server-key controller.pub` processes (the Indexed Job's, each with its
JOB_COMPLETION_INDEX and `--id worker-INDEX`), against a fixed-mode `stampede mock` (TTFT 50 ms,
ITL 40 ms, 128 output tokens a request: 25 tokens/s per stream). Two cases, from issue 12:

  - concurrency 160 over 4 workers, 480 requests (3 per stream);
  - concurrency 2,000 over 8 workers, 6,000 requests (3 per stream).

Each case must end with exact totals: the sum of the workers' own counts ("run ... finished: N
requests" in each worker's log) = the controller's requests_ok (results.json) = the requests the
mock served (vllm:request_success_total on its /metrics) = the requests asked for.

Printed per case: the controller's CPU (seconds, cores over the run, share of all stampede CPU)
and peak RSS, each worker's peak RSS (VmHWM, sampled every 0.2 s) and idle RSS (after registration, before
the start), worker CPU per token; then a sizing NOTE: memory per stream from the two cases (the
slope between 40 and 250 streams per worker) and "N streams per pod needs X MiB / Y CPU".

    python3 bench/system_scale.py [c160|c2000|c2000long]...    (STAMPEDE_BIN = the binary)

c2000long (not run by default) is c2000 with 4,096-token prompts: the memory a prompt adds to a
stream (its request body, held while the request is in flight)."""

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request

import system_common as sc

MOCK_ARGS = ["--ttft-ms", "50", "--itl-ms", "40"]
OUTPUT_TOKENS = 128
TOKENS_PER_STREAM_S = 1000 / 40  # the mock's ITL
# name: (concurrency, workers, requests, prompt tokens); c2000long is not in the default list:
# the same fleet with 4,096-token prompts, to show what a prompt adds to a stream's memory.
CASES = {
    "c160": (160, 4, 480, 32),
    "c2000": (2000, 8, 6000, 32),
    "c2000long": (2000, 8, 6000, 4096),
}
DEFAULT = ["c160", "c2000"]
POLL_S = 0.2


def free_port_pair():
    """A loopback port P with P+1 free as well (the controller binds PORT and PORT+1)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port >= 65535:
            continue
        try:
            with socket.socket() as s2:
                s2.bind(("127.0.0.1", port + 1))
            return port
        except OSError:
            continue
    raise sc.BenchError("no free pair of loopback ports")


def write_workload(path, url, concurrency, requests, prompt_tokens):
    with open(path, "w") as f:
        f.write(f"""# bench/system_scale.py: concurrency {concurrency}, {requests} requests
seed: 7
target:
  api: chat
  model: mock-llama
  ignore_eos: true
  timeout: 120s
  endpoints: [{url}]
workload:
  kind: requests
  input_tokens: {prompt_tokens}
  output_tokens: {OUTPUT_TOKENS}
scheduler:
  kind: concurrent
  concurrency: {concurrency}
  ramp_up: 2s
warmup: 0s
limits:
  max_requests: {requests}
  duration: 300s
""")


def mock_served(url):
    """Sum of vllm:request_success_total over its finished_reason labels."""
    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        text = r.read().decode()
    total = 0
    for line in text.splitlines():
        if line.startswith("vllm:request_success_total"):
            total += int(float(line.rsplit(None, 1)[1]))
    return total


class Proc:
    """One process started here: its log, its samples, and its rusage once reaped."""

    def __init__(self, name, cmd, log_path, env=None):
        self.name = name
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env)
        self.pid = self.proc.pid
        self.idle_rss_kb = None
        self.rc = None
        self.cpu_s = None
        self.hwm_kb = 0  # VmHWM, sampled (wait4's ru_maxrss keeps the forking Python's)

    def poll(self):
        if self.rc is not None:
            return True
        pid, status, ru = os.wait4(self.pid, os.WNOHANG)
        if not pid:
            return False
        self.rc = os.waitstatus_to_exitcode(status)
        self.cpu_s = ru.ru_utime + ru.ru_stime
        self.log.close()
        return True

    def kill(self):
        if self.rc is None:
            try:
                self.proc.kill()
            except ProcessLookupError:
                pass
            self.proc.wait()
            self.rc = self.proc.returncode
            self.log.close()

    def text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")


def run_case(binary, name, concurrency, workers, requests, prompt_tokens):
    wd = sc.work_dir(f"scale-{name}")
    keys = os.path.join(wd, "keys")
    authorized = os.path.join(wd, "authorized")
    os.makedirs(keys)
    os.makedirs(authorized)
    subprocess.run([binary, "keygen", os.path.join(keys, "controller"),
                    os.path.join(keys, "worker")], check=True, capture_output=True)
    os.link(os.path.join(keys, "worker.pub"), os.path.join(authorized, "worker.pub"))
    mock = sc.Mock(binary, MOCK_ARGS, os.path.join(wd, "mock.log"))
    procs = []
    try:
        workload = os.path.join(wd, "workload.yaml")
        write_workload(workload, mock.url, concurrency, requests, prompt_tokens)
        port = free_port_pair()
        out = os.path.join(wd, "out")
        load0 = os.getloadavg()
        busy0 = sc.machine_busy_s()
        t0 = time.monotonic()
        ctl = Proc("controller", [binary, "controller", workload,
                                  "--bind", f"tcp://127.0.0.1:{port}",
                                  "--expect-workers", str(workers), "--out", out,
                                  "--key", os.path.join(keys, "controller.key"),
                                  "--authorized-keys", authorized],
                   os.path.join(wd, "controller.log"))
        procs.append(ctl)
        wprocs = []
        for i in range(workers):
            env = dict(os.environ, JOB_COMPLETION_INDEX=str(i))
            p = Proc(f"worker-{i}", [binary, "worker", "--connect", f"tcp://127.0.0.1:{port}",
                                     "--once", "--id", f"worker-{i}",
                                     "--key", os.path.join(keys, "worker.key"),
                                     "--server-key", os.path.join(keys, "controller.pub")],
                     os.path.join(wd, f"worker-{i}.log"), env)
            procs.append(p)
            wprocs.append(p)
        deadline = t0 + 240
        started = False
        while True:
            if not started and "all workers ready" in ctl.text():
                started = True
                for p in wprocs:
                    mem = sc.read_status_kb(p.pid, ("VmRSS",))
                    p.idle_rss_kb = mem.get("VmRSS")
            for p in procs:
                if p.rc is None:
                    mem = sc.read_status_kb(p.pid, ("VmHWM",))
                    p.hwm_kb = max(p.hwm_kb, mem.get("VmHWM", 0))
            done = [p.poll() for p in procs]
            if all(done):
                break
            if time.monotonic() > deadline:
                raise sc.BenchError(f"{name}: did not finish within 240 s; logs in {wd}")
            time.sleep(POLL_S)
        wall = time.monotonic() - t0
        busy = sc.machine_busy_s() - busy0
        served = mock_served(mock.url)
    except BaseException:
        for p in procs:
            p.kill()
        raise
    finally:
        mock_cpu = mock.stop()
    if ctl.rc != 0:
        raise sc.BenchError(f"{name}: the controller exited {ctl.rc}; log:\n"
                            f"{sc.tail(ctl.log_path)}")
    bad = [p for p in wprocs if p.rc != 0]
    if bad:
        raise sc.BenchError(f"{name}: {bad[0].name} exited {bad[0].rc}; log:\n"
                            f"{sc.tail(bad[0].log_path)}")
    counts = []
    for p in wprocs:
        m = re.search(r"run [0-9a-f]+ finished: (\d+) requests", p.text())
        if not m:
            raise sc.BenchError(f"{name}: {p.name} printed no 'finished: N requests' line")
        counts.append(int(m.group(1)))
    import json
    with open(os.path.join(out, "results.json")) as f:
        level = json.load(f)["levels"][0]
    ok = level.get("requests_ok")
    failed = level.get("requests_failed")
    tokens = level.get("output_tokens") or 0
    exact = sum(counts) == ok == served == requests and failed == 0
    worker_cpu = sum(p.cpu_s for p in wprocs)
    total_cpu = worker_cpu + ctl.cpu_s
    streams = concurrency / workers
    rss = [p.hwm_kb for p in wprocs]
    idle = [p.idle_rss_kb for p in wprocs if p.idle_rss_kb]
    la = os.getloadavg()
    sc.result_line(f"scale_{name}", [
        ("concurrency", concurrency),
        ("workers", workers),
        ("streams_per_worker", streams),
        ("prompt_tokens", prompt_tokens),
        ("requests", requests),
        ("per_worker", ",".join(str(c) for c in counts)),
        ("worker_sum", sum(counts)),
        ("controller_ok", ok),
        ("controller_failed", failed),
        ("mock_served", served),
        ("totals_exact", "yes" if exact else "no"),
        ("output_tokens", tokens),
        ("wall_s", wall),
        ("controller_cpu_s", ctl.cpu_s),
        ("controller_cores", ctl.cpu_s / wall),
        ("controller_cpu_share", ctl.cpu_s / total_cpu if total_cpu else None),
        ("controller_rss_mib", ctl.hwm_kb / 1024),
        ("worker_cpu_s", worker_cpu),
        ("worker_us_per_token", 1e6 * worker_cpu / tokens if tokens else None),
        ("worker_rss_mib_max", max(rss) / 1024),
        ("worker_rss_mib_mean", sum(rss) / len(rss) / 1024),
        ("worker_idle_rss_mib", sum(idle) / len(idle) / 1024 if idle else None),
        ("mock_cpu_s", mock_cpu),
        ("machine_busy_cores", busy / wall),
        ("load_before", f"{load0[0]:.2f}"),
        ("load_after", f"{la[0]:.2f}"),
    ])
    if not exact:
        raise sc.BenchError(f"{name}: totals differ: workers {counts} (sum {sum(counts)}), "
                            f"controller {ok} ok / {failed} failed, mock {served}, asked "
                            f"{requests}; outputs in {wd}")
    return {
        "streams": streams,
        "rss_kb": sum(rss) / len(rss),
        "idle_kb": sum(idle) / len(idle) if idle else None,
        "us_per_token": 1e6 * worker_cpu / tokens if tokens else None,
    }


def main():
    binary = sc.stampede_bin()
    sc.raise_nofile(20000)
    names = sys.argv[1:] or DEFAULT
    got = {}
    for name in names:
        if name not in CASES:
            raise sc.BenchError(f"unknown case '{name}' ({', '.join(CASES)})")
        got[name] = run_case(binary, name, *CASES[name])
    if "c2000long" in got and "c2000" in got:
        extra = (got["c2000long"]["rss_kb"] - got["c2000"]["rss_kb"]) / got["c2000"]["streams"]
        print(f"NOTE scale: 4,096-token prompts add {extra:.1f} KiB per stream to a worker's peak "
              f"RSS (over 32-token prompts)", flush=True)
    if "c160" in got and "c2000" in got:
        a, b = got["c160"], got["c2000"]
        per_stream_kb = (b["rss_kb"] - a["rss_kb"]) / (b["streams"] - a["streams"])
        base_kb = b["rss_kb"] - per_stream_kb * b["streams"]
        us = b["us_per_token"]
        print(f"NOTE scale: worker memory = {base_kb / 1024:.1f} MiB + {per_stream_kb:.1f} KiB per "
              f"stream (peak RSS, slope between {a['streams']:.0f} and {b['streams']:.0f} streams "
              f"per worker)", flush=True)
        for n in (250, 1000, 5000):
            mib = (base_kb + per_stream_kb * n) / 1024
            cores = n * TOKENS_PER_STREAM_S * us / 1e6
            print(f"NOTE scale: {n} streams per pod at {TOKENS_PER_STREAM_S:.0f} tokens/s each "
                  f"needs ~{mib:.0f} MiB and ~{cores:.2f} CPU ({us:.1f} CPU us per token); "
                  f"at 100 tokens/s each ~{n * 100 * us / 1e6:.2f} CPU", flush=True)
    return 0


if __name__ == "__main__":
    sc.main_guard(main)
