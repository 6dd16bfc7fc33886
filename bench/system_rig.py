"""The shared rig (`stampede serve`, docs/rig.md): how many runs it admits per second, and how long
a queued run waits for its first request once its group is free.

Admissions: a rig with no worker (nothing starts, every run stays queued) takes N `stampede
submit`s one after another, then N more from 8 at a time; each is a whole client (a process, its
keys read, a CURVE handshake, the workload sent, checked and written to the archive), so the
figure is what users see, the client's start included.

Queue wait: a rig with one worker takes RUNS short runs at once on one group; they run one after
another. For each run after the first, wait = its start instant (its first requests go then) -
the previous run's last request end (its start + its wall clock, docs/metrics.md), both from the
archive (runs.start_ns, runs.load_end_ns). The goal is <= 1 s.

    python3 bench/system_rig.py [N] [RUNS]    (default 100 and 6; STAMPEDE_BIN = the binary)"""

import os
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import system_common as sc

WORKLOAD = """target: {ignore_eos: true}
workload: {kind: requests, input_tokens: 16, output_tokens: 8}
scheduler: {kind: concurrent, concurrency: 2}
limits: {max_requests: 20}
"""


def free_ports(n):
    import socket
    for base in range(21000 + os.getpid() % 20000, 65000, n):
        socks = [socket.socket() for _ in range(n)]
        try:
            for i, s in enumerate(socks):
                s.bind(("127.0.0.1", base + i))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise sc.BenchError("no free ports")


class Rig:
    def __init__(self, binary, wd, name, mock_url):
        self.binary, self.wd = binary, wd
        self.port = free_ports(3)
        self.users = f"tcp://127.0.0.1:{self.port}"
        with open(os.path.join(wd, f"{name}.yaml"), "w") as f:
            f.write(f"groups:\n  g1: [{mock_url}]\n")
        self.log = open(os.path.join(wd, f"{name}.err"), "w")
        self.archive = os.path.join(wd, f"{name}.archive")
        self.proc = subprocess.Popen(
            [binary, "serve", "--bind", self.users, "--key", os.path.join(wd, "rig.key"),
             "--authorized-keys", os.path.join(wd, "users"), "--worker-keys",
             os.path.join(wd, "workers"), "--archive", self.archive, "--config",
             os.path.join(wd, f"{name}.yaml")],
            stdout=subprocess.DEVNULL, stderr=self.log)
        path = self.log.name
        for _ in range(100):
            if "workers on" in open(path).read():
                return
            time.sleep(0.05)
        raise sc.BenchError(f"serve did not start: {open(path).read()}")

    def submit(self, workload):
        out = subprocess.run(
            [self.binary, "submit", workload, "--to", self.users, "--key",
             os.path.join(self.wd, "alice.key"), "--server-key", os.path.join(self.wd, "rig.pub")],
            capture_output=True, text=True, timeout=30)
        if out.returncode != 0:
            raise sc.BenchError(f"submit failed: {out.stderr}")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


def admissions(binary, wd, mock_url, n):
    rig = Rig(binary, wd, "admit", mock_url)
    workload = os.path.join(wd, "w.yaml")
    try:
        t = time.monotonic()
        for _ in range(n):
            rig.submit(workload)
        sequential = n / (time.monotonic() - t)
        t = time.monotonic()
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda _: rig.submit(workload), range(n)))
        parallel = n / (time.monotonic() - t)
        queued = sqlite3.connect(os.path.join(rig.archive, "rig.db")).execute(
            "select count(*) from runs where state = 'queued'").fetchone()[0]
    finally:
        rig.stop()
    if queued != 2 * n:
        raise sc.BenchError(f"{queued} runs queued of {2 * n} submitted")
    print(f"RESULT name=rig_admissions submits={2 * n} sequential_per_s={sequential:.1f} "
          f"parallel8_per_s={parallel:.1f}")


def queue_wait(binary, wd, mock_url, runs):
    rig = Rig(binary, wd, "wait", mock_url)
    worker = subprocess.Popen(
        [binary, "worker", "--connect", f"tcp://127.0.0.1:{rig.port + 1}", "--key",
         os.path.join(wd, "w1.key"), "--server-key", os.path.join(wd, "rig.pub"), "--id", "w1"],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(wd, "w1.err"), "w"))
    db = os.path.join(rig.archive, "rig.db")
    try:
        for _ in range(100):
            if "registered" in open(rig.log.name).read():
                break
            time.sleep(0.05)
        for _ in range(runs):
            rig.submit(os.path.join(wd, "w.yaml"))
        deadline = time.monotonic() + 30 + 10 * runs
        while time.monotonic() < deadline:
            done = sqlite3.connect(db).execute(
                "select count(*) from runs where state not in ('queued', 'running')").fetchone()[0]
            if done == runs:
                break
            time.sleep(0.2)
        rows = sqlite3.connect(db).execute(
            "select id, state, start_ns, load_end_ns from runs order by id").fetchall()
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        rig.stop()
    if len(rows) != runs or any(r[1] != "done" or not r[2] or not r[3] for r in rows):
        raise sc.BenchError(f"the runs did not all finish: {rows}")
    waits = sorted((rows[i][2] - rows[i - 1][3]) / 1e6 for i in range(1, runs))
    print(f"RESULT name=rig_queue_wait runs={runs} wait_p50_ms={waits[len(waits) // 2]:.0f} "
          f"wait_max_ms={waits[-1]:.0f} wait_min_ms={waits[0]:.0f} goal_ms=1000")


def main():
    binary = sc.stampede_bin()
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    wd = sc.work_dir("rig")
    subprocess.run([binary, "keygen", "rig", "alice", "w1"], cwd=wd, check=True,
                   stdout=subprocess.DEVNULL)
    for d, key in (("users", "alice.pub"), ("workers", "w1.pub")):
        os.makedirs(os.path.join(wd, d), exist_ok=True)
        os.replace(os.path.join(wd, key), os.path.join(wd, d, key))
    with open(os.path.join(wd, "w.yaml"), "w") as f:
        f.write(WORKLOAD)
    mock = sc.Mock(binary, ["--ttft-ms", "5", "--itl-ms", "1"], os.path.join(wd, "mock.log"))
    try:
        admissions(binary, wd, mock.url, n)
        queue_wait(binary, wd, mock.url, runs)
    finally:
        mock.stop()


if __name__ == "__main__":
    try:
        main()
    except sc.BenchError as e:
        print(f"rig bench could not run: {e}", file=sys.stderr)
        sys.exit(1)
