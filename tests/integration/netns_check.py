#!/usr/bin/env python3
"""Checks OUT/results.json and OUT/requests.jsonl of the namespaced run (test_netns_multihost.sh).

Every check states the expected value and its tolerance; all failures are listed, then the exit
status is 1. Field meanings: docs/metrics.md sections 8 and 9.
"""
import argparse
import json
import os
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--requests", type=int, required=True)
    p.add_argument("--output-tokens", type=int, required=True)
    p.add_argument("--ttft-ms", type=float, required=True)
    p.add_argument("--itl-ms", type=float, required=True)
    p.add_argument("--delay-ms", type=float, required=True, help="one-way delay of the control link")
    p.add_argument("--shift-ms", type=float, required=True, help="clock shift of one of the two workers")
    args = p.parse_args()
    problems = []

    def check(ok, message):
        if not ok:
            problems.append(message)
        return ok

    def num(block, key):
        v = block.get(key) if isinstance(block, dict) else None
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    with open(os.path.join(args.out, "results.json")) as f:
        res = json.load(f)
    check(res.get("schema_version") == 2, f"schema_version is {res.get('schema_version')!r}, expected 2")
    check(res.get("partial") is False, f"partial is {res.get('partial')!r}, expected false")
    levels = res.get("levels") or []
    if not check(len(levels) == 1, f"{len(levels)} levels, expected 1"):
        return report(problems)
    lv = levels[0]
    n = args.requests

    # The run itself: every request, none failed, each with exactly the tokens asked for.
    check(lv.get("requests_ok") == n, f"requests_ok is {lv.get('requests_ok')}, expected exactly {n}")
    check(lv.get("requests_failed") == 0, f"requests_failed is {lv.get('requests_failed')}, expected 0")
    errors = {k: v for k, v in (lv.get("errors") or {}).items() if v}
    check(not errors, f"errors by class {errors}, expected none")
    want_tokens = n * args.output_tokens
    check(lv.get("output_tokens") == want_tokens,
          f"output_tokens is {lv.get('output_tokens')}, expected {n} x {args.output_tokens} = {want_tokens} (ignore_eos)")

    # Per-request timings are those of the worker-mock path, where no delay was added.
    # A leak of the control-plane delay would add at least one 5 ms leg to every request, which
    # moves the median by that much; the median is also immune to a few requests stalled by a busy
    # 2-core machine, so it gets the tight bound and the mean a looser one, still under one leg.
    ttft, itl = lv.get("ttft_ms") or {}, lv.get("itl_ms") or {}
    check(ttft.get("count") == n, f"ttft_ms.count is {ttft.get('count')}, expected {n}")
    tol = max(2.0, 0.03 * args.ttft_ms)
    m = num(ttft, "p50")
    check(m is not None and abs(m - args.ttft_ms) <= tol,
          f"TTFT p50 is {m} ms, expected {args.ttft_ms} +/- {tol} ms (the mock's fixed TTFT; "
          f"{args.delay_ms} ms or more extra would mean the control-plane delay leaked into it)")
    tol = args.delay_ms - 1
    m = num(ttft, "mean")
    check(m is not None and abs(m - args.ttft_ms) <= tol,
          f"TTFT mean is {m} ms, expected {args.ttft_ms} +/- {tol} ms (less than one {args.delay_ms} ms "
          f"leg of the control link)")
    tol = 0.03 * args.itl_ms
    m = num(itl, "mean")
    want = n * (args.output_tokens - 1)
    check(itl.get("count") == want, f"itl_ms.count is {itl.get('count')}, expected {n} x {args.output_tokens - 1} = {want}")
    check(m is not None and abs(m - args.itl_ms) <= tol,
          f"ITL mean is {m} ms, expected {args.itl_ms} +/- {tol:.2f} ms (3 %)")
    print(f"netns_check: {lv.get('requests_ok')} ok, TTFT mean {num(ttft, 'mean')} p50 {num(ttft, 'p50')} "
          f"p99 {num(ttft, 'p99')} ms, "
          f"ITL mean {num(itl, 'mean')} p99 {num(itl, 'p99')} ms")

    # Clock probe over the delayed control link: RTT ~ 2 x delay, offsets right within RTT/2.
    run = res.get("run") or {}
    check(run.get("workers") == 2, f"run.workers is {run.get('workers')}, expected 2")
    clocks = run.get("clock") or []
    if check(len(clocks) == 2, f"run.clock has {len(clocks)} entries, expected one per worker (2)"):
        lo, hi = 2 * args.delay_ms - 1, 25.0
        for c in clocks:
            rtt, bound = num(c, "rtt_ms"), num(c, "error_bound_ms")
            print(f"netns_check: worker {c.get('worker')}: clock offset {num(c, 'offset_ms')} ms, "
                  f"probe RTT {rtt} ms, error bound {bound} ms")
            check(rtt is not None and lo <= rtt <= hi,
                  f"worker {c.get('worker')}: clock probe RTT {rtt} ms, expected {lo}..{hi} ms "
                  f"(the relay adds {args.delay_ms} ms each way)")
            check(rtt is not None and bound is not None and abs(bound - rtt / 2) <= 0.01,
                  f"worker {c.get('worker')}: error_bound_ms {bound} is not rtt_ms/2 = {rtt and rtt / 2}")
        # All namespaces share one CLOCK_MONOTONIC: the true offsets are 0 and the test shift.
        by_offset = sorted(clocks, key=lambda c: num(c, "offset_ms") or 0.0)
        for c, truth in zip(by_offset, (0.0, args.shift_ms)):
            off, bound = num(c, "offset_ms"), num(c, "error_bound_ms")
            check(off is not None and bound is not None and abs(off - truth) <= bound,
                  f"worker {c.get('worker')}: clock offset {off} ms, true offset {truth} ms, "
                  f"error {off is not None and abs(off - truth)} ms exceeds the error bound {bound} ms (RTT/2)")

    # The trace: every request once, both workers busy, a common start on the controller's clock.
    path = os.path.join(args.out, "requests.jsonl")
    with open(path) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    check(len(recs) == n, f"{path} has {len(recs)} records, expected {n}")
    first = {}
    count = {}
    for r in recs:
        w, send = r.get("worker"), r.get("send_us")
        count[w] = count.get(w, 0) + 1
        if isinstance(send, (int, float)):
            first[w] = min(first.get(w, send), send)
    check(len(count) == 2 and all(count.values()), f"requests per worker {count}, expected both workers to send")
    if len(first) == 2 and len(clocks) == 2:
        gap = abs(first[list(first)[0]] - first[list(first)[1]]) / 1000
        slack = sum(num(c, "error_bound_ms") or 0 for c in clocks) + 10
        print(f"netns_check: requests per worker {count}; first sends {gap:.3f} ms apart")
        check(gap <= slack,
              f"the workers' first sends are {gap:.3f} ms apart on the controller's clock, expected at most "
              f"{slack:.3f} ms (both error bounds + 10 ms scheduling slack): a synchronized start")
    return report(problems)


def report(problems):
    for msg in problems:
        print(f"netns_check: FAIL: {msg}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
