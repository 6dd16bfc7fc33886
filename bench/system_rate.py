"""Rate mode through the whole system: `stampede run` (2 workers) at 1,000 and 5,000 sessions/s of
one short request each, Poisson arrivals, against a fixed-mode `stampede mock` (TTFT 1 ms, ITL
1 ms). Prints the achieved against the requested rate and the schedule lag p99 from
OUT/results.json. Figures only: it fails only when a run could not happen.

    python3 bench/system_rate.py [RATE ...]     (default: 1000 5000; STAMPEDE_BIN = the binary)"""

import os
import sys

import system_common as sc

WORKERS = 2
MOCK_ARGS = ["--ttft-ms", "1", "--itl-ms", "1"]


def run_rate(binary, rate):
    config = sc.config_path(f"rate_{rate}.yaml")
    if not os.path.exists(config):
        raise sc.BenchError(f"no config for rate {rate}: {config}")
    wd = sc.work_dir(f"rate{rate}")
    mock = sc.Mock(binary, MOCK_ARGS, os.path.join(wd, "mock.log"))
    try:
        res = sc.run_stampede(binary, config, os.path.join(wd, "out"), mock.url, WORKERS,
                              timeout_s=60, log_dir=wd)
    finally:
        mock_cpu = mock.stop()
    level = res.results["levels"][0]
    errors = level.get("errors") or {}
    lag = level.get("schedule_lag_ms")
    rate_block = level.get("rate") or {}
    requested = rate_block.get("requested_per_s", rate)
    achieved = rate_block.get("achieved_per_s")
    duration = level.get("duration_s")
    attempted = None
    if duration:
        attempted = (level.get("requests_ok", 0) + level.get("requests_failed", 0)) / duration
    print(f"# {res.command}", flush=True)
    print(f"#   mock: {mock.command}; outputs in {wd}", flush=True)
    sc.result_line("rate", [
        ("requested", requested),
        ("achieved", achieved),
        ("achieved_pct", 100.0 * achieved / requested if achieved is not None and requested
         else None),
        ("attempted_per_s", attempted),
        ("lag_p50_ms", sc.metric(lag, "p50")),
        ("lag_p99_ms", sc.metric(lag, "p99")),
        ("lag_max_ms", sc.metric(lag, "max")),
        ("lag_warning", level.get("schedule_lag_warning")),
        ("ok", level.get("requests_ok")),
        ("errors", level.get("requests_failed")),
        ("error_classes", ",".join(f"{k}:{v}" for k, v in errors.items() if v) or "none"),
        ("cancelled", level.get("requests_cancelled")),
        ("duration_s", duration),
        ("ttft_p99_ms", sc.metric(level.get("ttft_ms"), "p99")),
        ("e2e_p99_ms", sc.metric(level.get("e2e_ms"), "p99")),
        ("controller_cpu_s", res.controller_cpu_s),
        ("worker_cpu_s", res.worker_cpu_s),
        ("mock_cpu_s", mock_cpu),
        ("wall_s", res.wall_s),
        *sc.load_fields(res, mock_cpu),
        ("exit", res.exit_code),
    ])
    return 0


def main():
    binary = sc.stampede_bin()
    sc.raise_nofile(20000)
    rates = [int(a) for a in sys.argv[1:]] or [1000, 5000]
    failed = 0
    for rate in rates:
        try:
            run_rate(binary, rate)
        except sc.BenchError as e:
            print(f"error: rate {rate}: {e}", file=sys.stderr, flush=True)
            failed = 1
    return failed


if __name__ == "__main__":
    sc.main_guard(main)
