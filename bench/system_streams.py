"""10,000 concurrent streams through the whole system: `stampede run` with one worker holding
10,000 sessions in flight (ramped up over 3 s) against a fixed-mode `stampede mock` with a modest
token rate (TTFT 100 ms, one token every 500 ms, 12 to 28 tokens: about 10 s per request). Prints
requests ok/failed (the goal is no error at all), the streams really in flight (the mock's
vllm:num_requests_running and the established connections to it, sampled every second), and the
worker's peak RSS per stream (VmHWM of the worker process / streams; also net of the worker's RSS
when first seen, before the load).

    python3 bench/system_streams.py [STREAMS]    (default 10000; STAMPEDE_BIN = the binary)"""

import os
import re
import sys
import urllib.request

import system_common as sc

MOCK_ARGS = ["--ttft-ms", "100", "--itl-ms", "500"]
CONFIG = "streams_10k.yaml"


class InFlight:
    """Peaks of the mock's running-requests gauge and of client connections to the mock."""

    def __init__(self, port):
        self.port = port
        self.url = f"http://127.0.0.1:{port}/metrics"
        self.peak_running = None
        self.peak_connections = 0
        self.pattern = re.compile(r"^vllm:num_requests_running(?:\{[^}]*\})?\s+([0-9.eE+]+)",
                                  re.M)

    def __call__(self, res):
        self.peak_connections = max(self.peak_connections, sc.count_connections_to(self.port))
        try:
            with urllib.request.urlopen(self.url, timeout=0.5) as r:
                text = r.read().decode("utf-8", "replace")
        except OSError:
            return
        values = [float(m) for m in self.pattern.findall(text)]
        if values:
            running = int(sum(values))
            self.peak_running = max(self.peak_running or 0, running)


def peak_cores(series):
    """The worker's highest CPU rate over any two-second stretch of the run."""
    best = None
    j = 0
    for t, _, w in series:
        while series[j][0] < t - 2.0:
            j += 1
        if t - series[j][0] >= 1.5:
            rate = (w - series[j][2]) / (t - series[j][0])
            best = rate if best is None else max(best, rate)
    return best


def main():
    binary = sc.stampede_bin()
    streams = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    nofile = sc.raise_nofile(streams + 4096)
    if nofile < streams + 256:
        raise sc.BenchError(f"RLIMIT_NOFILE is {nofile}: too low for {streams} streams")
    config = sc.config_path(CONFIG)
    wd = sc.work_dir("streams")
    if streams != 10000:
        # Another stream count: the same file with the concurrency replaced.
        with open(config) as f:
            text = f.read()
        config = os.path.join(wd, f"streams_{streams}.yaml")
        with open(config, "w") as f:
            f.write(re.sub(r"concurrency: \d+", f"concurrency: {streams}", text))
    mock = sc.Mock(binary, MOCK_ARGS, os.path.join(wd, "mock.log"))
    inflight = InFlight(mock.port)
    try:
        res = sc.run_stampede(binary, config, os.path.join(wd, "out"), mock.url, 1,
                              timeout_s=90, log_dir=wd, tick=inflight)
    finally:
        mock_cpu = mock.stop()
    level = res.results["levels"][0]
    errors = level.get("errors") or {}
    worker = max(res.workers.values(), key=lambda s: s.hwm_kb, default=None)
    hwm_kb = worker.hwm_kb if worker else None
    base_kb = worker.first_rss_kb if worker else None
    print(f"# {res.command}", flush=True)
    print(f"#   mock: {mock.command}; outputs in {wd}", flush=True)
    sc.result_line("streams", [
        ("streams", streams),
        ("requests_ok", level.get("requests_ok")),
        ("requests_failed", level.get("requests_failed")),
        ("error_classes", ",".join(f"{k}:{v}" for k, v in errors.items() if v) or "none"),
        ("requests_cancelled", level.get("requests_cancelled")),
        ("peak_running_at_mock", inflight.peak_running),
        ("peak_connections", inflight.peak_connections),
        ("worker_peak_rss_mb", hwm_kb / 1024 if hwm_kb else None),
        ("rss_per_stream_kb", hwm_kb / streams if hwm_kb else None),
        ("rss_per_stream_net_kb",
         (hwm_kb - base_kb) / streams if hwm_kb and base_kb is not None else None),
        ("worker_first_rss_mb", base_kb / 1024 if base_kb is not None else None),
        ("ttft_p99_ms", sc.metric(level.get("ttft_ms"), "p99")),
        ("itl_p99_ms", sc.metric(level.get("itl_ms"), "p99")),
        ("output_tokens_per_s", level.get("output_tokens_per_s")),
        ("worker_cpu_s", res.worker_cpu_s),
        ("worker_peak_cores", peak_cores(res.series)),
        ("controller_cpu_s", res.controller_cpu_s),
        ("mock_cpu_s", mock_cpu),
        ("wall_s", res.wall_s),
        *sc.load_fields(res, mock_cpu),
        ("exit", res.exit_code),
    ])
    failed = level.get("requests_failed")
    if failed:
        print(f"# NOTE: {failed} requests failed at {streams} streams (goal: none)", flush=True)
    return 0


if __name__ == "__main__":
    sc.main_guard(main)
