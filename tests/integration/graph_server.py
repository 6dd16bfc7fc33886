#!/usr/bin/env python3
"""A chat-completions server that records what agents send, for the session-graph tests.

Request n (counted from 0 in arrival order) is answered with the reply "rN-a rN-b rN-c rN-d",
one word per SSE event, --gap-ms apart (plus --stagger-ms x (N mod 3) before the first), then a
usage block and [DONE]. Each request is appended to --log as one JSON line once answered: {"n",
"messages", "tools" and "max_tokens" (the request's; tools null when absent), "reply", "start",
"end"} (start and end in monotonic seconds: when the request was read and when its last event
went out).

Prints "listening on 127.0.0.1:PORT" once it accepts; SIGTERM ends it.
"""
import argparse
import json
import threading
import time

from sse_test_server import (DONE_AND_END, NOT_FOUND, SSE_HEADERS, completion_chunk,
                             each_request, serve_forever, sse_event)


class Server:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.count = 0
        self.log = open(args.log, "a", buffering=1)

    def serve(self, conn):
        try:
            for request_line, body in each_request(conn):
                if not request_line.startswith("POST "):  # GET /metrics: none here, not counted
                    conn.sendall(NOT_FOUND)
                    return
                start = time.monotonic()
                with self.lock:
                    n = self.count
                    self.count += 1
                words = ["r%d-%s" % (n, s) for s in "abcd"]
                conn.sendall(SSE_HEADERS + b"\r\n")
                time.sleep(self.args.stagger_ms * (n % 3) / 1000)
                for i, word in enumerate(words):
                    time.sleep(self.args.gap_ms / 1000)
                    text = word if i == 0 else " " + word
                    conn.sendall(completion_chunk("chatcmpl-graph", "graph", {"content": text},
                                                  "length" if i == len(words) - 1 else None))
                conn.sendall(sse_event({"id": "chatcmpl-graph", "object": "chat.completion.chunk",
                                        "choices": [], "usage": {"prompt_tokens": 1,
                                                                 "completion_tokens": 4}})
                             + DONE_AND_END)
                end = time.monotonic()
                request = json.loads(body)
                with self.lock:
                    self.log.write(json.dumps({"n": n, "messages": request["messages"],
                                               "tools": request.get("tools"),
                                               "max_tokens": request.get("max_tokens"),
                                               "reply": " ".join(words), "start": start,
                                               "end": end}) + "\n")
        except (BrokenPipeError, ConnectionResetError):
            return
        finally:
            conn.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gap-ms", type=float, default=50)
    parser.add_argument("--log", required=True)
    parser.add_argument("--stagger-ms", type=float, default=0)
    serve_forever(Server(parser.parse_args()).serve)


if __name__ == "__main__":
    main()
