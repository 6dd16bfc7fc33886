"""Shared by the whole-system benchmarks (bench/system_*.py): start `stampede mock`, run
`stampede run` while sampling the CPU time and memory of the run process (the controller) and of
each worker it forks, and read OUT/results.json. Python standard library only.

CPU accounting, process by process. `stampede run` is the controller; its children (fork + exec of
`stampede worker --once`) are the workers. While the run lives, /proc/PID/stat of the run and of
every child is sampled every POLL_S (for the steady-state split, memory and pids). When the run
exits it is left a zombie for a moment (waitid WNOWAIT) and its /proc/PID/stat read once more:
utime + stime is the controller's own CPU and cutime + cstime that of every worker it reaped, both
exact; wait4's rusage (their sum) is the cross-check. A worker the run left unreaped would be in
neither figure: it is then counted with its last sampled CPU and cpu_accounting says approx."""

import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time

POLL_S = 0.05
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


class BenchError(Exception):
    """The benchmark could not run (not a slow result: that is only ever printed)."""


def stampede_bin():
    path = os.environ.get("STAMPEDE_BIN")
    if not path:
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "build", "stampede")
    if not os.access(path, os.X_OK):
        raise BenchError(f"stampede binary not found or not executable: {path} (set STAMPEDE_BIN)")
    return os.path.abspath(path)


def config_path(name):
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs", name)


def raise_nofile(want):
    """Raises RLIMIT_NOFILE (inherited by every process started from here) up to the hard limit;
    returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return soft


def work_dir(name):
    """A fresh directory for one benchmark's outputs and logs (under SYSBENCH_DIR when set)."""
    base = os.environ.get("SYSBENCH_DIR") or tempfile.gettempdir()
    os.makedirs(base, exist_ok=True)
    return tempfile.mkdtemp(prefix=f"stampede-{name}-", dir=base)


def read_stat(pid):
    """(utime, stime, cutime, cstime) in seconds from /proc/PID/stat, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode("ascii", "replace")
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # The command name may hold spaces or parentheses: fields start after the last ')'.
    rest = data[data.rindex(")") + 2:].split()
    utime, stime, cutime, cstime = (int(x) / CLK_TCK for x in rest[11:15])
    return utime, stime, cutime, cstime


def read_status_kb(pid, keys):
    """{key: kB} for lines such as VmHWM / VmRSS of /proc/PID/status; {} once it is gone."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                name, _, value = line.partition(":")
                if name in keys:
                    out[name] = int(value.split()[0])
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return {}
    return out


def children_of(pid):
    """Direct children of PID, from /proc/PID/task/*/children (needs every thread's list)."""
    kids = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return kids
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids.update(int(x) for x in f.read().split())
        except (FileNotFoundError, ProcessLookupError):
            pass
    return kids


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
    except (FileNotFoundError, ProcessLookupError):
        return []


def cpu_seconds(pid):
    st = read_stat(pid)
    return None if st is None else st[0] + st[1]


def machine_busy_s():
    """CPU seconds this machine has spent busy (all cores, everything but idle and iowait)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    # guest time is already inside user and nice
    return (sum(fields[:8]) - idle) / CLK_TCK


def count_connections_to(port):
    """Established TCP connections whose remote port is PORT (the client side of streams to a
    server on this host), from /proc/net/tcp."""
    n = 0
    want = f":{port:04X}"
    try:
        with open("/proc/net/tcp") as f:
            next(f)
            for line in f:
                parts = line.split(None, 4)
                if parts[2].endswith(want) and parts[3] == "01":
                    n += 1
    except FileNotFoundError:
        return -1
    return n


class Mock:
    """`stampede mock --port 0 ARGS` with its output in a log file; the port is read from its
    `listening on 127.0.0.1:PORT` line."""

    def __init__(self, binary, args, log_path, timeout_s=10.0):
        self.log_path = log_path
        self.log = open(log_path, "wb")
        cmd = [binary, "mock", "--port", "0", *args]
        self.command = " ".join(cmd)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        self.port = self._wait_port(timeout_s)
        self.url = f"http://127.0.0.1:{self.port}"

    def _wait_port(self, timeout_s):
        deadline = time.monotonic() + timeout_s
        pattern = re.compile(rb"listening on 127\.0\.0\.1:(\d+)")
        while time.monotonic() < deadline:
            with open(self.log_path, "rb") as f:
                m = pattern.search(f.read())
            if m:
                return int(m.group(1))
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        self.stop()
        with open(self.log_path, "rb") as f:
            tail = f.read()[-2000:].decode("utf-8", "replace")
        raise BenchError(f"`{self.command}` printed no 'listening on 127.0.0.1:PORT' line "
                         f"within {timeout_s:.0f} s (exit {self.proc.returncode}); output:\n{tail}")

    def cpu_seconds(self):
        return cpu_seconds(self.proc.pid)

    def stop(self, grace_s=5.0):
        """SIGTERM, SIGKILL after grace_s; returns the mock's CPU seconds (from its rusage)."""
        if self.proc.returncode is not None:
            return None
        self.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while True:
            pid, status, ru = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                self.proc.kill()
                pid, status, ru = os.wait4(self.proc.pid, 0)
                break
            time.sleep(0.02)
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.log.close()
        return ru.ru_utime + ru.ru_stime


