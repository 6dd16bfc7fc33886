"""The controller's merge rate and CPU share: `stampede run` with 4 local workers in concurrent mode
(512 sessions in flight, 2,000 output tokens each) against a fixed-mode `stampede mock` (TTFT 1 ms,
ITL 1 ms), so the workers stream as fast as this machine lets them.

The run process is the controller; the workers are its children. Each process's CPU is measured
on its own (see system_common: /proc sampling plus the run's wait4 rusage). ITL samples merged per
second = levels[0].itl_ms.count / duration_s. Also printed: ITL samples per controller CPU second
(all samples of the measured window over all of the controller's CPU, warm-up and report writing
included: a lower bound on what one controller core can merge), and the CPU split over the
steady part of the run (where the workers run at 70 % or more of their peak CPU rate).

    python3 bench/system_controller.py [WORKERS]    (default 4; STAMPEDE_BIN = the binary)"""

import os
import sys

import system_common as sc

MOCK_ARGS = ["--ttft-ms", "1", "--itl-ms", "1"]
CONFIG = "controller_4w.yaml"


def main():
    binary = sc.stampede_bin()
    sc.raise_nofile(20000)
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    wd = sc.work_dir("controller")
    mock = sc.Mock(binary, MOCK_ARGS, os.path.join(wd, "mock.log"))
    try:
        res = sc.run_stampede(binary, sc.config_path(CONFIG), os.path.join(wd, "out"), mock.url,
                              workers, timeout_s=75, log_dir=wd)
    finally:
        mock_cpu = mock.stop()
    level = res.results["levels"][0]
    duration = level.get("duration_s")
    itl_count = sc.metric(level.get("itl_ms"), "count") or 0
    rate = itl_count / duration if duration else None
    total = res.controller_cpu_s + res.worker_cpu_s
    share = res.controller_cpu_s / total if total > 0 else None

    # Steady state: the span where the workers burn at least 70 % of their peak CPU rate
    # (excludes registration, ramp-up, drain and report writing).
    steady = sc.steady_window(res.series, 0.7)
    steady_fields = []
    if steady:
        span, c, w = steady
        steady_fields = [
            ("steady_window_s", span),
            ("steady_controller_cores", c / span if span else None),
            ("steady_worker_cores", w / span if span else None),
            ("steady_controller_cpu_share", c / (c + w) if c + w > 0 else None),
        ]
    print(f"# {res.command}", flush=True)
    print(f"#   mock: {mock.command}; outputs in {wd}", flush=True)
    print(f"#   cpu: {res.cpu_parts}", flush=True)
    sc.result_line("controller", [
        ("workers", workers),
        ("itl_samples_per_s", rate),
        ("itl_samples", itl_count),
        ("itl_samples_per_controller_cpu_s",
         itl_count / res.controller_cpu_s if res.controller_cpu_s > 0 else None),
        ("output_tokens_per_s", level.get("output_tokens_per_s")),
        ("requests_ok", level.get("requests_ok")),
        ("errors", level.get("requests_failed")),
        ("controller_cpu_s", res.controller_cpu_s),
        ("controller_cpu_share", share),
        ("controller_cores", res.controller_cpu_s / res.wall_s if res.wall_s else None),
        ("worker_cpu_s", res.worker_cpu_s),
        ("worker_processes", len(res.workers)),
        ("mock_cpu_s", mock_cpu),
        *steady_fields,
        ("cpu_accounting", "exact" if res.cpu_exact else "approx"),
        ("duration_s", duration),
        ("wall_s", res.wall_s),
        *sc.load_fields(res, mock_cpu),
        ("exit", res.exit_code),
    ])
    return 0


if __name__ == "__main__":
    sc.main_guard(main)
