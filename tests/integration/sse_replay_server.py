#!/usr/bin/env python3
"""Replays recorded SSE bodies as a chat-completions server, for the stream tests.

Each POST is answered with the next file of the list (cycling, so with one request at a time the
k-th request gets file k mod n), its events written --per-write at a time, one send() each, with
--gap-ms between sends: so a client sees 1 or 3 events per read as a busy server or a proxy hands
them over. The body is the file's bytes as they are, cut after each blank line into events (a
file without [DONE] is replayed without one). Prints "listening on 127.0.0.1:PORT" once it
accepts; SIGTERM ends it. tests/realworld/check_sse.sh serves real captures through it.
"""
import argparse
import itertools
import threading
import time

from sse_test_server import SSE_HEADERS, chunk, each_request, serve_forever


def events_of(path):
    """The file's events, each with its blank line, in order (CRLF files kept as they are)."""
    data = open(path, "rb").read().decode("utf-8")
    sep = "\r\n\r\n" if "\r\n\r\n" in data else "\n\n"
    parts = data.split(sep)
    events = [p + sep for p in parts[:-1]]
    if parts[-1].strip():
        events.append(parts[-1])  # a last event without its blank line: sent as it is
    return events


class Server:
    def __init__(self, args):
        self.args = args
        self.bodies = [events_of(path) for path in args.files]
        self.order = itertools.cycle(range(len(self.bodies)))
        self.lock = threading.Lock()

    def serve(self, conn):
        try:
            for _request_line, _body in each_request(conn):
                with self.lock:
                    events = self.bodies[next(self.order)]
                self.stream(conn, events)
        except OSError:
            pass
        finally:
            conn.close()

    def stream(self, conn, events):
        conn.sendall(SSE_HEADERS + b"\r\n")
        n = self.args.per_write
        for i in range(0, len(events), n):
            time.sleep(self.args.gap_ms / 1000)
            conn.sendall(b"".join(chunk(e) for e in events[i:i + n]))
        conn.sendall(b"0\r\n\r\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+", help="SSE bodies, replayed in turn")
    parser.add_argument("--per-write", type=int, default=1, help="events per send() (1)")
    parser.add_argument("--gap-ms", type=float, default=15, help="before each send() (15)")
    args = parser.parse_args()
    serve_forever(Server(args).serve)


if __name__ == "__main__":
    main()
