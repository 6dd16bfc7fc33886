#!/usr/bin/env python3
"""A TCP relay that adds a fixed one-way delay in each direction.

This kernel has no netem qdisc, so the multi-host test puts this relay in the controller's path
to give its link a real round-trip time. Every chunk read from one side is written to the other
side `delay` seconds after it arrived, in order. Usage:
    delay_relay.py --delay-ms 5 LISTEN_HOST:PORT=UPSTREAM_HOST:PORT [...]
Prints "relay ready" once every listener is bound. Stops on SIGTERM.
"""
import argparse
import asyncio
import signal
import sys


async def pump(reader, writer, delay):
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def deliver():
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if data is None:
                break
            writer.write(data)
            await writer.drain()
        try:
            writer.write_eof()
        except (OSError, RuntimeError):
            pass

    sender = asyncio.ensure_future(deliver())
    try:
        while True:
            data = await reader.read(65536)
            queue.put_nowait((loop.time() + delay, data if data else None))
            if not data:
                break
    except (ConnectionError, OSError):
        queue.put_nowait((loop.time(), None))
    try:
        await sender
    except (ConnectionError, OSError):
        pass


async def relay(listen, upstream, delay):
    async def on_client(client_reader, client_writer):
        try:
            up_reader, up_writer = await asyncio.open_connection(*upstream)
        except OSError:
            client_writer.close()
            return
        try:
            await asyncio.gather(pump(client_reader, up_writer, delay),
                                 pump(up_reader, client_writer, delay),
                                 return_exceptions=True)
        except asyncio.CancelledError:
            pass
        for w in (client_writer, up_writer):
            w.close()

    return await asyncio.start_server(on_client, listen[0], listen[1])


def parse_addr(text):
    host, _, port = text.rpartition(":")
    return host, int(port)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay-ms", type=float, required=True)
    parser.add_argument("routes", nargs="+", help="LISTEN_HOST:PORT=UPSTREAM_HOST:PORT")
    args = parser.parse_args()
    servers = []
    for route in args.routes:
        listen, upstream = route.split("=")
        servers.append(await relay(parse_addr(listen), parse_addr(upstream), args.delay_ms / 1000))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print("relay ready", flush=True)
    await stop.wait()
    for s in servers:
        s.close()


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
