#!/usr/bin/env python3
"""A chat-completions server over plain HTTP or TLS, or a forward proxy, for the network tests.

server: answers every POST with a short SSE stream (three words, usage, [DONE]) and closes the
connection (with --not-sse, a JSON body instead of the stream); with --cert/--key it speaks TLS, and with --client-ca it also requires a client
certificate signed by that CA. Each request's "METHOD TARGET" is appended to --log, a
preflight's (X-Stampede-Preflight) as "preflight METHOD TARGET".

proxy: an HTTP forward proxy of one request per connection: it logs the absolute-form target
("POST http://host:port/path") to --log, sends the request on to the origin in origin form,
and relays the answer until the origin closes.

Prints "listening on 127.0.0.1:PORT" once it accepts; SIGTERM ends it.
"""
import argparse
import socket
import ssl
import threading
import urllib.parse

from sse_test_server import DONE_AND_END, completion_chunk, serve_forever, sse_event

HEADERS = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
           b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")


def read_head(conn):
    """(head lines, body) of one request, or (None, None) when the peer closes first."""
    data = b""
    while b"\r\n\r\n" not in data:
        more = conn.recv(65536)
        if not more:
            return None, None
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    while len(body) < length:
        more = conn.recv(65536)
        if not more:
            return None, None
        body += more
    return lines, body


class Handler:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.log = open(args.log, "a", buffering=1)
        self.tls = None
        if args.cert:
            self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.tls.load_cert_chain(args.cert, args.key)
            if args.client_ca:
                self.tls.verify_mode = ssl.CERT_REQUIRED
                self.tls.load_verify_locations(args.client_ca)

    def note(self, text):
        with self.lock:
            self.log.write(text + "\n")

    def serve(self, conn):
        try:
            if self.tls:
                conn = self.tls.wrap_socket(conn, server_side=True)
            lines, _ = read_head(conn)
            if lines is None:
                return
            method, target = lines[0].split(" ")[:2]
            preflight = any(line.lower().startswith("x-stampede-preflight:") for line in lines)
            self.note("%s%s %s" % ("preflight " if preflight else "", method, target))
            if self.args.mode == "proxy":
                self.relay(conn, lines, _)
                return
            if self.args.not_sse:
                body = b'{"id":"cmpl-net","object":"chat.completion","choices":[]}'
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
                             % (len(body), body))
                return
            out = HEADERS
            for i, word in enumerate(["net", " server", " reply"]):
                out += completion_chunk("chatcmpl-net", "mock", {"content": word},
                                        "length" if i == 2 else None)
            out += sse_event({"id": "chatcmpl-net", "object": "chat.completion.chunk",
                              "choices": [], "usage": {"prompt_tokens": 1,
                                                       "completion_tokens": 3}})
            conn.sendall(out + DONE_AND_END)
        except (ssl.SSLError, OSError):
            return
        finally:
            conn.close()

    def relay(self, conn, lines, body):
        method, target, version = lines[0].split(" ")
        url = urllib.parse.urlsplit(target)
        path = url.path + ("?" + url.query if url.query else "")
        head = ["%s %s %s" % (method, path or "/", version)]
        head += [line for line in lines[1:] if not line.lower().startswith("proxy-")]
        origin = socket.create_connection((url.hostname, url.port or 80))
        try:
            origin.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
            while True:
                data = origin.recv(65536)
                if not data:
                    return
                conn.sendall(data)
        finally:
            origin.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["server", "proxy"])
    parser.add_argument("--log", required=True)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--client-ca")
    parser.add_argument("--not-sse", action="store_true")
    serve_forever(Handler(parser.parse_args()).serve)


if __name__ == "__main__":
    main()