class ProcSample:
    """What the sampler knows about one worker process."""

    def __init__(self, pid):
        self.pid = pid
        self.first_seen = time.monotonic()
        self.cpu = 0.0
        self.hwm_kb = 0
        self.first_rss_kb = None
        self.argv = cmdline(pid)


class RunResult:
    def __init__(self):
        self.exit_code = None
        self.timed_out = False
        self.wall_s = 0.0
        self.total_cpu_s = 0.0      # wait4 rusage: the run process plus every worker it reaped
        self.controller_cpu_s = 0.0
        self.worker_cpu_s = 0.0
        self.cpu_exact = False
        self.workers = {}           # pid -> ProcSample
        self.results = None         # OUT/results.json
        self.stdout_path = None
        self.out_dir = None
        self.series = []            # (t, controller cpu, sum of worker cpu) per sample
        self.machine_busy_s = 0.0   # every process's CPU on this machine during the run


def run_stampede(binary, config, out_dir, target, workers, timeout_s, log_dir,
                 extra_args=(), tick=None, tick_every_s=1.0):
    """Runs `stampede run CONFIG --workers N --target URL --out OUT_DIR`, sampling it; calls
    tick(result) about every tick_every_s while it runs. Raises BenchError when it could not run
    (no results.json, interrupted on timeout)."""
    res = RunResult()
    res.out_dir = out_dir
    res.stdout_path = os.path.join(log_dir, "run.stdout")
    cmd = [binary, "run", config, "--workers", str(workers), "--target", target,
           "--out", out_dir, *extra_args]
    res.command = " ".join(cmd)
    busy0 = machine_busy_s()
    with open(res.stdout_path, "wb") as log:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
    pid = proc.pid
    deadline = t0 + timeout_s
    interrupted_at = None
    last_run_stat = None
    last_children = set()
    next_tick = t0
    status = ru = final_stat = None
    try:
        while True:
            # WNOWAIT: the run stays a zombie, so its final own and children's CPU can be read.
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                final_stat = read_stat(pid)
                _, status, ru = os.wait4(pid, 0)
                break
            now = time.monotonic()
            st = read_stat(pid)
            if st is not None:
                last_run_stat = st
            kids = children_of(pid)
            last_children = kids
            for k in kids:
                s = res.workers.get(k)
                if s is None:
                    s = res.workers[k] = ProcSample(k)
                c = cpu_seconds(k)
                if c is not None:
                    s.cpu = c
                mem = read_status_kb(k, ("VmHWM", "VmRSS"))
                if mem:
                    s.hwm_kb = max(s.hwm_kb, mem.get("VmHWM", 0))
                    if s.first_rss_kb is None:
                        s.first_rss_kb = mem.get("VmRSS")
            if st is not None:
                live = sum(res.workers[k].cpu for k in kids)
                res.series.append((now - t0, st[0] + st[1], st[2] + st[3] + live))
            if tick is not None and now >= next_tick:
                tick(res)
                next_tick = now + tick_every_s
            if now > deadline:
                if interrupted_at is None:
                    # SIGINT first: the run stops its workers, drains and writes partial results.
                    res.timed_out = True
                    interrupted_at = now
                    proc.send_signal(signal.SIGINT)
                elif now > interrupted_at + 10:
                    proc.kill()
                    for k in last_children:
                        try:
                            os.kill(k, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
            time.sleep(POLL_S)
    except BaseException:
        # Interrupted ourselves (SIGTERM from `timeout`, Ctrl-C): leave no process behind.
        for victim in [pid, *last_children]:
            try:
                os.kill(victim, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.waitpid(pid, 0)
        raise
    res.wall_s = time.monotonic() - t0
    res.machine_busy_s = machine_busy_s() - busy0
    res.exit_code = os.waitstatus_to_exitcode(status)
    proc.returncode = res.exit_code
    res.total_cpu_s = ru.ru_utime + ru.ru_stime
    if final_stat is not None:
        # Read from the exited run: its own CPU, and that of every child it reaped, exactly.
        own = final_stat[0] + final_stat[1]
        reaped = final_stat[2] + final_stat[3]
    else:
        own = last_run_stat[0] + last_run_stat[1] if last_run_stat else 0.0
        reaped = last_run_stat[2] + last_run_stat[3] if last_run_stat else 0.0
    # A worker the run did not reap is in neither figure: count its last sampled CPU.
    unreaped = [k for k in last_children if k in res.workers and os.path.exists(f"/proc/{k}")]
    orphan_cpu = sum(res.workers[k].cpu for k in unreaped)
    res.worker_cpu_s = reaped + orphan_cpu
    res.controller_cpu_s = own
    res.cpu_exact = final_stat is not None and not unreaped and bool(res.workers)
    res.cpu_parts = (f"run's own {own:.3f} s + reaped children {reaped:.3f} s (wait4 total "
                     f"{res.total_cpu_s:.3f} s); {len(unreaped)} worker(s) not reaped by the run, "
                     f"{orphan_cpu:.3f} s sampled")
    results_path = os.path.join(out_dir, "results.json")
    if os.path.exists(results_path):
        with open(results_path) as f:
            res.results = json.load(f)
    if res.timed_out:
        raise BenchError(f"`{res.command}` did not finish within {timeout_s:.0f} s and was "
                         f"interrupted (exit {res.exit_code}); last output:\n{tail(res.stdout_path)}")
    if res.results is None or not res.results.get("levels"):
        raise BenchError(f"`{res.command}` exited {res.exit_code} without {results_path}; "
                         f"last output:\n{tail(res.stdout_path)}")
    return res


def tail(path, n=2000):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return "(no output)"
    return data[-n:].decode("utf-8", "replace")


def steady_window(series, fraction):
    """(span s, controller CPU s, workers CPU s) between the first and the last one-second stretch
    in which the workers' CPU rate reaches FRACTION of its peak; None when too short."""
    if len(series) < 3:
        return None
    rates = []
    j = 0
    for i, (t, _, w) in enumerate(series):
        while series[j][0] < t - 1.0:
            j += 1
        if t - series[j][0] >= 0.5:
            rates.append((i, (w - series[j][2]) / (t - series[j][0])))
    if not rates:
        return None
    peak = max(r for _, r in rates)
    busy = [i for i, r in rates if r >= fraction * peak]
    # Each rate covers the second before its sample: start one second earlier.
    last = busy[-1]
    first = busy[0]
    t_first = series[first][0] - 1.0
    start = next(k for k, s in enumerate(series) if s[0] >= t_first)
    a, b = series[start], series[last]
    if b[0] - a[0] < 1.0:
        return None
    return b[0] - a[0], b[1] - a[1], b[2] - a[2]


def metric(block, key):
    if not isinstance(block, dict):
        return None
    return block.get(key)


def fmt(value, digits=3):
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def result_line(name, fields):
    """RESULT name=... key=value ... on stdout, the format bench/run.sh readers grep for."""
    parts = [f"RESULT name={name}"] + [f"{k}={fmt(v)}" for k, v in fields]
    print(" ".join(parts), flush=True)


def _terminate(signum, frame):
    raise BenchError(f"stopped by signal {signum}")


def load_fields(res, mock_cpu_s):
    """How busy the machine was during the run, and how much of that was someone else's: this
    box is shared, so every figure above depends on it."""
    ours = res.total_cpu_s + (mock_cpu_s or 0.0)
    return [
        ("cores", os.cpu_count()),
        ("machine_busy_cores", res.machine_busy_s / res.wall_s if res.wall_s else None),
        ("other_busy_cores",
         max(0.0, res.machine_busy_s - ours) / res.wall_s if res.wall_s else None),
    ]


def main_guard(fn):
    signal.signal(signal.SIGTERM, _terminate)
    try:
        sys.exit(fn())
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr, flush=True)
        sys.exit(1)
