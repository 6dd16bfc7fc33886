#!/usr/bin/env python3
"""Small network probes for the multi-host namespace test (test_netns_multihost.sh).

    netns_probe.py echo HOST:PORT...       TCP echo server on each address; prints "echo ready",
                                           stops on SIGTERM
    netns_probe.py rtt HOST:PORT [--count N]
                                           N one-byte round trips on one connection; prints
                                           "rtt_ms min=X median=Y max=Z" (connect time excluded)
    netns_probe.py http URL                GET URL; exit 0 and "http 200 N bytes" on status 200

They check the namespaces' wiring before the real run, so that a failure there names the broken
link (bridge, relay delay) instead of surfacing as a vague controller or worker error. Every
operation is bounded by a socket timeout; errors go to stderr with a non-zero exit.
"""
import argparse
import signal
import socket
import statistics
import sys
import threading
import time
import urllib.request


def parse_addr(text):
    host, _, port = text.rpartition(":")
    return host, int(port)


def serve_echo(addrs):
    servers = [socket.create_server(addr) for addr in addrs]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    def handle(conn):
        with conn:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                conn.sendall(data)

    def accept(server):
        while True:
            conn, _ = server.accept()
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    for server in servers:
        threading.Thread(target=accept, args=(server,), daemon=True).start()
    print("echo ready", flush=True)
    signal.pause()


def measure_rtt(addr, count):
    with socket.create_connection(addr, timeout=5) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        samples = []
        for _ in range(count):
            t0 = time.monotonic()
            s.sendall(b"x")
            if s.recv(1) != b"x":
                print(f"rtt: {addr[0]}:{addr[1]} closed the connection or echoed the wrong byte",
                      file=sys.stderr)
                return 1
            samples.append((time.monotonic() - t0) * 1000)
    print(f"rtt_ms min={min(samples):.3f} median={statistics.median(samples):.3f} "
          f"max={max(samples):.3f}", flush=True)
    return 0


def http_get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        body = r.read()
        print(f"http {r.status} {len(body)} bytes", flush=True)
        return 0 if r.status == 200 else 1


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("echo")
    p.add_argument("addr", nargs="+")
    p = sub.add_parser("rtt")
    p.add_argument("addr")
    p.add_argument("--count", type=int, default=20)
    p = sub.add_parser("http")
    p.add_argument("url")
    args = parser.parse_args()
    try:
        if args.cmd == "echo":
            serve_echo([parse_addr(a) for a in args.addr])
        elif args.cmd == "rtt":
            return measure_rtt(parse_addr(args.addr), args.count)
        else:
            return http_get(args.url)
    except OSError as e:
        print(f"{args.cmd} {getattr(args, 'addr', getattr(args, 'url', ''))}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
