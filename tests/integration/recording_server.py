"""A chat-completions server that records the credentials each request carried, for the secrets
tests (python3 stdlib only).

    python3 recording_server.py serve SEEN [--words hello,world] [--reject-every N]

Each POST is appended to SEEN as one JSON line: its Authorization and X-Api-Key headers and
whether it is stampede's preflight (X-Stampede-Preflight). The answer streams one SSE event a
word (" hello", " world"), finish_reason "length" on the last, then usage (4 prompt tokens, one
completion token a word) and [DONE]. With --reject-every N, requests 0, N, 2N... (counted without
the preflight) get a 401 whose error message echoes both credentials instead. Prints "listening
on 127.0.0.1:PORT" once it listens; serves until killed.

    python3 recording_server.py check SEEN KEY HEADER REQUESTS FILE...

Exits non-zero unless SEEN holds one preflight and REQUESTS requests, every one carrying
"Authorization: Bearer KEY" and "X-Api-Key: HEADER", and no FILE that exists holds KEY or HEADER.
"""
import argparse
import http.server
import itertools
import json
import os
import sys
import threading

from sse_test_server import send_whole


def handler(seen, words, reject_every):
    counter = itertools.count()
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            auth, header = self.headers.get("Authorization"), self.headers.get("X-Api-Key")
            preflight = "X-Stampede-Preflight" in self.headers  # worker 0's check: not counted
            seen.write(json.dumps({"authorization": auth, "x_api_key": header,
                                   "preflight": preflight}) + "\n")
            with lock:
                n = None if preflight else next(counter)
            if reject_every and n is not None and n % reject_every == 0:
                message = "invalid credentials: %s / %s" % (auth, header)
                data = json.dumps({"error": {"message": message,
                                             "type": "invalid_request_error"}}).encode()
                send_whole(self, 401, "application/json", data)
                return
            chunks = [{"choices": [{"index": 0, "delta": {"content": " " + word},
                                    "finish_reason": "length" if i == len(words) - 1 else None}]}
                      for i, word in enumerate(words)]
            chunks.append({"choices": [], "usage": {"prompt_tokens": 4,
                                                    "completion_tokens": len(words)}})
            body = "".join("data: %s\n\n" % json.dumps(c) for c in chunks) + "data: [DONE]\n\n"
            send_whole(self, 200, "text/event-stream", body.encode())

    return Handler


def serve(args):
    seen = open(args.seen, "a", buffering=1)
    Handler = handler(seen, args.words.split(","), args.reject_every)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print("listening on 127.0.0.1:%d" % server.server_address[1], flush=True)
    server.serve_forever()


def check(args):
    rows = [json.loads(line) for line in open(args.seen)]
    preflights = sum(row["preflight"] for row in rows)  # worker 0's check before the start
    assert preflights == 1, f"server saw {preflights} preflight requests, expected 1"
    assert len(rows) == args.requests + 1, \
        f"server saw {len(rows) - 1} requests and the preflight, expected {args.requests}"
    for row in rows:
        assert row["authorization"] == "Bearer " + args.key, \
            f"Authorization was {row['authorization']!r}"
        assert row["x_api_key"] == args.header, f"X-Api-Key was {row['x_api_key']!r}"
    for path in args.files:
        if not os.path.isfile(path):
            continue
        leaks = [line.strip() for line in open(path, errors="replace")
                 if args.key in line or args.header in line]
        assert not leaks, f"a secret leaked into {os.path.basename(path)}: {leaks[:2]}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("serve")
    p.add_argument("seen")
    p.add_argument("--words", default="hello,world")
    p.add_argument("--reject-every", type=int, default=0)
    p = sub.add_parser("check")
    p.add_argument("seen")
    p.add_argument("key")
    p.add_argument("header")
    p.add_argument("requests", type=int)
    p.add_argument("files", nargs="*")
    args = parser.parse_args()
    if args.mode == "serve":
        serve(args)
    else:
        try:
            check(args)
        except AssertionError as e:
            sys.exit(f"FAIL: {e}")


if __name__ == "__main__":
    main()
