#!/usr/bin/env python3
"""A chat-completions server that ends each stream in a scripted way, for the reliability tests.

Request k (in arrival order) gets the mode plan[k % len(plan)]. Each mode streams a known number
of token chunks, so a client's trace tells the modes apart:

  ok             4 tokens, finish_reason, usage, [DONE], clean end of the chunked body
  finish_nodone  5 tokens, finish_reason on the last, clean end, no [DONE]
  nodone         1 token, clean end: no finish_reason, no [DONE]
  fin            2 tokens, then the server closes (FIN) with the chunked body unfinished
  midchunk       3 tokens, then half of a chunk, then FIN
  empty          reads the request and closes without a byte
  error_event    6 tokens, then an error event inside the 200 stream, then [DONE]
  ratelimited    HTTP 429 whose Retry-After is an HTTP-date 2 s ahead (RFC 9110 10.2.3)

Every response says Connection: close, so a client never reuses a connection (and never
retries a request on one). GET /counts answers {"mode": requests served} as JSON.
Prints "listening on 127.0.0.1:PORT" once it accepts; SIGTERM ends it.
"""
import argparse
import email.utils
import socket
import time
import threading

from sse_test_server import (DONE_AND_END, SSE_HEADERS, completion_chunk, json_response,
                             read_request, serve_forever, sse_event)

TOKENS = {"ok": 4, "finish_nodone": 5, "nodone": 1, "fin": 2, "midchunk": 3, "empty": 0,
          "error_event": 6, "ratelimited": 0}


def token(i, finish=None):
    return completion_chunk("chatcmpl-rel", "rel", {"content": " w%d" % i}, finish)


class Server:
    def __init__(self, plan):
        self.plan = plan
        self.lock = threading.Lock()
        self.arrivals = 0
        self.counts = {m: 0 for m in TOKENS}

    def next_mode(self):
        with self.lock:
            mode = self.plan[self.arrivals % len(self.plan)]
            self.arrivals += 1
            self.counts[mode] += 1
            return mode

    def serve(self, conn):
        try:
            request_line, _, _ = read_request(conn)
            if request_line is None:
                return
            if request_line.startswith("GET /counts"):
                with self.lock:
                    counts = dict(self.counts)
                conn.sendall(json_response(counts))
                return
            if not request_line.startswith("POST "):
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            self.stream(conn, self.next_mode())
        except OSError:
            pass
        finally:
            conn.close()

    def stream(self, conn, mode):
        if mode == "empty":
            return
        if mode == "ratelimited":
            body = b'{"object":"error","message":"rate limited","type":"RateLimitError","code":429}'
            when = email.utils.formatdate(time.time() + 2, usegmt=True).encode()
            conn.sendall(b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
                         b"Retry-After: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                         % (when, len(body), body))
            return
        conn.sendall(SSE_HEADERS + b"Connection: close\r\n\r\n")
        n = TOKENS[mode]
        finishes = mode in ("ok", "finish_nodone")
        for i in range(n):
            conn.sendall(token(i, "length" if finishes and i == n - 1 else None))
        if mode == "ok":
            conn.sendall(sse_event({"id": "chatcmpl-rel", "object": "chat.completion.chunk",
                                    "created": 0, "model": "rel", "choices": [],
                                    "usage": {"prompt_tokens": 8, "completion_tokens": n,
                                              "total_tokens": 8 + n}}))
            conn.sendall(DONE_AND_END)
        elif mode in ("finish_nodone", "nodone"):
            conn.sendall(b"0\r\n\r\n")
        elif mode == "midchunk":
            whole = token(n)
            conn.sendall(whole[: len(whole) // 2])
            conn.shutdown(socket.SHUT_WR)
        elif mode == "fin":
            conn.shutdown(socket.SHUT_WR)
        elif mode == "error_event":
            conn.sendall(sse_event({"error": {"object": "error", "message": "engine core died",
                                              "type": "InternalServerError", "param": None,
                                              "code": 500}}))
            conn.sendall(DONE_AND_END)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", required=True, help="comma-separated modes: " + ", ".join(TOKENS))
    args = parser.parse_args()
    plan = args.plan.split(",")
    unknown = [m for m in plan if m not in TOKENS]
    if unknown:
        parser.error("unknown mode(s): " + ", ".join(unknown))
    serve_forever(Server(plan).serve)


if __name__ == "__main__":
    main()
