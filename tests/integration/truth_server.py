#!/usr/bin/env python3
"""An OpenAI-compatible chat-completions server with a known truth, for the measurement tests.

Each POST streams --tokens tokens, produced on a true per-token gap (token i is ready at
t0 + i * gap, t0 being when the headers went out), but written several SSE events per send():
the group sizes cycle through --groups (e.g. "2,3": 2 events in one send, then 3, then 2...), a
group leaving when its last token is ready. No usage block, then [DONE]. So a client that keeps
one ITL sample per event sees gaps of 0 and of k * gap; the truth is `gap` for every token.

  --words-per-event W   every event carries W words ("several tokens in one event")
  --reasoning R         the first R tokens are delta.reasoning_content, the rest delta.content
  --header-delay-ms D   wait D ms after reading the request before sending the headers
  --close               answer with Connection: close (a new connection per request)

GET /stats answers {"requests": n, "connections": distinct connections that sent a POST}.
GET /metrics is not counted: a 404, as a server without Prometheus metrics answers (the default
server_metrics: auto asks for it), or with --metrics-html a 200 HTML page that is no /metrics.
Prints "listening on 127.0.0.1:PORT" once it accepts; SIGTERM ends it.
"""
import argparse
import threading
import time

from sse_test_server import (DONE_AND_END, NOT_FOUND, SSE_HEADERS, completion_chunk,
                             each_request, json_response, serve_forever)


class Server:
    def __init__(self, args):
        self.args = args
        self.groups = [int(g) for g in args.groups.split(",")]
        self.lock = threading.Lock()
        self.requests = 0
        self.connections = 0

    def serve(self, conn):
        counted = False
        try:
            for request_line, _ in each_request(conn):
                if request_line.startswith("GET /metrics"):
                    conn.sendall(self.metrics_answer())
                    return
                if request_line.startswith("GET /stats"):
                    with self.lock:
                        stats = {"requests": self.requests, "connections": self.connections}
                    conn.sendall(json_response(stats))
                    return
                with self.lock:
                    self.requests += 1
                    if not counted:
                        self.connections += 1
                        counted = True
                self.stream(conn)
                if self.args.close:
                    return
        except OSError:
            pass
        finally:
            conn.close()

    def metrics_answer(self):
        if not self.args.metrics_html:
            return NOT_FOUND
        body = b"<!doctype html><html><body><h1>Welcome</h1></body></html>\n"
        return (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n"
                b"Connection: close\r\n\r\n%s" % (len(body), body))

    def token(self, i, last):
        words = "".join(" w%d" % (i * self.args.words_per_event + j)
                        for j in range(self.args.words_per_event))
        key = "reasoning_content" if i < self.args.reasoning else "content"
        return completion_chunk("chatcmpl-truth", "truth", {key: words}, "length" if last else None)

    def stream(self, conn):
        a = self.args
        if a.header_delay_ms:
            time.sleep(a.header_delay_ms / 1000)
        conn.sendall(SSE_HEADERS + (b"Connection: close\r\n" if a.close else b"") + b"\r\n")
        t0 = time.monotonic()
        i, g = 0, 0
        while i < a.tokens:
            k = min(self.groups[g % len(self.groups)], a.tokens - i)
            g += 1
            ready = t0 + (i + k - 1) * a.gap_ms / 1000
            wait = ready - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            data = b"".join(self.token(j, j == a.tokens - 1) for j in range(i, i + k))
            i += k
            if i == a.tokens:
                data += DONE_AND_END
            conn.sendall(data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=30)
    parser.add_argument("--gap-ms", type=float, default=20)
    parser.add_argument("--groups", default="1", help="events per send(), cycled, e.g. 2,3")
    parser.add_argument("--words-per-event", type=int, default=1)
    parser.add_argument("--reasoning", type=int, default=0)
    parser.add_argument("--header-delay-ms", type=float, default=0)
    parser.add_argument("--close", action="store_true")
    parser.add_argument("--metrics-html", action="store_true")
    serve_forever(Server(parser.parse_args()).serve)


if __name__ == "__main__":
    main()
