#!/usr/bin/env python3
"""The client loop Python LLM benchmarks use, for comparison with stampede's engine.

Modelled on vLLM's `bench serve` request function (and SGLang's bench_serving, which copies
it): one shared aiohttp ClientSession, concurrency bounded by an asyncio.Semaphore, the
response read line by line, each `data:` line decoded, timestamped and json-parsed.

It measures what bench/bench_engine.c measures for stampede, in the same way:
  - CPU per streamed token: getrusage(RUSAGE_SELF) user+sys over the measured window divided
    by the token chunks received in it;
  - the delay the client adds: time.monotonic_ns() (CLOCK_MONOTONIC) when the chunk is parsed
    minus the chunk's "sent_ns" (the stampede mock's CLOCK_MONOTONIC send time, same host).

Closed loop: `--streams` requests in flight for `--warmup` + `--seconds`. Prints one line
  RESULT name=aiohttp streams=N cpu_us_per_token=.. delay_p50_us=.. delay_p99_us=.. tokens=..
         errors=.. tokens_per_s=..
"""

import argparse
import asyncio
import json
import resource
import sys
import time

import aiohttp


class Window:
    """What happens between the end of the warm-up and the end of the run."""

    def __init__(self, start_ns, end_ns):
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.tokens = 0
        self.errors = 0
        self.delays_ns = []
        self.usage_start = None
        self.usage_end = None

    def inside(self, now_ns):
        return self.start_ns <= now_ns < self.end_ns


async def one_request(session, url, payload, window):
    """One streamed chat completion, parsed as vLLM's bench parses it."""
    generated_text = ""
    got_done = False
    try:
        async with session.post(url=url, json=payload) as response:
            if response.status != 200:
                await response.read()
                return False
            async for chunk_bytes in response.content:
                chunk_bytes = chunk_bytes.strip()
                if not chunk_bytes:
                    continue
                chunk = chunk_bytes.decode("utf-8").removeprefix("data: ")
                if chunk == "[DONE]":
                    got_done = True
                    continue
                timestamp = time.monotonic_ns()
                data = json.loads(chunk)
                choices = data.get("choices")
                if choices:
                    content = choices[0]["delta"].get("content")
                    generated_text += content or ""
                    if window.inside(timestamp):
                        window.tokens += 1
                        sent_ns = data.get("sent_ns")
                        if sent_ns is not None:
                            window.delays_ns.append(timestamp - sent_ns)
    except (aiohttp.ClientError, asyncio.TimeoutError, ValueError):
        return False
    return got_done


async def stream_slot(session, semaphore, url, payload, window):
    while time.monotonic_ns() < window.end_ns:
        async with semaphore:
            ok = await one_request(session, url, payload, window)
        if not ok and window.inside(time.monotonic_ns()):
            window.errors += 1


async def mark_window(window):
    await asyncio.sleep(max(0, (window.start_ns - time.monotonic_ns()) / 1e9))
    window.usage_start = resource.getrusage(resource.RUSAGE_SELF)
    await asyncio.sleep(max(0, (window.end_ns - time.monotonic_ns()) / 1e9))
    window.usage_end = resource.getrusage(resource.RUSAGE_SELF)


def percentile(sorted_values, p):
    if not sorted_values:
        return 0
    index = min(len(sorted_values) - 1, int(round(p / 100 * (len(sorted_values) - 1))))
    return sorted_values[index]


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--max-tokens", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--warmup", type=float, default=2)
    args = parser.parse_args()

    payload = {
        "model": "mock",
        "messages": [{"role": "user", "content": "benchmark the engine"}],
        "max_tokens": args.max_tokens,
        "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    now = time.monotonic_ns()
    window = Window(now + int(args.warmup * 1e9), now + int((args.warmup + args.seconds) * 1e9))
    semaphore = asyncio.Semaphore(args.streams)
    connector = aiohttp.TCPConnector(limit=args.streams, keepalive_timeout=60)
    timeout = aiohttp.ClientTimeout(total=6 * 60 * 60)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        marker = asyncio.create_task(mark_window(window))
        slots = [
            asyncio.create_task(stream_slot(session, semaphore, args.url, payload, window))
            for _ in range(args.streams)
        ]
        await marker
        await asyncio.gather(*slots)

    cpu_s = (window.usage_end.ru_utime + window.usage_end.ru_stime) - (
        window.usage_start.ru_utime + window.usage_start.ru_stime
    )
    delays = sorted(window.delays_ns)
    cpu_us_per_token = cpu_s * 1e6 / window.tokens if window.tokens else 0
    print(
        "aiohttp streams=%d: %.0f tokens/s, client CPU %.0f%% of a core"
        % (args.streams, window.tokens / args.seconds, cpu_s / args.seconds * 100)
    )
    print(
        "RESULT name=aiohttp streams=%d cpu_us_per_token=%.2f delay_p50_us=%.0f "
        "delay_p99_us=%.0f tokens=%d errors=%d tokens_per_s=%.0f"
        % (
            args.streams,
            cpu_us_per_token,
            percentile(delays, 50) / 1e3,
            percentile(delays, 99) / 1e3,
            window.tokens,
            window.errors,
            window.tokens / args.seconds,
        )
    )
    sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
